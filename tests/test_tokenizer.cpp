// The GGUF tokenizer against llama.cpp: every case of llama.cpp's vocab tests
// (models/ggml-vocab-*.gguf with .inp / .out, tokenized as its test-tokenizer-0 does:
// add_special = false, parse_special = false), SmolLM2's prompt ids, special tokens,
// decoding and streaming, chat templates (llama.cpp's test-chat-template cases) and
// the errors of malformed vocab metadata. The model files come from
// scripts/fetch-test-data.sh (the fetch_test_data CTest fixture) in WICK_TEST_DATA_DIR.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "chat_template_cases.h"
#include "wick/error.h"
#include "wick/io.h"
#include "wick/tokenizer.h"

namespace {

using namespace wick;

std::string data_path(const std::string& file) { return std::string(WICK_TEST_DATA_DIR) + "/" + file; }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The tokenizer of a test-data file, loaded once.
const Tokenizer& vocab(const std::string& file) {
  static std::map<std::string, Tokenizer> loaded;
  auto it = loaded.find(file);
  if (it == loaded.end()) {
    const std::string path = data_path(file);
    if (!std::filesystem::exists(path))
      throw std::runtime_error(path + " is missing: run scripts/fetch-test-data.sh " WICK_TEST_DATA_DIR
                                      " (ctest runs it as the fetch_test_data fixture)");
    it = loaded.emplace(file, Tokenizer::from_gguf(GgufFile::open(path))).first;
  }
  return it->second;
}

struct VocabCase {
  std::string text;
  std::vector<int32_t> ids;
};

// llama.cpp's test-tokenizer-0 format: inputs separated by "\n__ggml_vocab_test__\n",
// one line of space-separated ids per input.
std::vector<VocabCase> read_cases(const std::string& file) {
  const std::string inp = read_file(data_path(file + ".inp"));
  const std::string out = read_file(data_path(file + ".out"));
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  for (size_t pos = 0; pos < inp.size();) {
    const size_t next = inp.find(sep, pos);
    if (next == std::string::npos) {
      texts.push_back(inp.substr(pos));
      break;
    }
    texts.push_back(inp.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::vector<VocabCase> cases;
  std::istringstream lines(out);
  std::string line;
  for (size_t i = 0; std::getline(lines, line); ++i) {
    VocabCase c;
    c.text = i < texts.size() ? texts[i] : std::string();
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) c.ids.push_back(id);
    cases.push_back(std::move(c));
  }
  EXPECT_EQ(cases.size(), texts.size()) << file << ": .inp and .out differ in length";
  return cases;
}

// The text with control bytes escaped, for failure messages.
std::string show(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else
      out += char(c);
  }
  return "'" + out + "'";
}

std::string show(const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids) out += (out.empty() ? "" : " ") + std::to_string(id);
  return "[" + out + "]";
}

// ---- llama.cpp's vocab tests -----------------------------------------------------------

class LlamaCppVocab : public ::testing::TestWithParam<const char*> {};

TEST_P(LlamaCppVocab, EveryCaseTokenizesAsInLlamaCpp) {
  const std::string file = std::string("ggml-vocab-") + GetParam() + ".gguf";
  const Tokenizer& tok = vocab(file);
  const auto cases = read_cases(file);
  ASSERT_GE(cases.size(), 30u);
  size_t failed = 0;
  for (const auto& c : cases) {
    const std::vector<int32_t> got = tok.encode(c.text, /*add_special=*/false, /*parse_special=*/false);
    if (got != c.ids) {
      ++failed;
      ADD_FAILURE() << file << " " << show(c.text) << "\n  expected " << show(c.ids) << "\n  got      "
                    << show(got);
    }
  }
  EXPECT_EQ(failed, 0u) << "of " << cases.size() << " cases";
}

