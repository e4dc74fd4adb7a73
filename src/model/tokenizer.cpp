// Tokenizer::from_gguf: the vocab read from `tokenizer.ggml.*` with llama.cpp's
// defaults and fix-ups (llama_vocab::impl::load), and the public accessors.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "model/tokenizer_impl.h"
#include "wick/error.h"
#include "wick/io.h"

namespace wick {
namespace {

constexpr std::string_view kOp = "tokenizer";

[[noreturn]] void format_error(const GgufFile& f, const std::string& msg) {
  throw_error(ErrorKind::Format, kOp, fmt::format("{}: {}", f.path(), msg));
}

const GgufArray* find_array(const GgufFile& f, const std::string& key,
                            std::initializer_list<GgufType> elem_types, bool required) {
  const GgufValue* v = f.find(key);
  if (!v) {
    if (required) format_error(f, key + " is missing (not a tokenizer GGUF?)");
    return nullptr;
  }
  if (v->type() != GgufType::Array ||
      std::find(elem_types.begin(), elem_types.end(), v->as_array().elem_type()) == elem_types.end()) {
    std::string want;
    for (GgufType t : elem_types) want += fmt::format("{}{}", want.empty() ? "" : " or ", gguf_type_name(t));
    format_error(f, fmt::format("{} is {}, expected an array of {}", key, v->str(2), want));
  }
  return &v->as_array();
}

const std::string* find_string(const GgufFile& f, const std::string& key) {
  const GgufValue* v = f.find(key);
  if (!v) return nullptr;
  if (v->type() != GgufType::String)
    format_error(f, fmt::format("{} is {}, expected a string", key, v->str(2)));
  return &v->as_string();
}

void read_bool(const GgufFile& f, const std::string& key, bool& out) {
  const GgufValue* v = f.find(key);
  if (!v) return;
  if (v->type() != GgufType::Bool) format_error(f, fmt::format("{} is {}, expected a bool", key, v->str(2)));
  out = v->get<bool>();
}

// A special token id: the key's value when inside the vocab; otherwise the default
// (itself dropped when outside the vocab), as llama.cpp does.
void read_id(const GgufFile& f, const std::string& key, size_t n_tokens, int32_t& id) {
  if (id >= 0 && size_t(id) >= n_tokens) id = -1;
  const GgufValue* v = f.find(key);
  if (!v) return;
  const GgufType t = v->type();
  if (t == GgufType::String || t == GgufType::Array || t == GgufType::F32 || t == GgufType::F64 ||
      t == GgufType::Bool)
    format_error(f, fmt::format("{} is {}, expected an integer", key, v->str(2)));
  const int64_t x =
      t == GgufType::U64 ? int64_t(std::min<uint64_t>(v->as_uint(), uint64_t(INT64_MAX))) : v->as_int();
  if (x >= 0 && uint64_t(x) < n_tokens) id = int32_t(x);
}

uint32_t attr_of(TokenType t) {
  switch (t) {
    case TokenType::Unknown:
      return tok::kAttrUnknown;
    case TokenType::Unused:
      return tok::kAttrUnused;
    case TokenType::Normal:
      return tok::kAttrNormal;
    case TokenType::Control:
      return tok::kAttrControl;
    case TokenType::UserDefined:
      return tok::kAttrUserDefined;
    case TokenType::Byte:
      return tok::kAttrByte;
    case TokenType::Undefined:
      break;
  }
  return tok::kAttrUndefined;
}

// Token texts llama.cpp takes for EOT / EOM / FIM tokens when the file names none; the
// first text present in the vocab wins.
constexpr std::string_view kEotTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",         "<|endoftext|>",     "<|end_of_text|>",
    "<EOT>",      "_<EOT>",     "[EOT]",   "<｜end▁of▁sentence｜>", "<end_of_utterance>"};
constexpr std::string_view kEomTexts[] = {"<|eom_id|>"};
constexpr std::string_view kFimPreTexts[] = {"<|fim_prefix|>",  "<fim-prefix>", "<fim_prefix>",
                                             "<｜fim▁begin｜>", "<PRE>",        "▁<PRE>",
                                             "<|code_prefix|>", "<|prefix|>"};
constexpr std::string_view kFimSufTexts[] = {"<|fim_suffix|>",  "<fim-suffix>", "<fim_suffix>",
                                             "<｜fim▁hole｜>",  "<SUF>",        "▁<SUF>",
                                             "<|code_suffix|>", "<|suffix|>"};
constexpr std::string_view kFimMidTexts[] = {"<|fim_middle|>",  "<fim-middle>", "<fim_middle>",
                                             "<｜fim▁end｜>",   "<MID>",        "▁<MID>",
                                             "<|code_middle|>", "<|middle|>"};
constexpr std::string_view kFimPadTexts[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"};
constexpr std::string_view kFimRepTexts[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>",
                                             "<reponame>"};
constexpr std::string_view kFimSepTexts[] = {"<|file_sep|>"};
// Every token with one of these texts ends generation (and is made a control token).
constexpr std::string_view kEogTexts[] = {"<|eot_id|>",
                                          "<|im_end|>",
                                          "<|end|>",
                                          "<|return|>",
                                          "<|call|>",
                                          "<|flush|>",
                                          "<|calls|>",
                                          "<end_of_turn>",
                                          "<|endoftext|>",
                                          "</s>",
                                          "<|eom_id|>",
                                          "<EOT>",
                                          "_<EOT>",
                                          "[EOT]",
                                          "[EOS]",
                                          "<|end_of_text|>",
                                          "<end_of_utterance>",
                                          "<eos>",
                                          "<turn|>",
                                          "<|tool_response>",
                                          "<｜end▁of▁sentence｜>",
                                          "[e~["};

template <size_t N>
void detect(Tokenizer::Impl& v, int32_t& id, const std::string_view (&texts)[N]) {
  if (id != -1) return;
  for (std::string_view t : texts) {
    const int32_t found = v.find(t);
    if (found < 0) continue;
    id = found;
    v.tokens[size_t(found)].attr |= tok::kAttrControl;
    return;
  }
}

void load_special_tokens(const GgufFile& f, Tokenizer::Impl& v) {
  const size_t n = v.tokens.size();
  const bool spm = v.model == Tokenizer::Model::SentencePiece;
  // The model family's defaults (llama.cpp's): SentencePiece <s> </s> <unk>; BPE 11.
  v.bos = spm ? 1 : 11;
  v.eos = spm ? 2 : 11;
  v.unk = spm ? 0 : -1;
  const std::pair<const char*, int32_t*> keys[] = {
      {"tokenizer.ggml.bos_token_id", &v.bos},         {"tokenizer.ggml.eos_token_id", &v.eos},
      {"tokenizer.ggml.eot_token_id", &v.eot},         {"tokenizer.ggml.eom_token_id", &v.eom},
      {"tokenizer.ggml.unknown_token_id", &v.unk},     {"tokenizer.ggml.seperator_token_id", &v.sep},
      {"tokenizer.ggml.padding_token_id", &v.pad},     {"tokenizer.ggml.mask_token_id", &v.mask},
      {"tokenizer.ggml.fim_pre_token_id", &v.fim_pre}, {"tokenizer.ggml.fim_suf_token_id", &v.fim_suf},
      {"tokenizer.ggml.fim_mid_token_id", &v.fim_mid}, {"tokenizer.ggml.fim_pad_token_id", &v.fim_pad},
      {"tokenizer.ggml.fim_rep_token_id", &v.fim_rep}, {"tokenizer.ggml.fim_sep_token_id", &v.fim_sep},
      {"tokenizer.ggml.prefix_token_id", &v.fim_pre},  {"tokenizer.ggml.suffix_token_id", &v.fim_suf},
      {"tokenizer.ggml.middle_token_id", &v.fim_mid},
  };
  for (auto [key, id] : keys) read_id(f, key, n, *id);
  read_bool(f, "tokenizer.ggml.add_bos_token", v.add_bos);
  read_bool(f, "tokenizer.ggml.add_eos_token", v.add_eos);

  detect(v, v.eot, kEotTexts);
  detect(v, v.eom, kEomTexts);
  detect(v, v.fim_pre, kFimPreTexts);
  detect(v, v.fim_suf, kFimSufTexts);
  detect(v, v.fim_mid, kFimMidTexts);
  detect(v, v.fim_pad, kFimPadTexts);
  detect(v, v.fim_rep, kFimRepTexts);
  detect(v, v.fim_sep, kFimSepTexts);

  std::vector<int32_t> eog;
  for (int32_t id : {v.fim_pad, v.fim_rep, v.fim_sep})
    if (id >= 0) eog.push_back(id);
  for (std::string_view t : kEogTexts) {
    const int32_t id = v.find(t);
    if (id < 0) continue;
    eog.push_back(id);
    v.tokens[size_t(id)].attr |= tok::kAttrControl;
  }
  // gpt-oss renders these markers: user-defined, so they always split out of the text.
  for (std::string_view t : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"})
    if (int32_t id = v.find(t); id >= 0) v.tokens[size_t(id)].attr = tok::kAttrUserDefined;
  for (int32_t id : {v.eos, v.eot, v.eom})
    if (id >= 0) eog.push_back(id);
  std::sort(eog.begin(), eog.end());
  eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
  auto in_eog = [&](std::string_view text) {
    const int32_t id = v.find(text);
    return id >= 0 && std::binary_search(eog.begin(), eog.end(), id) ? id : -1;
  };
  auto drop_eog = [&](int32_t id, uint32_t attr) {
    eog.erase(std::find(eog.begin(), eog.end(), id));
    v.tokens[size_t(id)].attr = attr;
  };
  // o200k_harmony and solar-open: <|end|> closes a message, not the generation.
  const int32_t end_id = in_eog("<|end|>");
  if (end_id >= 0 && ((in_eog("<|return|>") >= 0 && in_eog("<|call|>") >= 0) ||
                      (in_eog("<|calls|>") >= 0 && in_eog("<|flush|>") >= 0)))
    drop_eog(end_id, tok::kAttrUserDefined);
  // gemma4 and plamo2 have an ordinary </s>.
  const int32_t s_id = in_eog("</s>");
  if (s_id >= 0 && (in_eog("<|tool_response>") >= 0 || in_eog("<|plamo:eos|>") >= 0))
    drop_eog(s_id, tok::kAttrNormal);
  v.eog = std::move(eog);
}

}  // namespace

Tokenizer Tokenizer::from_gguf(const GgufFile& f) {
  auto v = std::make_shared<Impl>();

  const std::string* model = find_string(f, "tokenizer.ggml.model");
  if (!model) format_error(f, "tokenizer.ggml.model is missing (not a tokenizer GGUF?)");
  if (*model == "llama") {
    v->model = Model::SentencePiece;
    v->add_space_prefix = true;
    v->add_bos = true;
  } else if (*model == "gpt2") {
    v->model = Model::BytePairEncoding;
    const std::string* pre = find_string(f, "tokenizer.ggml.pre");
    v->pre_name = pre && !pre->empty() ? *pre : "default";
    const tok::PreTokenizerSpec* spec = tok::find_pre_tokenizer(v->pre_name);
    if (!spec)
      format_error(f, fmt::format("tokenizer.ggml.pre '{}' is not supported; supported: {}", v->pre_name,
                                  tok::supported_pre_tokenizers()));
    v->clean_spaces = spec->clean_spaces;
    v->ignore_merges = spec->ignore_merges;
    v->add_bos = spec->add_bos;
    v->pre = std::make_unique<tok::PreTokenizer>(*spec);
  } else {
    format_error(f,
                 fmt::format("tokenizer.ggml.model '{}' is not supported; supported: llama (SentencePiece), "
                             "gpt2 (byte-level BPE)",
                             *model));
  }
  read_bool(f, "tokenizer.ggml.add_space_prefix", v->add_space_prefix);

  const GgufArray* texts = find_array(f, "tokenizer.ggml.tokens", {GgufType::String}, true);
  const size_t n = texts->size();
  if (n == 0) format_error(f, "tokenizer.ggml.tokens is empty");
  if (n > size_t(INT32_MAX)) format_error(f, fmt::format("tokenizer.ggml.tokens has {} entries", n));
  const GgufArray* scores = find_array(f, "tokenizer.ggml.scores", {GgufType::F32, GgufType::I32}, false);
  const GgufArray* types = find_array(f, "tokenizer.ggml.token_type", {GgufType::I32}, false);
  for (auto [arr, key] :
       {std::pair{scores, "tokenizer.ggml.scores"}, std::pair{types, "tokenizer.ggml.token_type"}})
    if (arr && arr->size() < n)
      format_error(f, fmt::format("{} has {} entries for {} tokens", key, arr->size(), n));

  v->tokens.resize(n);
  v->token_ids.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Impl::Token& t = v->tokens[i];
    t.text = texts->string(i);
    if (t.text.empty()) t.text = fmt::format("[EMPTY_{}]", i);
    v->token_ids[t.text] = int32_t(i);  // a repeated text maps to its last id, as in llama.cpp
    if (scores)
      t.score = scores->elem_type() == GgufType::F32 ? scores->get<float>(i) : float(scores->get<int32_t>(i));
    if (types) {
      const int32_t ty = types->get<int32_t>(i);
      t.type = ty >= 0 && ty <= int32_t(TokenType::Byte) ? TokenType(ty) : TokenType::Undefined;
      t.attr = attr_of(t.type);
    }
  }

  if (v->model == Model::BytePairEncoding) {
    const GgufArray* merges = find_array(f, "tokenizer.ggml.merges", {GgufType::String}, true);
    v->merge_ranks.reserve(merges->size());
    for (size_t i = 0; i < merges->size(); ++i) {
      const std::string_view m = merges->string(i);
      // "left right", split at the first space after the first byte; the first rank wins.
      const size_t sp = m.find(' ', 1);
      if (sp != std::string::npos) v->merge_ranks.emplace(m, int32_t(i));
    }
  }

  load_special_tokens(f, *v);

  // Special tokens split out of the text before tokenizing: longest text first.
  for (size_t i = 0; i < n; ++i)
    if (v->tokens[i].attr & (tok::kAttrControl | tok::kAttrUserDefined | tok::kAttrUnknown))
      v->special_cache.push_back(int32_t(i));
  std::stable_sort(v->special_cache.begin(), v->special_cache.end(), [&](int32_t a, int32_t b) {
    return v->tokens[size_t(a)].text.size() > v->tokens[size_t(b)].text.size();
  });

  // Phi-3 strips the whitespace after its special tokens (llama.cpp keys this on the name).
  if (const std::string* name = find_string(f, "general.name")) {
    std::string lower = *name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    if (lower.find("phi-3") != std::string::npos || lower.find("phi3") != std::string::npos) {
      for (int32_t id : v->special_cache) v->tokens[size_t(id)].attr |= tok::kAttrRstrip;
      if (int32_t id = v->find("</s>"); id >= 0) v->tokens[size_t(id)].attr |= tok::kAttrRstrip;
      for (std::string_view t : {"<unk>", "<s>", "<|endoftext|>"})
        if (int32_t id = v->find(t); id >= 0) v->tokens[size_t(id)].attr &= ~uint32_t(tok::kAttrRstrip);
    }
  }

  v->pieces.resize(n);
  for (size_t i = 0; i < n; ++i) v->pieces[i] = v->piece_uncached(int32_t(i));

  if (const std::string* tmpl = find_string(f, "tokenizer.chat_template")) v->chat_template = *tmpl;
  return Tokenizer(std::move(v));
}

void Tokenizer::Impl::check_id(int32_t id) const {
  if (id < 0 || size_t(id) >= tokens.size())
    throw_error(ErrorKind::IndexOutOfRange, kOp,
                fmt::format("token id {} is outside the vocab [0, {})", id, tokens.size()));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  const Impl& v = *impl_;
  std::vector<int32_t> out;
  const std::vector<tok::Fragment> frags = v.partition(text, parse_special);
  if (add_special && v.add_bos) {
    if (v.bos < 0)
      throw_error(ErrorKind::InvalidArgument, kOp, "add_bos_token is set but the vocab has no BOS token");
    out.push_back(v.bos);
  }
  bool prev_special = true;  // SentencePiece: a space prefix at the start and after a special token
  for (const tok::Fragment& fr : frags) {
    if (fr.token >= 0) {
      out.push_back(fr.token);
      prev_special = true;
      continue;
    }
    const std::string_view raw = text.substr(fr.begin, fr.size);
    if (v.model == Model::SentencePiece) {
      std::string s = v.add_space_prefix && prev_special ? " " : "";
      s += raw;
      v.encode_spm(s, out);
    } else {
      v.encode_bpe(raw, out);
    }
    prev_special = false;
  }
  if (add_special && v.add_eos) {
    if (v.eos < 0)
      throw_error(ErrorKind::InvalidArgument, kOp, "add_eos_token is set but the vocab has no EOS token");
    out.push_back(v.eos);
  }
  return out;
}

std::string Tokenizer::token_to_piece(int32_t id, bool special) const {
  impl_->check_id(id);
  if (!special && (impl_->tokens[size_t(id)].attr & (tok::kAttrControl | tok::kAttrUnknown))) return {};
  return impl_->pieces[size_t(id)];
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool special) const {
  return impl_->detokenize(ids, special);
}

int32_t Tokenizer::bos() const { return impl_->bos; }
int32_t Tokenizer::eos() const { return impl_->eos; }
int32_t Tokenizer::eot() const { return impl_->eot; }
int32_t Tokenizer::eom() const { return impl_->eom; }
int32_t Tokenizer::unk() const { return impl_->unk; }
int32_t Tokenizer::pad() const { return impl_->pad; }
bool Tokenizer::add_bos() const { return impl_->add_bos; }
bool Tokenizer::add_eos() const { return impl_->add_eos; }

bool Tokenizer::is_end_of_generation(int32_t id) const {
  return std::binary_search(impl_->eog.begin(), impl_->eog.end(), id);
}

bool Tokenizer::is_control(int32_t id) const {
  return id >= 0 && size_t(id) < impl_->tokens.size() &&
         (impl_->tokens[size_t(id)].attr & (tok::kAttrControl | tok::kAttrUnknown));
}

size_t Tokenizer::vocab_size() const { return impl_->tokens.size(); }

const std::string& Tokenizer::token_text(int32_t id) const {
  impl_->check_id(id);
  return impl_->tokens[size_t(id)].text;
}

TokenType Tokenizer::token_type(int32_t id) const {
  impl_->check_id(id);
  const Impl::Token& t = impl_->tokens[size_t(id)];
  if (t.attr & tok::kAttrControl) return TokenType::Control;
  if (t.attr & tok::kAttrUserDefined) return TokenType::UserDefined;
  return t.type;
}

int32_t Tokenizer::find_token(std::string_view text) const { return impl_->find(text); }
Tokenizer::Model Tokenizer::model() const { return impl_->model; }
const std::string& Tokenizer::pre_tokenizer() const { return impl_->pre_name; }
const std::string& Tokenizer::chat_template() const { return impl_->chat_template; }

}  // namespace wick
