// The model runner (include/wick/model.h) and the tokenizer (tokenizer.h). Loading,
// forward passes and generation run without the GIL; generate's callback takes it
// back for each token.
#include "wick/model.h"

#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "common.h"
#include "wick/io.h"
#include "wick/tokenizer.h"

namespace wick::py {

namespace {

using namespace nb::literals;

// What Model.generate returns: the generated ids, their text and the run's figures.
struct GenerateResult {
  std::vector<int32_t> tokens;
  std::string text;
  GenerateStats stats;
};

ModelOptions model_options(nb::handle device, size_t ctx, size_t memory_limit) {
  ModelOptions o;
  o.device = to_device_or(device, Device::cpu());
  o.ctx = ctx;
  o.memory_limit = memory_limit;
  return o;
}

}  // namespace

void bind_model(nb::module_& m) {
  nb::class_<ModelInfo>(m, "ModelInfo")
      .def_ro("arch", &ModelInfo::arch)
      .def_ro("name", &ModelInfo::name)
      .def_ro("device", &ModelInfo::device)
      .def_ro("n_vocab", &ModelInfo::n_vocab)
      .def_ro("n_embd", &ModelInfo::n_embd)
      .def_ro("n_layer", &ModelInfo::n_layer)
      .def_ro("n_head", &ModelInfo::n_head)
      .def_ro("n_head_kv", &ModelInfo::n_head_kv)
      .def_ro("head_dim", &ModelInfo::head_dim)
      .def_ro("n_ff", &ModelInfo::n_ff)
      .def_ro("n_ctx_train", &ModelInfo::n_ctx_train)
      .def_ro("n_ctx", &ModelInfo::n_ctx)
      .def_ro("n_params", &ModelInfo::n_params)
      .def_ro("weight_bytes", &ModelInfo::weight_bytes)
      .def_ro("kv_cache_bytes", &ModelInfo::kv_cache_bytes)
      .def_ro("work_bytes", &ModelInfo::work_bytes)
      .def("__repr__", [](const ModelInfo& i) {
        return "ModelInfo(arch='" + i.arch + "', name='" + i.name + "', device=" + i.device.str() +
               ", n_layer=" + std::to_string(i.n_layer) + ", n_vocab=" + std::to_string(i.n_vocab) + ")";
      });
  nb::class_<MemoryBudget>(m, "MemoryBudget")
      .def_ro("weights", &MemoryBudget::weights)
      .def_ro("kv_cache", &MemoryBudget::kv_cache)
      .def_ro("work", &MemoryBudget::work)
      .def_ro("available", &MemoryBudget::available)
      .def("needed", &MemoryBudget::needed);
  nb::class_<GenerateStats>(m, "GenerateStats")
      .def_ro("prompt_tokens", &GenerateStats::prompt_tokens)
      .def_ro("prompt_seconds", &GenerateStats::prompt_seconds)
      .def_ro("generated_tokens", &GenerateStats::generated_tokens)
      .def_ro("decode_steps", &GenerateStats::decode_steps)
      .def_ro("decode_seconds", &GenerateStats::decode_seconds)
      .def_ro("stopped_at_eog", &GenerateStats::stopped_at_eog)
      .def_ro("seed", &GenerateStats::seed);
  nb::class_<GenerateResult>(m, "GenerateResult")
      .def_ro("tokens", &GenerateResult::tokens)
      .def_ro("text", &GenerateResult::text)
      .def_ro("stats", &GenerateResult::stats)
      .def("__repr__", [](const GenerateResult& r) {
        return "GenerateResult(" + std::to_string(r.tokens.size()) +
               " tokens, text=" + nb::cast<std::string>(nb::repr(nb::str(r.text.data(), r.text.size()))) +
               ")";
      });

  nb::class_<Tokenizer>(m, "Tokenizer",
                        "A GGUF model's tokenizer (SentencePiece or byte-level BPE), as llama.cpp's.")
      .def_static("from_gguf", &Tokenizer::from_gguf, "file"_a)
      .def("encode", &Tokenizer::encode, "text"_a, "add_special"_a = true, "parse_special"_a = true)
      .def("decode", &Tokenizer::decode, "ids"_a, "special"_a = false)
      .def(
          "token_to_piece",
          [](const Tokenizer& t, int32_t id, bool special) {
            std::string p = t.token_to_piece(id, special);
            return nb::bytes(p.data(), p.size());
          },
          "id"_a, "special"_a = true, "The bytes a token stands for (may be part of a UTF-8 character).")
      .def("token_text", &Tokenizer::token_text, "id"_a)
      .def("find_token", &Tokenizer::find_token, "text"_a)
      .def("is_end_of_generation", &Tokenizer::is_end_of_generation, "id"_a)
      .def("is_control", &Tokenizer::is_control, "id"_a)
      .def_prop_ro("vocab_size", &Tokenizer::vocab_size)
      .def_prop_ro("bos", &Tokenizer::bos)
      .def_prop_ro("eos", &Tokenizer::eos)
      .def_prop_ro("eot", &Tokenizer::eot)
      .def_prop_ro("add_bos", &Tokenizer::add_bos)
      .def_prop_ro("add_eos", &Tokenizer::add_eos)
      .def_prop_ro("pre_tokenizer", &Tokenizer::pre_tokenizer)
      .def_prop_ro("chat_template", &Tokenizer::chat_template)
      .def(
          "apply_chat_template",
          [](const Tokenizer& t, nb::handle messages, bool add_generation_prompt) {
            std::vector<ChatMessage> msgs;
            for (nb::handle msg : nb::iter(messages)) {
              msgs.push_back({nb::cast<std::string>(msg["role"]), nb::cast<std::string>(msg["content"])});
            }
            return apply_chat_template(detect_chat_template(t.chat_template()), msgs, add_generation_prompt);
          },
          "messages"_a, "add_generation_prompt"_a = true,
          "The prompt for [{'role': ..., 'content': ...}, ...] in the model's chat format (tokenize it with "
          "parse_special=True).");

  nb::class_<Model>(m, "Model", "A GGUF language model (llama, qwen2, qwen3) on a device.")
      .def_static(
          "load",
          [](const std::string& path, nb::handle device, size_t ctx, size_t memory_limit) {
            ModelOptions o = model_options(device, ctx, memory_limit);
            nb::gil_scoped_release unlocked;
            return Model::load(path, o);
          },
          "path"_a, "device"_a = nb::none(), "ctx"_a = 0, "memory_limit"_a = 0,
          "Opens, checks and uploads a model; ctx: tokens the KV cache holds (0: min(the model's, 4096)).")
      .def_static(
          "memory_budget",
          [](const std::string& path, nb::handle device, size_t ctx, size_t memory_limit) {
            return Model::memory_budget(path, model_options(device, ctx, memory_limit));
          },
          "path"_a, "device"_a = nb::none(), "ctx"_a = 0, "memory_limit"_a = 0)
      .def_prop_ro("info", &Model::info)
      .def_prop_ro("has_tokenizer", &Model::has_tokenizer)
      .def_prop_ro("tokenizer", &Model::tokenizer, nb::rv_policy::copy)
      .def("tokenize", &Model::tokenize, "text"_a, "add_special"_a = true, "parse_special"_a = false)
      .def("forward", &Model::forward, "tokens"_a, "all_logits"_a = false,
           nb::call_guard<nb::gil_scoped_release>(),
           "Runs tokens at position and returns f32 logits on the device: (1, n_vocab), or (len, n_vocab) "
           "with "
           "all_logits.")
      .def_prop_ro("position", &Model::position)
      .def("reset", &Model::reset)
      .def(
          "generate",
          [](Model& model, const std::vector<int32_t>& prompt, int64_t n_predict, float temp, int32_t top_k,
             float top_p, float min_p, float repeat_penalty, int32_t repeat_last_n,
             std::optional<uint32_t> seed, nb::object callback) {
            GenerateOptions g;
            g.n_predict = n_predict;
            g.sampler.temp = temp;
            g.sampler.top_k = top_k;
            g.sampler.top_p = top_p;
            g.sampler.min_p = min_p;
            g.sampler.repeat_penalty = repeat_penalty;
            g.sampler.repeat_last_n = repeat_last_n;
            g.sampler.seed = seed.value_or(SamplerParams::kRandomSeed);
            GenerateResult r;
            std::exception_ptr callback_error;
            {
              nb::gil_scoped_release unlocked;
              r.stats = model.generate(prompt, g, [&](int32_t id, std::string_view text) {
                r.tokens.push_back(id);
                r.text.append(text);
                if (callback.is_none()) return true;
                nb::gil_scoped_acquire gil;
                try {
                  nb::object go_on = callback(id, nb::str(text.data(), text.size()));
                  return go_on.is_none() || nb::cast<bool>(go_on);
                } catch (...) {
                  callback_error = std::current_exception();  // raised again once generation stopped
                  return false;
                }
              });
            }
            if (callback_error) std::rethrow_exception(callback_error);
            return r;
          },
          "prompt"_a, "n_predict"_a = -1, "temp"_a = 0.8f, "top_k"_a = 40, "top_p"_a = 0.95f,
          "min_p"_a = 0.05f, "repeat_penalty"_a = 1.0f, "repeat_last_n"_a = 64, "seed"_a = nb::none(),
          "callback"_a = nb::none(),
          "Feeds prompt (token ids) at position, then samples up to n_predict tokens (-1: until the end of "
          "generation or a full cache); temp <= 0 is greedy. callback(id, text) is called for each token and "
          "stops "
          "generation by returning False.");
}

}  // namespace wick::py