// The vocabs whose decode cleans up spaces as llama.cpp's clean_spaces does (the
// tokenizer.json of Llama 3 and GPT-2 say clean_up_tokenization_spaces): " ?", " !",
// " .", " ," and " '" come back without their space there, so those inputs cannot
// round-trip; every other case must.
bool cleans_spaces(const std::string& name) { return name == "llama-bpe" || name == "gpt-2"; }

TEST_P(LlamaCppVocab, DecodeGivesTheTextBack) {
  const std::string file = std::string("ggml-vocab-") + GetParam() + ".gguf";
  const Tokenizer& tok = vocab(file);
  size_t checked = 0;
  for (const auto& c : read_cases(file)) {
    if (cleans_spaces(GetParam())) {
      bool cleaned = false;
      for (const char* p : {" ?", " !", " .", " ,", " '"}) cleaned |= c.text.find(p) != std::string::npos;
      if (cleaned) continue;
    }
    EXPECT_EQ(tok.decode(c.ids), c.text) << file << " " << show(c.ids);
    ++checked;
  }
  EXPECT_GE(checked, 30u);
}

INSTANTIATE_TEST_SUITE_P(Files, LlamaCppVocab, ::testing::Values("llama-spm", "llama-bpe", "qwen2", "gpt-2"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

TEST(Tokenizer, DecodeCleansSpacesBeforePunctuationWhereTheVocabSaysSo) {
  // llama.cpp's clean-up: " ?", " !", " .", " ," lose the space; " ' " loses both;
  // " 's", " 'm", " 're", " 've" lose it, " 't", " 'd", " 'll" keep it.
  const Tokenizer& gpt2 = vocab("ggml-vocab-gpt-2.gguf");
  EXPECT_EQ(gpt2.decode(gpt2.encode("Hello , world !", false)), "Hello, world!");
  EXPECT_EQ(gpt2.decode(gpt2.encode("it 's a 'test' , I 'm sure", false)), "it's a 'test', I'm sure");
  EXPECT_EQ(gpt2.decode(gpt2.encode("we 're here , they 've gone , I 'll stay , it 't", false)),
            "we're here, they've gone, I 'll stay, it 't");
  EXPECT_EQ(gpt2.decode(gpt2.encode("rock ' n roll", false)), "rock'n roll");
  // Qwen 2 does not clean up.
  const Tokenizer& qwen = vocab("ggml-vocab-qwen2.gguf");
  EXPECT_EQ(qwen.decode(qwen.encode("Hello , world ! it 's", false)), "Hello , world ! it 's");
}

// ---- BOS / EOS and special tokens ---------------------------------------------------------

TEST(Tokenizer, SentencePieceAddsBosAsTheFileSays) {
  const Tokenizer& tok = vocab("ggml-vocab-llama-spm.gguf");  // add_bos_token = true
  EXPECT_EQ(tok.model(), Tokenizer::Model::SentencePiece);
  EXPECT_TRUE(tok.add_bos());
  EXPECT_FALSE(tok.add_eos());
  EXPECT_EQ(tok.bos(), 1);
  EXPECT_EQ(tok.eos(), 2);
  EXPECT_EQ(tok.unk(), 0);
  EXPECT_EQ(tok.vocab_size(), 32000u);
  // llama.cpp's .out: "Hello world" -> 15043 3186
  EXPECT_EQ(tok.encode("Hello world"), (std::vector<int32_t>{1, 15043, 3186}));
  EXPECT_EQ(tok.encode("Hello world", false), (std::vector<int32_t>{15043, 3186}));
  EXPECT_EQ(tok.encode(""), (std::vector<int32_t>{1}));
  EXPECT_TRUE(tok.encode("", false).empty());
  // The space prefix is dropped from the first piece only: after BOS (whose text is
  // hidden) it stays, as in llama.cpp's detokenize.
  EXPECT_EQ(tok.decode({15043, 3186}), "Hello world");
  EXPECT_EQ(tok.decode({1, 15043, 3186}), " Hello world");
  EXPECT_EQ(tok.decode({1, 15043, 3186}, /*special=*/true), "<s> Hello world");
  EXPECT_TRUE(tok.is_end_of_generation(2));
  EXPECT_FALSE(tok.is_end_of_generation(1));
  EXPECT_FALSE(tok.is_end_of_generation(-1));
}

TEST(Tokenizer, Llama3AddsBosByDefaultAndKnowsItsEndTokens) {
  const Tokenizer& tok = vocab("ggml-vocab-llama-bpe.gguf");  // no add_bos_token key: llama3 adds BOS
  EXPECT_EQ(tok.model(), Tokenizer::Model::BytePairEncoding);
  EXPECT_EQ(tok.pre_tokenizer(), "llama-bpe");
  EXPECT_TRUE(tok.add_bos());
  EXPECT_EQ(tok.bos(), 128000);
  EXPECT_EQ(tok.eos(), 128001);
  EXPECT_EQ(tok.find_token("<|eot_id|>"), 128009);
  EXPECT_EQ(tok.eot(), 128009);
  EXPECT_EQ(tok.find_token("<|eom_id|>"), -1);  // Llama 3.0: no <|eom_id|> yet
  EXPECT_EQ(tok.eom(), -1);
  // llama.cpp's test table: "Hello" -> 9906
  EXPECT_EQ(tok.encode("Hello"), (std::vector<int32_t>{128000, 9906}));
  for (int32_t id : {128001, 128009}) EXPECT_TRUE(tok.is_end_of_generation(id)) << id;
  for (int32_t id : {128000, 128008, 9906, 128256}) EXPECT_FALSE(tok.is_end_of_generation(id)) << id;
  EXPECT_TRUE(tok.is_control(128000));
  EXPECT_FALSE(tok.is_control(9906));
  EXPECT_EQ(tok.token_type(128000), TokenType::Control);
  EXPECT_EQ(tok.token_type(9906), TokenType::Normal);
  EXPECT_EQ(tok.token_text(9906), "Hello");
}

TEST(Tokenizer, ParseSpecialSplitsOnControlTokens) {
  const Tokenizer& tok = vocab("ggml-vocab-llama-bpe.gguf");
  EXPECT_EQ(tok.encode("<|begin_of_text|>Hello", false, true), (std::vector<int32_t>{128000, 9906}));
  EXPECT_EQ(tok.encode("Hello<|eot_id|>Hello", false, true), (std::vector<int32_t>{9906, 128009, 9906}));
  // Without parse_special the marker is plain text.
  const auto plain = tok.encode("<|begin_of_text|>Hello", false, false);
  EXPECT_GT(plain.size(), 2u);
  for (int32_t id : plain) EXPECT_LT(id, 128000);
  EXPECT_EQ(tok.decode(plain), "<|begin_of_text|>Hello");
}

TEST(Tokenizer, UserDefinedTokensSplitEvenWithoutParseSpecial) {
  const Tokenizer& tok = vocab("ggml-vocab-qwen2.gguf");  // [PAD151646] ... are user-defined
  EXPECT_EQ(tok.token_type(151646), TokenType::UserDefined);
  const auto ids = tok.encode("a[PAD151646]b", false, false);
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[1], 151646);
  EXPECT_EQ(ids[0], tok.find_token("a"));
  EXPECT_EQ(ids[2], tok.find_token("b"));
  // <|im_start|> is a control token: split only with parse_special.
  const int32_t im_start = tok.find_token("<|im_start|>");
  ASSERT_EQ(im_start, 151644);
  EXPECT_EQ(tok.encode("<|im_start|>", false, true), (std::vector<int32_t>{im_start}));
  EXPECT_GT(tok.encode("<|im_start|>", false, false).size(), 1u);
  // Qwen 2 has no add_bos_token: BPE does not add BOS.
  EXPECT_FALSE(tok.add_bos());
  EXPECT_EQ(tok.encode("a", true), tok.encode("a", false));
}

TEST(Tokenizer, SmolLM2TokenizesThePromptWithoutBos) {
  const Tokenizer& tok = vocab("SmolLM2-135M-Instruct.Q4_1.gguf");
  EXPECT_EQ(tok.model(), Tokenizer::Model::BytePairEncoding);
  EXPECT_EQ(tok.pre_tokenizer(), "smollm");
  EXPECT_FALSE(tok.add_bos());  // tokenizer.ggml.add_bos_token = false
  EXPECT_EQ(tok.bos(), 1);
  EXPECT_EQ(tok.eos(), 2);
  const std::vector<int32_t> expected = {504, 3575, 282, 4649, 314};
  EXPECT_EQ(tok.encode("The capital of France is"), expected);
  EXPECT_EQ(tok.encode("The capital of France is", false), expected);
  EXPECT_EQ(tok.decode(expected), "The capital of France is");
  // <|im_end|> (EOS) and <|endoftext|> end generation; EOT is <|im_end|>.
  EXPECT_EQ(tok.eot(), 2);
  EXPECT_TRUE(tok.is_end_of_generation(2));
  EXPECT_TRUE(tok.is_end_of_generation(0));
  EXPECT_FALSE(tok.is_end_of_generation(1));
}

TEST(Tokenizer, SmolLM2ChatPromptKeepsItsSpecialTokens) {
  const Tokenizer& tok = vocab("SmolLM2-135M-Instruct.Q4_1.gguf");
  const ChatTemplate t = detect_chat_template(tok.chat_template());
  ASSERT_EQ(t, ChatTemplate::ChatML);
  const std::string prompt = apply_chat_template(t, {{"user", "What is the capital of France?"}}, true);
  EXPECT_EQ(prompt, "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n");
  const auto ids = tok.encode(prompt, true, true);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.front(), 1);  // <|im_start|>, no BOS before it
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 1), 2);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 2), 1);
  EXPECT_EQ(tok.decode(ids, true), prompt);
  EXPECT_EQ(tok.decode(ids), "user\nWhat is the capital of France?\nassistant\n");
  const auto plain = tok.encode(prompt, true, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 1), 0);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 2), 0);
}

