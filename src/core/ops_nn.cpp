// STUB: replaced by the family owner.
#include "core/checks.h"

namespace wick {

Tensor nn::softmax_last_dim(const Tensor& x) { throw_error(ErrorKind::InvalidArgument, "softmax_last_dim", "not implemented yet"); }
Tensor nn::log_softmax_last_dim(const Tensor& x) { throw_error(ErrorKind::InvalidArgument, "log_softmax_last_dim", "not implemented yet"); }
Tensor nn::rms_norm(const Tensor& x, const Tensor& alpha, float eps) { throw_error(ErrorKind::InvalidArgument, "rms_norm", "not implemented yet"); }
Tensor nn::layer_norm(const Tensor& x, const Tensor& alpha, const Tensor& beta, float eps) { throw_error(ErrorKind::InvalidArgument, "layer_norm", "not implemented yet"); }
Tensor nn::rope(const Tensor& x, const Tensor& cos, const Tensor& sin) { throw_error(ErrorKind::InvalidArgument, "rope", "not implemented yet"); }
Tensor nn::rope_i(const Tensor& x, const Tensor& cos, const Tensor& sin) { throw_error(ErrorKind::InvalidArgument, "rope_i", "not implemented yet"); }
Tensor nn::rope_thd(const Tensor& x, const Tensor& cos, const Tensor& sin) { throw_error(ErrorKind::InvalidArgument, "rope_thd", "not implemented yet"); }

}  // namespace wick
