// The `wick` command line:
//   wick devices [--json]                     CPU, SIMD, BLAS, GPU backends and GPUs
//   wick check [--device D]... [--family F]... [--json] [--verbose] [--list] [--seed N]
//   wick bench [--device D] [--family F]... [--json] [--min-time S] [--min-repeats N] [--seed N]
//   wick inspect FILE [--json] | quantize IN OUT --type T | export FILE TENSOR -o OUT   (GGUF, safetensors)
//   wick tokenize MODEL TEXT [--json] [--no-special] [--no-parse-special]
// Exit status: 0 success, 1 a failed check or a benchmark that could not run, 2 bad usage.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>

#include "cmd_files.h"
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

  CLI11_PARSE(app, argc, argv);

  try {
    if (devices->parsed()) return cmd_devices(devices_json);
    if (chk->parsed()) return cmd_check(check);
    if (bch->parsed()) return cmd_bench(bench);
    if (inspect->parsed()) return cmd_inspect(in_file, inspect_json);
    if (quantize->parsed()) return cmd_quantize(in_file, out_file, qtype);
    if (exp->parsed()) return cmd_export(in_file, tensor_name, out_file);
    if (tkz->parsed()) return cmd_tokenize(tokenize);
  } catch (const std::exception& e) {
    // Messages quote names and strings from the files read: printed escaped.
    fmt::print(stderr, "wick: {}\n", printable(e.what()));
    return 2;
  }
  return 2;
}