// ---- streaming ---------------------------------------------------------------------------

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

TEST(TokenDecoder, HoldsAnEmojiSplitAcrossTokensUntilItIsComplete) {
  const Tokenizer& tok = vocab("ggml-vocab-llama-bpe.gguf");
  // llama.cpp's test table: " this is 🦙.cpp" -> 420 374 11410 99 247 13 11055 (the emoji's
  // four bytes are spread over 11410, 99 and 247).
  const std::vector<int32_t> ids = {420, 374, 11410, 99, 247, 13, 11055};
  ASSERT_EQ(tok.encode(" this is \xF0\x9F\xA6\x99.cpp", false), ids);
  TokenDecoder dec(tok);
  std::string all;
  bool held = false;
  for (int32_t id : ids) {
    const std::string out = dec.push(id);
    EXPECT_TRUE(valid_utf8(out)) << id;
    held |= out.empty() && dec.pending() > 0;
    all += out;
  }
  EXPECT_TRUE(held);
  EXPECT_EQ(dec.pending(), 0u);
  EXPECT_EQ(dec.flush(), "");
  EXPECT_EQ(all, " this is \xF0\x9F\xA6\x99.cpp");
}

TEST(TokenDecoder, FlushReplacesAnUnfinishedCharacter) {
  const Tokenizer& tok = vocab("ggml-vocab-llama-bpe.gguf");
  TokenDecoder dec(tok);
  std::string out = dec.push(11410);  // " " and the first bytes of a 4-byte character
  EXPECT_EQ(out, " ");
  EXPECT_GT(dec.pending(), 0u);
  EXPECT_EQ(dec.flush(), "\xEF\xBF\xBD");
  EXPECT_EQ(dec.pending(), 0u);
  // A continuation byte with nothing to continue becomes U+FFFD at once.
  EXPECT_EQ(dec.push(99), "\xEF\xBF\xBD");
}

