// The byte-level BPE pre-tokenizers: the text is split into words by a list of Unicode
// regexes (PCRE2, UTF + UCP), each regex splitting the pieces the previous one left
// (a match and the text between matches each become a piece), as llama.cpp's
// unicode_regex_split does. Then every byte of a word maps to GPT-2's printable code
// point (bytes_to_unicode) before the merges run.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wick::tok {

// What `tokenizer.ggml.pre` selects besides the regexes (llama.cpp's flags per name).
struct PreTokenizerSpec {
  std::string_view name;
  int regex_set = 0;           // index into the regex sets of pretokenize.cpp
  bool clean_spaces = true;    // decode drops spaces before punctuation / contractions
  bool ignore_merges = false;  // a word that is a whole token is not merged
  bool add_bos = false;        // default of add_bos_token (the file's key overrides it)
};

// The spec for a `tokenizer.ggml.pre` name; nullptr when unsupported.
const PreTokenizerSpec* find_pre_tokenizer(std::string_view name);
// The supported names, comma-separated (for error messages).
std::string supported_pre_tokenizers();

class PreTokenizer {
 public:
  // Compiles the regexes of spec.regex_set.
  explicit PreTokenizer(const PreTokenizerSpec& spec);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // The words of `text`, which must be valid UTF-8 (see sanitize_utf8).
  std::vector<std::string> split(std::string_view text) const;

 private:
  struct Regex;
  std::vector<std::unique_ptr<Regex>> regexes_;
};

// `text` decoded and re-encoded as llama.cpp's unicode_cpts_from_utf8 reads it: a byte
// that does not start a well-formed sequence becomes U+FFFD, an overlong form is
// re-encoded in its short form. Surrogates and code points above U+10FFFF (which
// llama.cpp keeps, or throws on) become U+FFFD too, so the result is valid UTF-8.
std::string sanitize_utf8(std::string_view text);

// GPT-2's byte-to-code-point table, each entry as UTF-8.
const std::array<std::string, 256>& byte_to_unicode();
// The byte a byte-level code point (given as UTF-8) stands for; -1 if none.
int unicode_to_byte(std::string_view utf8);

// Length of the UTF-8 sequence a lead byte announces (1 for continuation / invalid
// bytes), as llama.cpp's unicode_len_utf8.
inline size_t utf8_len(char c) {
  static constexpr uint8_t lookup[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return lookup[static_cast<uint8_t>(c) >> 4];
}

// Appends the UTF-8 encoding of code point `cp` (at most U+10FFFF).
void append_utf8(std::string& out, uint32_t cp);

}  // namespace wick::tok
