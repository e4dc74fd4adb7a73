// Pre-tokenizer regexes and the split they drive. The regexes are llama.cpp's
// (src/llama-vocab.cpp, llm_tokenizer_bpe), with the case-insensitive contractions
// (?i:'s|...) written as ASCII classes ('[sS]|...) exactly as llama.cpp passes them,
// so that no non-ASCII letter folds onto an ASCII one.
#include "model/pretokenize.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fmt/format.h>
#include <pcre2.h>

#include "wick/error.h"

namespace wick::tok {
namespace {

// GPT-2: contractions, letters, numbers, other symbols (each with an optional leading
// space), whitespace not followed by a non-space.
constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
// Llama 3: contractions in either case, a letter run with one optional non-letter
// prefix, numbers in groups of up to three, symbols with trailing newlines, newlines.
constexpr std::string_view kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen 2: Llama 3's with single digits.
constexpr std::string_view kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

enum RegexSet { kSetDefault, kSetLlama3, kSetGpt2, kSetQwen2, kSetStarcoder, kSetCount };

const std::vector<std::string_view>& regex_set(int set) {
  static const std::array<std::vector<std::string_view>, kSetCount> sets = {{
      // default: punctuation runs, GPT-2, digit runs, then triples of ASCII digits
      {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", R"([0-9][0-9][0-9])"},
      {kLlama3},
      {kGpt2},
      {kQwen2},
      // StarCoder / SmolLM: every digit alone, then GPT-2
      {R"(\p{N})", kGpt2},
  }};
  return sets.at(size_t(set));
}

// The names llama.cpp accepts for these regex sets, with its flags for each.
constexpr PreTokenizerSpec kSpecs[] = {
    {"default", kSetDefault, true, false, false},
    {"llama3", kSetLlama3, true, true, true},
    {"llama-v3", kSetLlama3, true, true, true},
    {"llama-bpe", kSetLlama3, true, true, true},
    {"falcon3", kSetLlama3, true, true, true},
    {"falcon-h1", kSetLlama3, true, true, true},
    {"pixtral", kSetLlama3, true, true, true},
    {"midm-2.0", kSetLlama3, true, true, true},
    {"lfm2", kSetLlama3, true, true, true},
    {"dbrx", kSetLlama3, true, false, false},
    {"smaug-bpe", kSetLlama3, true, false, false},
    {"gpt-2", kSetGpt2, true, false, false},
    {"phi-2", kSetGpt2, true, false, false},
    {"gigachat", kSetGpt2, true, false, false},
    {"a.x-4.0", kSetGpt2, true, false, false},
    {"mellum", kSetGpt2, true, false, false},
    {"mpt", kSetGpt2, true, false, false},
    {"olmo", kSetGpt2, true, false, false},
    {"exaone4", kSetGpt2, true, false, false},
    {"trillion", kSetGpt2, false, false, false},
    {"granite-docling", kSetGpt2, false, false, false},
    {"qwen2", kSetQwen2, false, false, false},
    {"deepseek-r1-qwen", kSetQwen2, false, false, false},
    {"kormo", kSetQwen2, false, false, false},
    {"f2llmv2", kSetQwen2, false, false, false},
    {"hunyuan", kSetQwen2, false, false, false},
    {"stablelm2", kSetQwen2, true, false, false},
    {"megrez", kSetQwen2, true, false, false},
    {"starcoder", kSetStarcoder, true, false, false},
    {"refact", kSetStarcoder, true, false, false},
    {"codeshell", kSetStarcoder, true, false, false},
    {"exaone", kSetStarcoder, true, false, false},
    {"minerva-7b", kSetStarcoder, true, false, false},
    {"mellum2", kSetStarcoder, true, false, false},
    {"command-r", kSetStarcoder, false, false, false},
    {"smollm", kSetStarcoder, false, false, false},
};

}  // namespace

const PreTokenizerSpec* find_pre_tokenizer(std::string_view name) {
  for (const auto& s : kSpecs)
    if (s.name == name) return &s;
  return nullptr;
}

std::string supported_pre_tokenizers() {
  std::string out;
  for (const auto& s : kSpecs) {
    if (!out.empty()) out += ", ";
    out += s.name;
  }
  return out;
}

// ---- the split ----------------------------------------------------------------------

struct PreTokenizer::Regex {
  pcre2_code* code = nullptr;
  ~Regex() { pcre2_code_free(code); }
};

PreTokenizer::PreTokenizer(const PreTokenizerSpec& spec) {
  for (std::string_view pattern : regex_set(spec.regex_set)) {
    int err = 0;
    PCRE2_SIZE offset = 0;
    auto re = std::make_unique<Regex>();
    re->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                             PCRE2_UTF | PCRE2_UCP, &err, &offset, nullptr);
    if (!re->code) {
      std::array<PCRE2_UCHAR, 256> msg{};
      pcre2_get_error_message(err, msg.data(), msg.size());
      throw_error(ErrorKind::InvalidArgument, "tokenizer",
                  fmt::format("pre-tokenizer '{}': regex /{}/ does not compile at offset {}: {}", spec.name,
                              pattern, offset, reinterpret_cast<const char*>(msg.data())));
    }
    // JIT when the platform has it; pcre2_match falls back to the interpreter otherwise.
    pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE);
    regexes_.push_back(std::move(re));
  }
}