TEST(TokenDecoder, StreamsEveryCaseAsTheConcatenatedPieces) {
  for (const char* name : {"llama-spm", "llama-bpe", "qwen2", "gpt-2"}) {
    const std::string file = std::string("ggml-vocab-") + name + ".gguf";
    const Tokenizer& tok = vocab(file);
    for (const auto& c : read_cases(file)) {
      std::string pieces;
      for (int32_t id : c.ids) pieces += tok.token_to_piece(id);
      TokenDecoder dec(tok);
      std::string streamed;
      for (int32_t id : c.ids) streamed += dec.push(id);
      streamed += dec.flush();
      EXPECT_EQ(streamed, pieces) << file << " " << show(c.ids);
    }
  }
}

TEST(TokenDecoder, HidesControlTokensUnlessAsked) {
  const Tokenizer& tok = vocab("SmolLM2-135M-Instruct.Q4_1.gguf");
  TokenDecoder plain(tok), special(tok, true);
  EXPECT_EQ(plain.push(2), "");
  EXPECT_EQ(special.push(2), "<|im_end|>");
}

// ---- chat templates ------------------------------------------------------------------------

TEST(ChatTemplate, DetectsAndFormatsLlamaCppsCases) {
  for (const auto& c : test::kChatTemplateCases) {
    EXPECT_EQ(detect_chat_template(c.jinja), c.family) << c.name;
    if (c.family == ChatTemplate::Unknown) continue;
    EXPECT_EQ(apply_chat_template(c.family, test::kChatConversation, true), c.expected) << c.name;
  }
}

