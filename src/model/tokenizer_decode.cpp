// Token ids to text: each token's piece (llama.cpp's token_to_piece), the sequence
// with llama.cpp's detokenize rules, and the streaming TokenDecoder.
#include <fmt/format.h>

#include "model/tokenizer_impl.h"

namespace wick {
namespace {

// The byte of a `<0xNN>` token (strtol over the two characters after "<0x").
uint8_t byte_of(const std::string& text) {
  const std::string hex = text.size() > 3 ? text.substr(3, 2) : std::string();
  return uint8_t(std::strtol(hex.c_str(), nullptr, 16));
}

// A byte-level BPE token's text back to bytes: every code point is one byte of GPT-2's
// alphabet; one outside it is written out as llama.cpp does.
std::string byte_level_decode(const std::string& text) {
  const std::string cps = tok::sanitize_utf8(text);
  std::string out;
  for (size_t i = 0; i < cps.size();) {
    const size_t n = tok::utf8_len(cps[i]);
    const std::string_view cp(cps.data() + i, n);
    const int b = tok::unicode_to_byte(cp);
    if (b >= 0) {
      out += char(b);
    } else {
      out += "[UNK_BYTE_0x";
      for (char c : cp) out += fmt::format("{:02x}", uint8_t(c));
      out += text + "]";
    }
    i += n;
  }
  return out;
}

}  // namespace

std::string Tokenizer::Impl::piece_uncached(int32_t id) const {
  const Token& t = tokens[size_t(id)];
  if (t.attr & (tok::kAttrControl | tok::kAttrUnknown | tok::kAttrUserDefined)) return t.text;
  if (t.attr & tok::kAttrNormal) {
    if (model == Model::BytePairEncoding) return byte_level_decode(t.text);
    std::string out;
    for (size_t i = 0; i < t.text.size(); ++i) {
      if (t.text.compare(i, 3, "\xE2\x96\x81") == 0) {
        out += ' ';
        i += 2;
      } else {
        out += t.text[i];
      }
    }
    return out;
  }
  if (t.attr & tok::kAttrByte) return std::string(1, char(byte_of(t.text)));
  return {};  // unused / undefined tokens have no text
}

std::string Tokenizer::Impl::detokenize(const std::vector<int32_t>& ids, bool special) const {
  std::string text;
  bool remove_space = add_space_prefix;  // the space the encoder put before the text
  for (int32_t id : ids) {
    check_id(id);
    const Token& t = tokens[size_t(id)];
    std::string_view piece = pieces[size_t(id)];
    if (!special && (t.attr & (tok::kAttrControl | tok::kAttrUnknown))) piece = {};
    if (remove_space && !piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
    remove_space = false;
    text += piece;
  }
  if (!clean_spaces || text.empty()) return text;

  // llama.cpp's clean-up, three in-place passes over the bytes.
  std::string s = std::move(text);
  size_t total = s.size();
  // 1. " ?", " !", " .", " ," lose the space
  size_t w = 1;
  for (size_t i = 1; i < total; ++i) {
    const char x = s[i];
    if (s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) --w;
    s[w++] = x;
  }
  total = w;
  // 2. " ' " loses both spaces
  w = 1;
  for (size_t i = 1; i < total; ++i) {
    const char x = s[i];
    if (x == '\'' && i + 1 < total && s[i - 1] == ' ' && s[i + 1] == ' ') {
      --w;
      s[++i] = '\0';  // the next space is skipped (and no longer reads as a space)
    }
    s[w++] = x;
  }
  total = w;
  // 3. " 's", " 'm", " 're", " 've" lose the space
  w = 1;
  for (size_t i = 1; i < total; ++i) {
    const char x = s[i];
    if (s[i - 1] == ' ' && x == '\'' && i + 1 < total) {
      const char x1 = s[i + 1];
      if (x1 == 's' || x1 == 'm') {
        --w;
      } else if (x1 != 't' && x1 != 'd' && i + 2 < total) {
        const char x2 = s[i + 2];
        if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) --w;
      }
    }
    s[w++] = x;
  }
  s.resize(w);
  return s;
}

// ---- TokenDecoder ---------------------------------------------------------------------

namespace {

// Length of the well-formed UTF-8 sequence at s[0..n): > 0 complete, 0 a valid but
// unfinished prefix, -1 not well-formed (the first byte alone is to be replaced).
int utf8_sequence(const uint8_t* s, size_t n) {
  const uint8_t b = s[0];
  if (b < 0x80) return 1;
  int len;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b >= 0xC2 && b <= 0xDF) {
    len = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    len = 3;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;  // no surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return -1;
  }
  for (int k = 1; k < len; ++k) {
    if (size_t(k) >= n) return 0;
    const uint8_t lo_k = k == 1 ? lo : 0x80, hi_k = k == 1 ? hi : 0xBF;
    if (s[k] < lo_k || s[k] > hi_k) return -1;
  }
  return len;
}

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

}  // namespace

TokenDecoder::TokenDecoder(Tokenizer tokenizer, bool special)
    : tokenizer_(std::move(tokenizer)), special_(special) {}

std::string TokenDecoder::push(int32_t id) {
  pending_ += tokenizer_.token_to_piece(id, special_);
  std::string out;
  const auto* s = reinterpret_cast<const uint8_t*>(pending_.data());
  size_t i = 0;
  while (i < pending_.size()) {
    const int len = utf8_sequence(s + i, pending_.size() - i);
    if (len == 0) break;  // unfinished: wait for the next token
    if (len < 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(pending_, i, size_t(len));
      i += size_t(len);
    }
  }
  pending_.erase(0, i);
  return out;
}

std::string TokenDecoder::flush() {
  std::string out = pending_.empty() ? std::string() : std::string(kReplacement);
  pending_.clear();
  return out;
}

}  // namespace wick
