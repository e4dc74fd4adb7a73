// Text to token ids: the split on special tokens (llama.cpp's tokenizer_st_partition),
// then SentencePiece's score-driven merges or byte-level BPE's ranked merges over each
// piece of plain text (llm_tokenizer_spm_session / llm_tokenizer_bpe_session). The
// priority queues pop in the same order as llama.cpp's (same comparators, same pushes),
// so ties resolve the same way.
#include <fmt/format.h>

#include <cctype>
#include <queue>

#include "model/tokenizer_impl.h"
#include "wick/error.h"

namespace wick {

std::vector<tok::Fragment> Tokenizer::Impl::partition(std::string_view text, bool parse_special) const {
  std::vector<tok::Fragment> frags;
  if (!text.empty()) frags.push_back({-1, 0, text.size()});
  std::vector<tok::Fragment> next;
  auto is_space = [&](size_t i) { return std::isspace(static_cast<unsigned char>(text[i])) != 0; };
  for (int32_t id : special_cache) {
    const Token& tk = tokens[size_t(id)];
    // Without parse_special only user-defined tokens split the text.
    if (!parse_special && (tk.attr & (tok::kAttrControl | tok::kAttrUnknown))) continue;
    const std::string_view needle = tk.text;
    next.clear();
    for (const tok::Fragment& fr : frags) {
      if (fr.token >= 0) {
        next.push_back(fr);
        continue;
      }
      size_t off = fr.begin, len = fr.size;
      while (len > 0) {
        const size_t match = text.substr(0, off + len).find(needle, off);
        if (match == std::string_view::npos) break;
        size_t left = match - off;
        if (tk.attr & tok::kAttrLstrip)
          while (left > 0 && is_space(off + left - 1)) --left;
        if (left > 0) next.push_back({-1, off, left});
        next.push_back({id, 0, 0});
        size_t r_off = match + needle.size();
        size_t r_len = off + len - r_off;
        if (tk.attr & tok::kAttrRstrip)
          while (r_len > 0 && is_space(r_off)) ++r_off, --r_len;
        off = r_off;
        len = r_len;
      }
      if (len > 0) next.push_back({-1, off, len});
    }
    frags.swap(next);
  }
  return frags;
}

int32_t Tokenizer::Impl::byte_token(uint8_t byte) const {
  int32_t id = find(fmt::format("<0x{:02X}>", byte));
  if (id < 0) id = find(std::string(1, char(byte)));
  if (id < 0)
    throw_error(ErrorKind::Format, "tokenizer",
                fmt::format("the vocab has no token for byte 0x{:02X}", byte));
  return id;
}

namespace {

// A symbol of the merge loop: a run of the text, linked to its neighbours.
struct Symbol {
  int prev, next;
  const char* text;
  size_t n;
};

// Splits `text` into one symbol per UTF-8 character (lead byte decides the length).
std::vector<Symbol> utf8_symbols(std::string_view text) {
  std::vector<Symbol> syms;
  size_t off = 0;
  int index = 0;
  while (off < text.size()) {
    const size_t n = std::min(tok::utf8_len(text[off]), text.size() - off);
    syms.push_back({index - 1, off + n == text.size() ? -1 : index + 1, text.data() + off, n});
    off += n;
    ++index;
  }
  return syms;
}

// Joins symbol `left` with the one after it, which leaves the chain (its size becomes 0).
void merge_with_next(std::vector<Symbol>& syms, int left) {
  Symbol& l = syms[size_t(left)];
  Symbol& r = syms[size_t(l.next)];
  l.n += r.n;
  r.n = 0;
  l.next = r.next;
  if (r.next >= 0) syms[size_t(r.next)].prev = left;
}

struct SpmBigram {
  struct Less {
    bool operator()(const SpmBigram& l, const SpmBigram& r) const {
      return l.score < r.score || (l.score == r.score && l.left > r.left);
    }
  };
  int left, right;
  float score;
  size_t size;
};

class SpmSession {
 public:
  explicit SpmSession(const Tokenizer::Impl& v) : v_(v) {}

  void tokenize(const std::string& text, std::vector<int32_t>& out) {
    syms_ = utf8_symbols(text);
    for (int i = 1; i < int(syms_.size()); ++i) try_add_bigram(i - 1, i);
    // Merge the highest-scoring pair that is still current, until none is left.
    while (!queue_.empty()) {
      const SpmBigram b = queue_.top();
      queue_.pop();
      Symbol& l = syms_[size_t(b.left)];
      Symbol& r = syms_[size_t(b.right)];
      if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;
      merge_with_next(syms_, b.left);
      try_add_bigram(l.prev, b.left);
      try_add_bigram(b.left, l.next);
    }
    for (int i = syms_.empty() ? -1 : 0; i != -1; i = syms_[size_t(i)].next) resegment(syms_[size_t(i)], out);
  }