TEST(ChatTemplate, NamesRoundTripAndUnknownIsReported) {
  for (ChatTemplate t :
       {ChatTemplate::ChatML, ChatTemplate::Llama3, ChatTemplate::Llama2, ChatTemplate::Llama2Sys,
        ChatTemplate::Llama2SysBos, ChatTemplate::Llama2SysStrip, ChatTemplate::MistralV1,
        ChatTemplate::MistralV3, ChatTemplate::MistralV3Tekken, ChatTemplate::MistralV7})
    EXPECT_EQ(detect_chat_template(chat_template_name(t)), t) << chat_template_name(t);
  EXPECT_EQ(chat_template_name(ChatTemplate::Unknown), "unknown");
  EXPECT_EQ(detect_chat_template(""), ChatTemplate::Unknown);
  EXPECT_EQ(detect_chat_template("{{ messages }}"), ChatTemplate::Unknown);
  try {
    apply_chat_template(ChatTemplate::Unknown, test::kChatConversation, true);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("not a known family"), std::string::npos) << e.what();
  }
}

TEST(ChatTemplate, Llama3PromptWithoutGenerationPrompt) {
  // llm_chat_apply_template's Llama 3 layout: contents trimmed, no assistant header.
  EXPECT_EQ(apply_chat_template(ChatTemplate::Llama3, {{"user", "  Hi  "}}, false),
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>");
}

// ---- small vocabs written here: hand-computed merges and the errors of bad metadata ----------

using Meta = std::vector<std::pair<std::string, GgufValue>>;

GgufValue strings(const std::vector<std::string>& v) {
  GgufArray a(GgufType::String);
  for (const auto& s : v) a.push_back(s);
  return GgufValue(a);
}
template <class T>
GgufValue numbers(GgufType t, const std::vector<T>& v) {
  GgufArray a(t);
  for (T x : v) a.push_back(x);
  return GgufValue(a);
}

Tokenizer load(const Meta& meta) {
  const auto image = gguf_serialize(meta, {});
  return Tokenizer::from_gguf(GgufFile::parse(image.data(), image.size(), "vocab.gguf"));
}

// A SentencePiece vocab: scores decide the merges, bytes fall back to <0xNN>.
Meta spm_meta() {
  const std::string sp = "\xE2\x96\x81";  // U+2581
  return {
      {"tokenizer.ggml.model", GgufValue("llama")},
      {"tokenizer.ggml.tokens",
       strings({"<unk>", "<s>", "</s>", sp, "a", "b", sp + "a", "ab", sp + "ab", "<0xC3>", "<0xA9>"})},
      {"tokenizer.ggml.scores",
       numbers<float>(GgufType::F32, {0, 0, 0, -1.0f, -2.0f, -2.0f, -1.5f, -0.5f, -3.0f, 0, 0})},
      {"tokenizer.ggml.token_type", numbers<int32_t>(GgufType::I32, {2, 3, 3, 1, 1, 1, 1, 1, 1, 6, 6})},
  };
}

TEST(Tokenizer, SentencePieceMergesByScoreAndFallsBackToBytes) {
  const Tokenizer tok = load(spm_meta());
  // " ab é" as "▁ab▁é": "ab" (-0.5) merges first, which outdates "▁a" (-1.5); then
  // "▁ab" (-3). "é" is no token: its bytes C3 A9.
  EXPECT_EQ(tok.encode("ab \xC3\xA9", false), (std::vector<int32_t>{8, 3, 9, 10}));
  EXPECT_EQ(tok.decode({8, 3, 9, 10}), "ab \xC3\xA9");
  // After a special token the text gets the space prefix again.
  EXPECT_EQ(tok.encode("a</s>b", false, true), (std::vector<int32_t>{6, 2, 3, 5}));
  // A byte with no <0xNN> token is an error that names it.
  try {
    tok.encode("a</s>b", false, false);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format);
    EXPECT_NE(std::string(e.what()).find("byte 0x3C"), std::string::npos) << e.what();
  }
}

