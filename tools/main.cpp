// The `wick` command line:
//   wick devices [--json]                     CPU, SIMD, BLAS, GPU backends and GPUs
//   wick check [--device D]... [--family F]... [--json] [--verbose] [--list] [--seed N]
//   wick bench [--device D] [--family F]... [--json] [--min-time S] [--min-repeats N] [--seed N]
//   wick inspect FILE [--json]                 (GGUF, safetensors, npy)
//   wick quantize IN OUT --type T [--output-tensor-type T] [--allow-requantize]
//   wick export FILE TENSOR -o OUT             (GGUF, safetensors)
//   wick tokenize MODEL TEXT [--json] [--no-special] [--no-parse-special]
//   wick generate MODEL -p PROMPT [-n N] [-d DEVICE] [--chat] [--ctx N] [sampling flags] [--dump-logits OUT]
//                 [--tp N] [--no-graph]
//   wick bench-model MODEL [-p N] [-n N] [--depth N] [-d DEVICE] [-r REPS] [--json] [--tp N] [--no-graph]
//   wick --version
// Exit status (ExitCode in commands.h, README's CLI section): 0 success, 1 a failed check,
// a benchmark that could not run or another error of the library, 2 bad usage, 3 a file
// that cannot be read or written or is not a valid model file.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstring>

#include "cmd_files.h"
#include "cmd_model.h"
#include "commands.h"
#include "printable.h"
#include "wick/check.h"
#include "wick/error.h"
#include "wick/quant.h"
#include "wick_cli_version.h"

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

// The types `quantize` writes: every ggml type wick implements but the activation formats.
std::string weight_types() {
  std::vector<std::string> names;
  for (wick::GgmlType t : wick::kAllGgmlTypes)
    if (t != wick::GgmlType::Q8_1 && t != wick::GgmlType::Q8_K) names.emplace_back(wick::ggml_type_name(t));
  return joined(names);
}

