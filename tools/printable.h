// Text from a model file, made safe to print on a terminal: control characters (C0,
// DEL, C1) and bytes that are not UTF-8 are written as \xNN escapes, so a tensor name or
// a metadata string cannot move the cursor, clear the screen or retitle the terminal.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace wick::cli {

inline std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = uint8_t(s[i]);
    // One UTF-8 sequence: its length from the lead byte, then continuation bytes, no
    // overlong forms, no surrogates, nothing above U+10FFFF.
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      const auto b = uint8_t(s[i + k]);
      ok = (b & 0xc0) == 0x80;
      cp = (cp << 6) | (b & 0x3f);
    }
    static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= kMin[len] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
    if (!ok) len = 1;
    if (!ok || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) {
      for (size_t k = 0; k < len; ++k) out += fmt::format("\\x{:02x}", uint8_t(s[i + k]));
    } else {
      out.append(s.substr(i, len));
    }
    i += len;
  }
  return out;
}

}  // namespace wick::cli