// A byte-level BPE vocab ("Ġ" is the space).
Meta bpe_meta(const std::string& pre = "gpt-2") {
  return {
      {"tokenizer.ggml.model", GgufValue("gpt2")},
      {"tokenizer.ggml.pre", GgufValue(pre)},
      {"tokenizer.ggml.tokens", strings({"a", "b", "ab", "\xC4\xA0",
                                         "\xC4\xA0"
                                         "ab",
                                         "<|end|>"})},
      {"tokenizer.ggml.merges", strings({"a b", "\xC4\xA0 ab"})},
  };
}

TEST(Tokenizer, BytePairMergesByRank) {
  const Tokenizer tok = load(bpe_meta());
  // " ab" -> "Ġab": "a b" (rank 0), then "Ġ ab" (rank 1).
  EXPECT_EQ(tok.encode(" ab", false), (std::vector<int32_t>{4}));
  EXPECT_EQ(tok.encode("ab ab", false), (std::vector<int32_t>{2, 4}));
  // "c" is neither a token nor a byte token: dropped, as llama.cpp does.
  EXPECT_EQ(tok.encode(" abc", false), (std::vector<int32_t>{4}));
  // BOS/EOS default to id 11 for BPE in llama.cpp: outside this vocab, so none.
  EXPECT_EQ(tok.bos(), -1);
  EXPECT_EQ(tok.eos(), -1);
  // <|end|> looks like an end-of-turn token: llama.cpp makes it EOT and control.
  EXPECT_EQ(tok.eot(), 5);
  EXPECT_TRUE(tok.is_end_of_generation(5));
  EXPECT_EQ(tok.token_type(5), TokenType::Control);
}

TEST(Tokenizer, SentencePieceWithoutSpacePrefix) {
  Meta meta = spm_meta();
  meta.emplace_back("tokenizer.ggml.add_space_prefix", GgufValue(false));
  const Tokenizer tok = load(meta);
  EXPECT_EQ(tok.encode("ab", false), (std::vector<int32_t>{7}));
  EXPECT_EQ(tok.encode("a", false), (std::vector<int32_t>{4}));
  EXPECT_EQ(tok.decode({3, 7}), " ab");
}