// The exit status of an exception out of a subcommand (see ExitCode).
int exit_code_of(const wick::Error& e) {
  using wick::ErrorKind;
  return e.kind() == ErrorKind::Io || e.kind() == ErrorKind::Format ? wick::cli::kExitFile
                                                                    : wick::cli::kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace wick::cli;
  CLI::App app{"wick: a C++ tensor library with a CPU reference backend and one CUDA/ROCm GPU backend"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("wick {} (commit {})", WICK_CLI_VERSION, WICK_CLI_COMMIT));
  app.footer(
      "Exit status: 0 success; 1 a failed check, a benchmark case that could not run or another error;\n"
      "2 bad usage; 3 a file that cannot be read or written, or is not a GGUF, safetensors or npy file.");
  const std::string devices_help = "cpu, gpu (the first GPU), gpu:N";
  const std::string families_help = "known: " + joined(wick::check::families());

  bool devices_json = false;
  auto* devices = app.add_subcommand("devices", "CPU cores, SIMD level, BLAS, GPU backends and GPUs");
  devices->add_flag("--json", devices_json, "machine-readable output");

  CheckOptions check;
  auto* chk =
      app.add_subcommand("check", "run every op case on every device present (CPU vs float64, GPU vs CPU)");
  chk->add_option("--device,-d", check.devices,
                  "device to check (" + devices_help + "); repeatable; default all present");
  chk->add_option("--family,-f", check.families,
                  "op family to check; repeatable; default all (" + families_help + ")");
  chk->add_flag("--json", check.json, "machine-readable output");
  chk->add_flag("--verbose,-v", check.verbose, "one line per case");
  chk->add_flag("--list", check.list, "list the selected cases and exit");
  chk->add_option("--seed", check.seed, "seed of the random inputs")->capture_default_str();
  chk->add_flag("--inject-failure", check.inject_failure, "add a case that must fail (tests the exit status)")
      ->group("");

  BenchOptions bench;
  auto* bch = app.add_subcommand("bench", "throughput of the op cases on one device");
  bch->add_option("--device,-d", bench.device,
                  "device (" + devices_help + "); default the first GPU, else the CPU");
  bch->add_option("--family,-f", bench.families,
                  "op family; repeatable; default all (" + families_help + ")");
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
          "POSITIVE"))
      ->capture_default_str();
  bch->add_option("--repetitions,-r,--min-repeats", bench.min_repeats, "timed runs per case at least")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bch->add_option("--seed", bench.seed, "seed of the random inputs")->capture_default_str();

  std::string in_file, out_file, tensor_name;
  bool inspect_json = false;
  auto* inspect =
      app.add_subcommand("inspect", "metadata and tensor table of a GGUF, safetensors or npy file");
  inspect->add_option("file", in_file, "GGUF, safetensors or npy file")->required();
  inspect->add_flag("--json", inspect_json, "machine-readable output");
  QuantizeOptions quant;
  auto* quantize = app.add_subcommand(
      "quantize",
      "quantize the matrices of a GGUF or safetensors file into a GGUF file, tensor by tensor (one line "
      "each on stdout); a Hugging Face llama-family safetensors file (with its config.json beside it) "
      "gets llama.cpp's tensor names and metadata");
  quantize->add_option("in", quant.in, "input GGUF or safetensors file")->required();
  quantize->add_option("out", quant.out, "output GGUF file (written to a temporary file, renamed at the end)")
      ->required();
  quantize->add_option("--type,-t", quant.type, "target type: " + weight_types())->required();
  quantize->add_option("--output-tensor-type", quant.output_type,
                       "type of output.weight (lm_head.weight); default the target type");
  quantize->add_flag("--allow-requantize", quant.allow_requantize,
                     "quantize tensors that are already quantized (lossy: their error adds up)");
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
  const char* kNoGraphHelp =
      "run every GPU decode step as it comes, not as replays of one recorded graph (same kernels)";
  GenerateCliOptions gen;
  auto* gnr = app.add_subcommand("generate", "generate text with a GGUF model (llama, qwen2, qwen3)");
  gnr->add_option("model", gen.model, "GGUF model file")->required();
  gnr->add_option("--prompt,-p", gen.prompt, "prompt text")->required();
  gnr->add_option("--n-predict,-n", gen.n_predict, "tokens to generate; -1: until end of generation")
      ->check(CLI::Range(int64_t(-1), INT64_MAX));
  gnr->add_option("--device,-d", gen.device,
                  "device (" + devices_help + "); default the first GPU, else the CPU");
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
  gnr->add_flag("!--no-graph", gen.graph, kNoGraphHelp);

  BenchModelOptions bm;
  auto* bmd =
      app.add_subcommand("bench-model", "prefill and decode tokens/s of a GGUF model (as llama-bench)");
  bmd->add_option("model", bm.model, "GGUF model file")->required();
  bmd->add_option("--n-prompt,-p", bm.n_prompt, "prompt tokens of the prefill test (0: skip)")
      ->capture_default_str();
  bmd->add_option("--n-gen,-n", bm.n_gen, "tokens of the decode test (0: skip)")->capture_default_str();
  bmd->add_option("--depth", bm.depth, "tokens already in the cache when each test starts (llama-bench's -d)")
      ->capture_default_str();
  bmd->add_option("--device,-d", bm.device,
                  "device (" + devices_help + "); default the first GPU, else the CPU");
  bmd->add_option("--repetitions,-r", bm.reps, "repetitions of each test")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bmd->add_flag("--json", bm.json, "machine-readable output");
  bmd->add_option("--tp", bm.tp, kTpHelp)->check(CLI::PositiveNumber);
  bmd->add_flag("!--no-graph", bm.graph, kNoGraphHelp);

  // An unknown subcommand is named as such (CLI11 would report a missing one).
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
      names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      fmt::print(stderr, "wick: unknown subcommand '{}' (known: {}); see wick --help\n", printable(argv[1]),
                 joined(names));
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every other parse error is a usage error.
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }

  try {
    if (devices->parsed()) return cmd_devices(devices_json);
    if (chk->parsed()) return cmd_check(check);
    if (bch->parsed()) return cmd_bench(bench);
    if (inspect->parsed()) return cmd_inspect(in_file, inspect_json);
    if (quantize->parsed()) return cmd_quantize(quant);
    if (exp->parsed()) return cmd_export(in_file, tensor_name, out_file);
    if (tkz->parsed()) return cmd_tokenize(tokenize);
    if (gnr->parsed()) return cmd_generate(gen);
    if (bmd->parsed()) return cmd_bench_model(bm);
  } catch (const UsageError& e) {
    fmt::print(stderr, "wick: {}; see wick --help\n", printable(e.what()));
    return kExitUsage;
  } catch (const wick::Error& e) {
    // Messages quote names and strings from the files read: printed escaped.
    fmt::print(stderr, "wick: {}\n", printable(e.what()));
    return exit_code_of(e);
  } catch (const std::exception& e) {
    fmt::print(stderr, "wick: {}\n", printable(e.what()));
    return kExitFailure;
  }
  return kExitUsage;
}
