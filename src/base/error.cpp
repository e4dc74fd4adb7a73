#include "wick/error.h"

#include <fmt/format.h>

#include <new>

#include "base/dispatch.h"
#include "base/error_boundary.h"

namespace wick {

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::ShapeMismatch: return "shape mismatch";
    case ErrorKind::DTypeMismatch: return "dtype mismatch";
    case ErrorKind::DeviceMismatch: return "device mismatch";
    case ErrorKind::DimOutOfRange: return "dim out of range";
    case ErrorKind::IndexOutOfRange: return "index out of range";
    case ErrorKind::UnsupportedDType: return "unsupported dtype";
    case ErrorKind::OutOfMemory: return "out of memory";
    case ErrorKind::GpuRuntime: return "GPU runtime";
    case ErrorKind::Io: return "I/O";
    case ErrorKind::Format: return "format";
    case ErrorKind::InvalidArgument: return "invalid argument";
  }
  return "unknown";
}

void throw_error(ErrorKind kind, std::string_view op, const std::string& message) {
  throw Error(kind, fmt::format("[{}] {}", op, message));
}

void rethrow_as_error(std::string_view op, ErrorKind kind) {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc& e) {
    throw_error(ErrorKind::OutOfMemory, op, fmt::format("out of host memory ({})", e.what()));
  } catch (const std::exception& e) {
    throw_error(kind, op, e.what());
  } catch (...) {
    throw_error(kind, op, "an exception of unknown type");
  }
}

void throw_unsupported_dtype(const char* op, DType dt) {
  throw_error(ErrorKind::UnsupportedDType, op, fmt::format("dtype {} is not supported", dtype_name(dt)));
}

}  // namespace wick
