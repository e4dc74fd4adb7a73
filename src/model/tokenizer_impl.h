// The state behind wick::Tokenizer (include/wick/tokenizer.h): the vocab as llama.cpp's
// llama_vocab holds it after loading, and the encode / decode steps that use it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/pretokenize.h"
#include "wick/tokenizer.h"

namespace wick {

namespace tok {

// llama.cpp's llama_token_attr bits.
enum Attr : uint32_t {
  kAttrUndefined = 0,
  kAttrUnknown = 1u << 0,
  kAttrUnused = 1u << 1,
  kAttrNormal = 1u << 2,
  kAttrControl = 1u << 3,
  kAttrUserDefined = 1u << 4,
  kAttrByte = 1u << 5,
  kAttrLstrip = 1u << 7,
  kAttrRstrip = 1u << 8,
};

// Transparent (lookups by string_view). Not noexcept on purpose: libstdc++ then caches
// each node's hash, so a probe does not rehash the strings it walks past.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <class V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

// A piece of the text to encode: raw text [begin, begin + size) or one special token.
struct Fragment {
  int32_t token = -1;  // -1: raw text
  size_t begin = 0, size = 0;
};

}  // namespace tok

struct Tokenizer::Impl {
  struct Token {
    std::string text;
    float score = 0.0f;
    uint32_t attr = tok::kAttrNormal;
    TokenType type = TokenType::Normal;  // as the file says
  };

  Model model = Model::SentencePiece;
  std::string pre_name;
  std::unique_ptr<tok::PreTokenizer> pre;  // BPE only

  std::vector<Token> tokens;
  tok::StringMap<int32_t> token_ids;
  tok::StringMap<int32_t> merge_ranks;  // "left right" -> rank (BPE)

  int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, sep = -1, pad = -1, mask = -1;
  int32_t fim_pre = -1, fim_suf = -1, fim_mid = -1, fim_pad = -1, fim_rep = -1, fim_sep = -1;
  bool add_bos = false, add_eos = false;
  bool add_space_prefix = false;  // SentencePiece: a space before the text (and after a special token)
  bool clean_spaces = false;      // decode: drop spaces before punctuation / contractions
  bool ignore_merges = false;     // BPE: a word that is a whole token stays whole

  std::vector<int32_t> eog;            // sorted: tokens that end generation
  std::vector<int32_t> special_cache;  // control / user-defined / unknown, longest text first
  std::vector<std::string> pieces;     // token_to_piece(id, special = true)
  std::string chat_template;

  int32_t find(std::string_view text) const {
    auto it = token_ids.find(text);
    return it == token_ids.end() ? -1 : it->second;
  }
  void check_id(int32_t id) const;

  // tokenizer_encode.cpp
  std::vector<tok::Fragment> partition(std::string_view text, bool parse_special) const;
  void encode_spm(const std::string& text, std::vector<int32_t>& out) const;
  void encode_bpe(std::string_view text, std::vector<int32_t>& out) const;
  // SentencePiece's byte fallback: <0xNN>, else the byte itself as a token.
  int32_t byte_token(uint8_t byte) const;

  // tokenizer_decode.cpp
  std::string piece_uncached(int32_t id) const;
  std::string detokenize(const std::vector<int32_t>& ids, bool special) const;
};

}  // namespace wick
