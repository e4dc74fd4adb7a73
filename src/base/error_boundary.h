// The library's exception boundary: every exception that leaves wick is a wick::Error.
// Code that calls into third-party libraries (nlohmann-json, the standard library's
// allocating containers) wraps its public entry points in guarded(); an exception of
// another type is translated with its original message kept (std::bad_alloc becomes
// OutOfMemory, anything else `kind`).
#pragma once

#include <string_view>

#include "wick/error.h"

namespace wick {

// Inside a catch block: rethrows the current exception as a wick::Error of `kind`
// naming op (an Error passes through unchanged).
[[noreturn]] void rethrow_as_error(std::string_view op, ErrorKind kind);

template <class F>
decltype(auto) guarded(std::string_view op, ErrorKind kind, F&& f) {
  try {
    return f();
  } catch (...) {
    rethrow_as_error(op, kind);
  }
}

}  // namespace wick