PreTokenizer::~PreTokenizer() = default;

std::vector<std::string> PreTokenizer::split(std::string_view text) const {
  // Pieces as [begin, end) byte offsets into `text`.
  std::vector<std::pair<size_t, size_t>> pieces;
  if (!text.empty()) pieces.emplace_back(0, text.size());
  std::vector<std::pair<size_t, size_t>> next;
  for (const auto& re : regexes_) {
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
        pcre2_match_data_create_from_pattern(re->code, nullptr), &pcre2_match_data_free);
    next.clear();
    for (auto [begin, end] : pieces) {
      // The piece alone is the subject: lookaheads stop at its end, as in llama.cpp.
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data() + begin);
      const size_t len = end - begin;
      size_t pos = 0;
      while (pos < len) {
        const int rc = pcre2_match(re->code, subject, len, pos, PCRE2_NO_UTF_CHECK, md.get(), nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
          std::array<PCRE2_UCHAR, 256> msg{};
          pcre2_get_error_message(rc, msg.data(), msg.size());
          throw_error(ErrorKind::InvalidArgument, "tokenizer",
                      fmt::format("pre-tokenizer regex failed on a {}-byte piece: {}", len,
                                  reinterpret_cast<const char*>(msg.data())));
        }
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
        const size_t m0 = ov[0], m1 = ov[1];
        if (m1 == m0) break;  // none of the regexes matches empty text; stop rather than loop
        if (m0 > pos) next.emplace_back(begin + pos, begin + m0);
        next.emplace_back(begin + m0, begin + m1);
        pos = m1;
      }
      if (pos < len) next.emplace_back(begin + pos, end);
    }
    pieces.swap(next);
  }
  std::vector<std::string> words;
  words.reserve(pieces.size());
  for (auto [b, e] : pieces) words.emplace_back(text.substr(b, e - b));
  return words;
}

// ---- UTF-8 and the byte-level alphabet -----------------------------------------------

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

std::string sanitize_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  auto cont = [&](size_t i) { return i < n && (s[i] & 0xC0) == 0x80; };
  size_t i = 0;
  while (i < n) {
    const uint8_t b = s[i];
    uint32_t cp = 0xFFFD;
    size_t len = 1;
    if (b < 0x80) {
      cp = b;
    } else if ((b & 0x40) == 0) {
      // a continuation byte where a character should start
    } else if ((b & 0x20) == 0) {
      if (cont(i + 1)) cp = (uint32_t(b & 0x1F) << 6) | (s[i + 1] & 0x3F), len = 2;
    } else if ((b & 0x10) == 0) {
      if (cont(i + 1) && cont(i + 2))
        cp = (uint32_t(b & 0x0F) << 12) | (uint32_t(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F), len = 3;
    } else if ((b & 0x08) == 0) {
      if (cont(i + 1) && cont(i + 2) && cont(i + 3))
        cp = (uint32_t(b & 0x07) << 18) | (uint32_t(s[i + 1] & 0x3F) << 12) |
             (uint32_t(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F),
        len = 4;
    }
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = 0xFFFD;
    append_utf8(out, cp);
    i += len;
  }
  return out;
}

namespace {

// bytes_to_unicode: printable Latin-1 bytes map to themselves, the other 68 bytes to
// U+0100 onwards in byte order.
std::array<uint32_t, 256> byte_code_points() {
  std::array<uint32_t, 256> cps{};
  std::array<bool, 256> direct{};
  for (int b = 0x21; b <= 0x7E; ++b) direct[b] = true;
  for (int b = 0xA1; b <= 0xAC; ++b) direct[b] = true;
  for (int b = 0xAE; b <= 0xFF; ++b) direct[b] = true;
  uint32_t next = 256;
  for (int b = 0; b < 256; ++b) cps[b] = direct[b] ? uint32_t(b) : next++;
  return cps;
}

}  // namespace

const std::array<std::string, 256>& byte_to_unicode() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    const auto cps = byte_code_points();
    for (int b = 0; b < 256; ++b) append_utf8(t[b], cps[b]);
    return t;
  }();
  return table;
}

int unicode_to_byte(std::string_view utf8) {
  // Every code point of the alphabet is below U+0144: a 1- or 2-byte sequence.
  static const std::array<int16_t, 0x200> inverse = [] {
    std::array<int16_t, 0x200> inv;
    inv.fill(-1);
    const auto cps = byte_code_points();
    for (int b = 0; b < 256; ++b) inv[cps[b]] = int16_t(b);
    return inv;
  }();
  const auto* s = reinterpret_cast<const uint8_t*>(utf8.data());
  uint32_t cp = 0;
  if (utf8.size() == 1 && s[0] < 0x80) {
    cp = s[0];
  } else if (utf8.size() == 2 && (s[0] & 0xE0) == 0xC0 && (s[1] & 0xC0) == 0x80) {
    cp = (uint32_t(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
  } else {
    return -1;
  }
  return cp < inverse.size() ? inverse[cp] : -1;
}

}  // namespace wick::tok
