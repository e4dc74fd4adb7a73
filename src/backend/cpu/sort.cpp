// STUB: replaced by the family owner.
#include "backend/cpu/cpu_storage.h"

namespace wick {

StoragePtr CpuStorage::argsort(const Layout& l, bool ascending) const { throw_error(ErrorKind::InvalidArgument, "argsort", "not implemented yet"); }

}  // namespace wick
