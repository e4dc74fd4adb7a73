// The tokenizer of a GGUF model, built from its `tokenizer.ggml.*` metadata and
// matching llama.cpp's token for token:
//   - SentencePiece (`tokenizer.ggml.model = llama`): score-driven merges over the
//     text with spaces as U+2581, a space prefix (`tokenizer.ggml.add_space_prefix`),
//     byte fallback through the `<0xNN>` tokens;
//   - byte-level BPE (`gpt2`): the pre-tokenizer named by `tokenizer.ggml.pre` splits
//     the text (Unicode regexes), bytes map to GPT-2's printable code points, and the
//     ranked merges of `tokenizer.ggml.merges` join them.
// Special tokens: with parse_special the text is first split on the text of every
// control, user-defined and unknown token (longest first); user-defined tokens are
// split out even without parse_special.
//
// A Tokenizer is immutable after from_gguf: copies share it and every const method
// may be called from several threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wick {

class GgufFile;

// The numbering of `tokenizer.ggml.token_type` (llama.cpp's llama_token_type).
enum class TokenType : int32_t {
  Undefined = 0,
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6,
};

class Tokenizer {
 public:
  enum class Model { SentencePiece, BytePairEncoding };

  // Builds the tokenizer from a GGUF file's metadata (a vocab-only file is enough).
  // Format error naming the key when a required key is missing or mistyped
  // (tokenizer.ggml.model, tokenizer.ggml.tokens, tokenizer.ggml.merges for BPE) or
  // when the model or pre-tokenizer is not supported (the message lists those that are).
  static Tokenizer from_gguf(const GgufFile& file);

  // Token ids of `text`. add_special: BOS / EOS as the file's add_bos_token /
  // add_eos_token say (llama.cpp's add_special). parse_special: control and unknown
  // tokens written in the text become their ids (otherwise they are tokenized as text).
  std::vector<int32_t> encode(std::string_view text, bool add_special = true,
                              bool parse_special = true) const;

  // The bytes a token stands for (may be part of a UTF-8 character). Control and
  // unknown tokens give their text when `special`, else "". IndexOutOfRange for an
  // id outside [0, vocab_size()).
  std::string token_to_piece(int32_t id, bool special = true) const;

  // The text of a token sequence, as llama.cpp's detokenize: pieces concatenated, the
  // first piece's leading space dropped when the vocab adds a space prefix, and the
  // BPE vocabs' clean-up of spaces before punctuation and contractions where the
  // pre-tokenizer asks for it. Control tokens render only when `special`.
  // IndexOutOfRange for an id outside the vocab.
  std::string decode(const std::vector<int32_t>& ids, bool special = false) const;

  // Special token ids; -1 when the vocab has none. BOS/EOS come from
  // tokenizer.ggml.{bos,eos}_token_id, else the model family's defaults as in
  // llama.cpp (SentencePiece: 1 and 2; BPE: 11 and 11), when inside the vocab.
  // EOT/EOM come from their keys, else from the token text (<|eot_id|>, <|im_end|>, ...).
  int32_t bos() const;
  int32_t eos() const;
  int32_t eot() const;
  int32_t eom() const;
  int32_t unk() const;
  int32_t pad() const;
  // Whether encode(add_special = true) prepends BOS / appends EOS.
  bool add_bos() const;
  bool add_eos() const;
  // True for every token that ends generation: EOS, EOT, EOM and the end-of-turn
  // tokens llama.cpp recognises by their text. False for ids outside the vocab.
  bool is_end_of_generation(int32_t id) const;
  // Control (or unknown) tokens: their text is not printed unless asked for.
  bool is_control(int32_t id) const;

  size_t vocab_size() const;
  // The token's text as stored in the vocab (U+2581 / byte-level code points unmapped).
  const std::string& token_text(int32_t id) const;
  // The token's type as the file gives it, with llama.cpp's fix-ups (EOG-looking
  // tokens become Control). IndexOutOfRange outside the vocab.
  TokenType token_type(int32_t id) const;
  // The id of the token whose text is exactly `text`; -1 when none.
  int32_t find_token(std::string_view text) const;

  Model model() const;
  // tokenizer.ggml.pre as resolved ("default" when the file has none; "" for SentencePiece).
  const std::string& pre_tokenizer() const;
  // tokenizer.chat_template, "" when absent.
  const std::string& chat_template() const;

  struct Impl;

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// Turns the ids a model generates into printable text as they come: each push adds the
// token's piece (token_to_piece) and returns the text that is complete so far, holding
// back the bytes of a UTF-8 character that is not finished yet. The returned text is
// always valid UTF-8: a byte that cannot start or continue a character becomes U+FFFD.
// No space is stripped and no clean-up is applied (the pieces are the model's output).
class TokenDecoder {
 public:
  // `special`: print control tokens' text (e.g. "<|im_end|>") too.
  explicit TokenDecoder(Tokenizer tokenizer, bool special = false);
  std::string push(int32_t id);
  // The held bytes of an unfinished character, as U+FFFD; empties the decoder.
  std::string flush();
  // Bytes held back now (0..3).
  size_t pending() const { return pending_.size(); }

 private:
  Tokenizer tokenizer_;
  bool special_;
  std::string pending_;
};

// ---- chat templates ----------------------------------------------------------------

// The prompt formats llama.cpp applies without a Jinja engine (llm_chat_apply_template).
enum class ChatTemplate {
  ChatML,           // <|im_start|>role\ncontent<|im_end|>\n
  Llama3,           // <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>
  Llama2,           // [INST] ... [/INST], system text folded into the first turn
  Llama2Sys,        // Llama 2 with <<SYS>> blocks
  Llama2SysBos,     // ... and <s> before each later turn
  Llama2SysStrip,   // ... and contents stripped of surrounding whitespace
  MistralV1,        // " [INST] ... [/INST]"
  MistralV3,        // "[INST] ... [/INST]", assistant replies trimmed
  MistralV3Tekken,  // "[INST]...[/INST]"
  MistralV7,        // [SYSTEM_PROMPT] ... [/SYSTEM_PROMPT][INST] ... [/INST]
  Unknown,          // none of the above: the caller uses the raw prompt
};

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

// The family of a Jinja chat template (tokenizer.chat_template), detected by the
// markers llama.cpp's llm_chat_detect_template looks for; also accepts llama.cpp's
// template names ("chatml", "llama3", "llama2", "mistral-v7", ...). Unknown for ""
// and for families outside this enum (Phi, Gemma, ...).
ChatTemplate detect_chat_template(std::string_view jinja);
// llama.cpp's name of a template ("chatml", "llama3", "mistral-v3", ...; "unknown").
std::string_view chat_template_name(ChatTemplate t);
// The prompt text for `messages` in the template's format, ending with the assistant
// header when add_generation_prompt (for the families that have one). Tokenize it
// with parse_special = true. InvalidArgument for ChatTemplate::Unknown.
std::string apply_chat_template(ChatTemplate t, const std::vector<ChatMessage>& messages,
                                bool add_generation_prompt);

}  // namespace wick
