// wick::Error: the one exception type of the library. Library code never aborts
// and never prints; it throws an Error whose message starts with the op in
// brackets and names the shapes and dtypes involved:
//   [matmul] lhs [2,3] rhs [4,5]: inner dims differ
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace wick {

enum class ErrorKind {
  ShapeMismatch,
  DTypeMismatch,
  DeviceMismatch,
  DimOutOfRange,
  IndexOutOfRange,
  UnsupportedDType,
  OutOfMemory,
  GpuRuntime,
  Io,
  Format,
  InvalidArgument,  // a malformed call that is none of the above (bad geometry, empty tensor)
};

std::string_view error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

// Builds "[op] message" and throws it with the given kind.
[[noreturn]] void throw_error(ErrorKind kind, std::string_view op, const std::string& message);

}  // namespace wick