 private:
  // A symbol that is not a token is split back into the pair that formed it, and a
  // character that no pair formed falls back to its bytes' tokens.
  void resegment(const Symbol& s, std::vector<int32_t>& out) {
    const std::string_view text(s.text, s.n);
    if (const int32_t id = v_.find(text); id >= 0) {
      out.push_back(id);
      return;
    }
    const auto it = rev_merge_.find(text);
    if (it == rev_merge_.end()) {
      for (size_t j = 0; j < s.n; ++j) out.push_back(v_.byte_token(uint8_t(s.text[j])));
      return;
    }
    const auto [a, b] = it->second;
    resegment(syms_[size_t(a)], out);
    resegment(syms_[size_t(b)], out);
  }

  void try_add_bigram(int left, int right) {
    if (left == -1 || right == -1) return;
    const std::string_view text(syms_[size_t(left)].text, syms_[size_t(left)].n + syms_[size_t(right)].n);
    const int32_t id = v_.find(text);
    if (id < 0) return;
    queue_.push({left, right, v_.tokens[size_t(id)].score, text.size()});
    rev_merge_.insert_or_assign(std::string(text), std::pair{left, right});
  }

  const Tokenizer::Impl& v_;
  std::vector<Symbol> syms_;
  std::priority_queue<SpmBigram, std::vector<SpmBigram>, SpmBigram::Less> queue_;
  tok::StringMap<std::pair<int, int>> rev_merge_;
};

struct BpeBigram {
  struct Greater {
    bool operator()(const BpeBigram& l, const BpeBigram& r) const {
      return l.rank > r.rank || (l.rank == r.rank && l.left > r.left);
    }
  };
  int left, right;
  std::string text;
  int rank;
};

class BpeSession {
 public:
  explicit BpeSession(const Tokenizer::Impl& v) : v_(v) {}

  void tokenize_word(const std::string& word, std::vector<int32_t>& out) {
    if (v_.ignore_merges && v_.find(word) >= 0) {
      syms_.assign(1, Symbol{-1, -1, word.data(), word.size()});
    } else {
      syms_ = utf8_symbols(word);
    }
    queue_ = {};
    for (int i = 1; i < int(syms_.size()); ++i) add_bigram(i - 1, i);
    // Merge the lowest-ranked pair that is still current, until none is left.
    while (!queue_.empty()) {
      const BpeBigram b = queue_.top();
      queue_.pop();
      Symbol& l = syms_[size_t(b.left)];
      Symbol& r = syms_[size_t(b.right)];
      if (l.n == 0 || r.n == 0) continue;
      if (b.text.size() != l.n + r.n ||
          std::string_view(l.text, l.n) != std::string_view(b.text).substr(0, l.n) ||
          std::string_view(r.text, r.n) != std::string_view(b.text).substr(l.n))
        continue;  // outdated
      merge_with_next(syms_, b.left);
      add_bigram(l.prev, b.left);
      add_bigram(b.left, l.next);
    }
    for (const Symbol& s : syms_) {
      if (s.n == 0) continue;
      const std::string_view text(s.text, s.n);
      if (const int32_t id = v_.find(text); id >= 0) {
        out.push_back(id);
        continue;
      }
      // Not a token: each byte of the (byte-level) text on its own, skipped when it
      // is not a token either, as llama.cpp does.
      for (char c : text)
        if (const int32_t id = v_.find(std::string_view(&c, 1)); id >= 0) out.push_back(id);
    }
  }

 private:
  void add_bigram(int left, int right) {
    if (left == -1 || right == -1) return;
    const Symbol& l = syms_[size_t(left)];
    const Symbol& r = syms_[size_t(right)];
    key_.assign(l.text, l.n);
    key_ += ' ';
    key_.append(r.text, r.n);
    const auto it = v_.merge_ranks.find(key_);
    if (it == v_.merge_ranks.end()) return;
    std::string text(l.text, l.n);
    text.append(r.text, r.n);
    queue_.push({left, right, std::move(text), it->second});
  }

  const Tokenizer::Impl& v_;
  std::vector<Symbol> syms_;
  std::priority_queue<BpeBigram, std::vector<BpeBigram>, BpeBigram::Greater> queue_;
  std::string key_;
};

}  // namespace

void Tokenizer::Impl::encode_spm(const std::string& text, std::vector<int32_t>& out) const {
  // Spaces are U+2581 in a SentencePiece vocab.
  std::string escaped;
  escaped.reserve(text.size() + text.size() / 2);
  for (char c : text) {
    if (c == ' ')
      escaped += "\xE2\x96\x81";
    else
      escaped += c;
  }
  SpmSession(*this).tokenize(escaped, out);
}

void Tokenizer::Impl::encode_bpe(std::string_view text, std::vector<int32_t>& out) const {
  const auto& b2u = tok::byte_to_unicode();
  BpeSession session(*this);
  std::string encoded;
  for (const std::string& word : pre->split(tok::sanitize_utf8(text))) {
    encoded.clear();
    for (char c : word) encoded += b2u[static_cast<uint8_t>(c)];
    session.tokenize_word(encoded, out);
  }
}

}  // namespace wick
