// The `wick` command line:
//   wick devices [--json]                     CPU, SIMD, BLAS, GPU backends and GPUs
//   wick check [--device D]... [--family F]... [--json] [--verbose] [--list] [--seed N]
//   wick bench [--device D] [--family F]... [--json] [--min-time S] [--min-repeats N] [--seed N]
//   wick inspect FILE [--json] | quantize IN OUT --type T | export FILE TENSOR -o OUT   (GGUF, safetensors)
//   wick tokenize MODEL TEXT [--json] [--no-special] [--no-parse-special]
//   wick generate MODEL -p PROMPT [-n N] [-d DEVICE] [--chat] [--ctx N] [sampling flags] [--dump-logits OUT]
//                 [--tp N]
//   wick bench-model MODEL [-p N] [-n N] [-d DEVICE] [-r REPS] [--json] [--tp N]
// Exit status: 0 success, 1 a failed check or a benchmark that could not run, 2 bad usage.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>

#include "cmd_files.h"
#include "cmd_model.h"
#include "commands.h"
#include "printable.h"
#include "wick/error.h"

int main(int argc, char** argv) {
  using namespace wick::cli;
  CLI::App app{"wick: a C++ tensor library with a CPU reference backend and one CUDA/ROCm GPU backend"};
  app.require_subcommand(1);

  bool devices_json = false;
  auto* devices = app.add_subcommand("devices", "CPU cores, SIMD level, BLAS, GPU backends and GPUs");
  devices->add_flag("--json", devices_json, "machine-readable output");

  CheckOptions check;
  auto* chk =
      app.add_subcommand("check", "run every op case on every device present (CPU vs float64, GPU vs CPU)");
  chk->add_option("--device,-d", check.devices,
                  "device to check (cpu, gpu, gpu:N); repeatable; default all present");
  chk->add_option("--family,-f", check.families, "op family to check; repeatable; default all");
  chk->add_flag("--json", check.json, "machine-readable output");
  chk->add_flag("--verbose,-v", check.verbose, "one line per case");
  chk->add_flag("--list", check.list, "list the selected cases and exit");
  chk->add_option("--seed", check.seed, "seed of the random inputs");
  chk->add_flag("--inject-failure", check.inject_failure, "add a case that must fail (tests the exit status)")
      ->group("");

  BenchOptions bench;
  auto* bch = app.add_subcommand("bench", "throughput of the op cases on one device");
  bch->add_option("--device,-d", bench.device,
                  "device (cpu, gpu, gpu:N); default the first GPU, else the CPU");
  bch->add_option("--family,-f", bench.families, "op family; repeatable; default all");
  bch->add_flag("--json", bench.json, "machine-readable output");
  bch->add_option("--min-time", bench.min_time_s, "seconds of timed runs per case (after a warm-up)")
      ->check(CLI::Validator(
          [](const std::string& s) -> std::string {
            // CLI::PositiveNumber lets nan and inf through (nan <= 0 is false).
            double v = 0;
            return CLI::detail::lexical_cast(s, v) && std::isfinite(v) && v > 0
                       ? ""
                       : "must be a finite number > 0";
          },
          "POSITIVE"));
  bch->add_option("--min-repeats", bench.min_repeats, "timed runs per case at least")
      ->check(CLI::PositiveNumber);
  bch->add_option("--seed", bench.seed, "seed of the random inputs");

  std::string in_file, out_file, qtype, tensor_name;
  bool inspect_json = false;
  auto* inspect = app.add_subcommand("inspect", "metadata and tensor table of a GGUF or safetensors file");
  inspect->add_option("file", in_file, "GGUF or safetensors file")->required();
  inspect->add_flag("--json", inspect_json, "machine-readable output");
  auto* quantize = app.add_subcommand(
      "quantize", "re-quantize the matrices of a GGUF or safetensors file into a GGUF file");
  quantize->add_option("in", in_file, "input GGUF or safetensors file")->required();
  quantize->add_option("out", out_file, "output GGUF file")->required();
  quantize->add_option("--type,-t", qtype, "target type (q4_0, q8_0, q4_k, ...)")->required();
  auto* exp =
      app.add_subcommand("export", "one tensor of a GGUF or safetensors file, dequantized, as a .npy file");
  exp->add_option("file", in_file, "GGUF or safetensors file")->required();
  exp->add_option("tensor", tensor_name, "tensor name")->required();
  exp->add_option("--output,-o", out_file, "output .npy file")->required();

  TokenizeOptions tokenize;
  auto* tkz = app.add_subcommand("tokenize", "token ids of a text under a GGUF model's tokenizer");
  tkz->add_option("model", tokenize.model, "GGUF file (a vocab-only file is enough)")->required();
  tkz->add_option("text", tokenize.text, "text to tokenize")->required();
  tkz->add_flag("--json", tokenize.json, "ids and their pieces as JSON");
  tkz->add_flag("--no-special", tokenize.no_special, "add no BOS / EOS");
  tkz->add_flag("--no-parse-special", tokenize.no_parse_special,
                "control tokens written in the text stay text");

  const char* kTpHelp =
      "tensor parallelism over N ranks: N on the CPU (-d cpu), or 1 on a GPU (across GPUs it needs NCCL)";
  GenerateCliOptions gen;
  auto* gnr = app.add_subcommand("generate", "generate text with a GGUF model (llama, qwen2, qwen3)");
  gnr->add_option("model", gen.model, "GGUF model file")->required();
  gnr->add_option("--prompt,-p", gen.prompt, "prompt text")->required();
  gnr->add_option("--n-predict,-n", gen.n_predict, "tokens to generate; -1: until end of generation")
      ->check(CLI::Range(int64_t(-1), INT64_MAX));
  gnr->add_option("--device,-d", gen.device, "device (cpu, gpu, gpu:N); default the first GPU, else the CPU");
  gnr->add_flag("--chat", gen.chat, "apply the model's chat template to the prompt");
  gnr->add_option("--ctx,-c", gen.ctx, "KV cache length in tokens; default min(model context, 4096)");
  gnr->add_option("--temp", gen.sampler.temp, "temperature; 0: greedy")->capture_default_str();
  gnr->add_option("--top-k", gen.sampler.top_k, "top-k; 0: off")->capture_default_str();
  gnr->add_option("--top-p", gen.sampler.top_p, "top-p; 1: off")->capture_default_str();
  gnr->add_option("--min-p", gen.sampler.min_p, "min-p; 0: off")->capture_default_str();
  gnr->add_option("--repeat-penalty", gen.sampler.repeat_penalty, "repetition penalty; 1: off")
      ->capture_default_str();
  gnr->add_option("--repeat-last-n", gen.sampler.repeat_last_n,
                  "tokens the penalty looks at; -1: the context")
      ->capture_default_str();
  gnr->add_option("--seed,-s", gen.sampler.seed, "sampling seed; default random");
  gnr->add_option("--dump-logits", gen.dump_logits, "write the prompt's last logits (f32) to this .npy file");
  gnr->add_option("--tp", gen.tp, kTpHelp)->check(CLI::PositiveNumber);

  BenchModelOptions bm;
  auto* bmd =
      app.add_subcommand("bench-model", "prefill and decode tokens/s of a GGUF model (as llama-bench)");
  bmd->add_option("model", bm.model, "GGUF model file")->required();
  bmd->add_option("--n-prompt,-p", bm.n_prompt, "prompt tokens of the prefill test (0: skip)")
      ->capture_default_str();
  bmd->add_option("--n-gen,-n", bm.n_gen, "tokens of the decode test (0: skip)")->capture_default_str();
  bmd->add_option("--device,-d", bm.device, "device (cpu, gpu, gpu:N); default the first GPU, else the CPU");
  bmd->add_option("--repetitions,-r", bm.reps, "repetitions of each test")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bmd->add_flag("--json", bm.json, "machine-readable output");
  bmd->add_option("--tp", bm.tp, kTpHelp)->check(CLI::PositiveNumber);

  CLI11_PARSE(app, argc, argv);

  try {
    if (devices->parsed()) return cmd_devices(devices_json);
    if (chk->parsed()) return cmd_check(check);
    if (bch->parsed()) return cmd_bench(bench);
    if (inspect->parsed()) return cmd_inspect(in_file, inspect_json);
    if (quantize->parsed()) return cmd_quantize(in_file, out_file, qtype);
    if (exp->parsed()) return cmd_export(in_file, tensor_name, out_file);
    if (tkz->parsed()) return cmd_tokenize(tokenize);
    if (gnr->parsed()) return cmd_generate(gen);
    if (bmd->parsed()) return cmd_bench_model(bm);
  } catch (const std::exception& e) {
    // Messages quote names and strings from the files read: printed escaped.
    fmt::print(stderr, "wick: {}\n", printable(e.what()));
    return 2;
  }
  return 2;
}
