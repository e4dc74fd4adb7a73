// The error assertion shared by the tests: an op's bad input throws wick::Error of the
// expected kind, and its message names what it must (the op, shapes, dtypes, ...).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "wick/error.h"

namespace wick::test {

// Runs f, expecting wick::Error of `kind` whose message contains every string of `parts`.
template <class F>
void expect_error(F&& f, ErrorKind kind, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no error thrown; expected " << error_kind_name(kind);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
  }
}

}  // namespace wick::test