// Digits under each pre-tokenizer: "1234" with merges 1+2, 12+3, 123+4.
TEST(Tokenizer, PreTokenizersSplitDigitsTheirOwnWay) {
  auto digits = [](const std::string& pre) {
    return load({
        {"tokenizer.ggml.model", GgufValue("gpt2")},
        {"tokenizer.ggml.pre", GgufValue(pre)},
        {"tokenizer.ggml.tokens", strings({"1", "2", "3", "4", "12", "123", "1234"})},
        {"tokenizer.ggml.merges", strings({"1 2", "12 3", "123 4"})},
    });
  };
  // default: digit runs, then runs of three ASCII digits: "123" "4"
  EXPECT_EQ(digits("default").encode("1234", false), (std::vector<int32_t>{5, 3}));
  // GPT-2: one run of digits
  EXPECT_EQ(digits("gpt-2").encode("1234", false), (std::vector<int32_t>{6}));
  // Llama 3: up to three digits
  EXPECT_EQ(digits("llama-bpe").encode("1234", false), (std::vector<int32_t>{5, 3}));
  // Qwen 2 and SmolLM (StarCoder): every digit alone
  EXPECT_EQ(digits("qwen2").encode("1234", false), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(digits("smollm").encode("1234", false), (std::vector<int32_t>{0, 1, 2, 3}));
  // No pre-tokenizer named: "default".
  const Tokenizer unnamed = load({
      {"tokenizer.ggml.model", GgufValue("gpt2")},
      {"tokenizer.ggml.tokens", strings({"1", "2", "3", "4", "12", "123", "1234"})},
      {"tokenizer.ggml.merges", strings({"1 2", "12 3", "123 4"})},
  });
  EXPECT_EQ(unnamed.pre_tokenizer(), "default");
  EXPECT_EQ(unnamed.encode("1234", false), (std::vector<int32_t>{5, 3}));
}

TEST(Tokenizer, SmolLM2SplitsEveryDigit) {
  // SmolLM's tokenizer (StarCoder's pre-tokenizer) isolates digits.
  const Tokenizer& tok = vocab("SmolLM2-135M-Instruct.Q4_1.gguf");
  const auto ids = tok.encode("2024", false);
  ASSERT_EQ(ids.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(tok.token_to_piece(ids[i]), std::string(1, "2024"[i]));
}

TEST(Tokenizer, MalformedUtf8IsReadAsLlamaCppReadsIt) {
  // Byte-level BPE decodes the text first: a byte that starts no character becomes
  // U+FFFD, an overlong form counts as the character it encodes.
  const Tokenizer& gpt2 = vocab("ggml-vocab-gpt-2.gguf");
  EXPECT_EQ(gpt2.encode("a\xFF b", false), gpt2.encode("a\xEF\xBF\xBD b", false));
  EXPECT_EQ(gpt2.encode("a\xC1\x81 b", false), gpt2.encode("aA b", false));
  // SentencePiece keeps the raw byte: "\xFF" falls back to <0xFF> (byte tokens are
  // ids 3 + byte), after the space prefix.
  const Tokenizer& spm = vocab("ggml-vocab-llama-spm.gguf");
  EXPECT_EQ(spm.find_token("<0xFF>"), 258);
  EXPECT_EQ(spm.encode("\xFF", false), (std::vector<int32_t>{29871, 258}));
  EXPECT_EQ(spm.decode({29871, 258}), "\xFF");
}

TEST(Tokenizer, AddBosWithoutABosTokenIsAnError) {
  Meta meta = bpe_meta();
  meta.emplace_back("tokenizer.ggml.add_bos_token", GgufValue(true));
  const Tokenizer tok = load(meta);
  EXPECT_THROW(tok.encode("ab"), Error);
  EXPECT_EQ(tok.encode("ab", false), (std::vector<int32_t>{2}));
}

void expect_format_error(const Meta& meta, const std::vector<std::string>& parts) {
  try {
    load(meta);
    ADD_FAILURE() << "no error; expected one naming " << parts.front();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

Meta without(Meta meta, const std::string& key) {
  std::erase_if(meta, [&](const auto& kv) { return kv.first == key; });
  return meta;
}

Meta with(Meta meta, const std::string& key, GgufValue v) {
  for (auto& kv : meta)
    if (kv.first == key) kv.second = std::move(v);
  return meta;
}

TEST(TokenizerErrors, UnknownModelIsNamedWithTheSupportedOnes) {
  expect_format_error(with(spm_meta(), "tokenizer.ggml.model", GgufValue("bert")),
                      {"[tokenizer]", "vocab.gguf", "'bert'", "llama", "gpt2"});
}

TEST(TokenizerErrors, UnknownPreTokenizerIsNamedWithTheSupportedOnes) {
  expect_format_error(bpe_meta("nope"),
                      {"tokenizer.ggml.pre", "'nope'", "default", "llama-bpe", "qwen2", "smollm", "gpt-2"});
}

TEST(TokenizerErrors, MissingKeysAreNamed) {
  expect_format_error(without(spm_meta(), "tokenizer.ggml.model"), {"tokenizer.ggml.model is missing"});
  expect_format_error(without(spm_meta(), "tokenizer.ggml.tokens"), {"tokenizer.ggml.tokens is missing"});
  expect_format_error(without(bpe_meta(), "tokenizer.ggml.merges"), {"tokenizer.ggml.merges is missing"});
  expect_format_error(with(spm_meta(), "tokenizer.ggml.tokens", strings({})),
                      {"tokenizer.ggml.tokens is empty"});
}

TEST(TokenizerErrors, MistypedKeysAreNamed) {
  expect_format_error(with(spm_meta(), "tokenizer.ggml.model", GgufValue(uint32_t(1))),
                      {"tokenizer.ggml.model", "expected a string"});
  expect_format_error(with(spm_meta(), "tokenizer.ggml.tokens", numbers<uint32_t>(GgufType::U32, {1, 2})),
                      {"tokenizer.ggml.tokens", "expected an array of str"});
  expect_format_error(with(spm_meta(), "tokenizer.ggml.scores", numbers<float>(GgufType::F32, {0, 0})),
                      {"tokenizer.ggml.scores has 2 entries for 11 tokens"});
  expect_format_error(with(spm_meta(), "tokenizer.ggml.token_type", numbers<float>(GgufType::F32, {0})),
                      {"tokenizer.ggml.token_type", "expected an array of i32"});
  Meta meta = spm_meta();
  meta.emplace_back("tokenizer.ggml.add_bos_token", GgufValue("yes"));
  expect_format_error(meta, {"tokenizer.ggml.add_bos_token", "expected a bool"});
  meta = spm_meta();
  meta.emplace_back("tokenizer.ggml.bos_token_id", GgufValue("1"));
  expect_format_error(meta, {"tokenizer.ggml.bos_token_id", "expected an integer"});
}

TEST(TokenizerErrors, IdsOutsideTheVocabAreRejected) {
  const Tokenizer& tok = vocab("ggml-vocab-llama-spm.gguf");
  for (int32_t bad : {-1, 32000, 1 << 30}) {
    try {
      tok.decode({15043, bad});
      ADD_FAILURE() << "no error for " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::IndexOutOfRange);
      EXPECT_NE(
          std::string(e.what()).find("token id " + std::to_string(bad) + " is outside the vocab [0, 32000)"),
          std::string::npos)
          << e.what();
    }
    EXPECT_THROW(tok.token_to_piece(bad), Error);
    EXPECT_THROW(tok.token_text(bad), Error);
    TokenDecoder dec(tok);
    EXPECT_THROW(dec.push(bad), Error);
    EXPECT_FALSE(tok.is_control(bad));
  }
}

}  // namespace
