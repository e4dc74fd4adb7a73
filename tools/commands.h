// The `wick` CLI's own subcommands (tools/cmd_*.cpp); tools/main.cpp wires them to
// CLI11. Each returns the process exit status (see ExitCode) or throws: a UsageError
// for a bad command line, a wick::Error for everything else (main() maps its kind).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "wick/device.h"

namespace wick::cli {

// The process exit status, as README's CLI section documents it.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,  // the command ran and failed: a failed check, a benchmark case that could not
                     // run, an error of the library (out of memory, a GPU error, ...)
  kExitUsage = 2,    // the command line is wrong: an unknown subcommand or option, a missing or
                     // invalid argument (an unknown type, family or device)
  kExitFile = 3,     // a file could not be read or written, or is not a valid GGUF, safetensors
                     // or npy file (wick::Error of kind Io or Format)
};

// A bad command line (exit 2), raised by the subcommands' own checks of their arguments.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Device::parse of a --device argument, and the device must be present; UsageError otherwise.
Device parse_device(const std::string& name);

// `wick devices`: CPU cores, SIMD level, BLAS, GPU backends and GPUs.
int cmd_devices(bool json);

struct CheckOptions {
  std::vector<std::string> devices;   // empty: every device present
  std::vector<std::string> families;  // empty: every family
  bool json = false;
  bool verbose = false;  // one line per case
  bool list = false;     // list the selected cases, run nothing
  uint64_t seed = 1234;
  bool inject_failure = false;  // adds a case that must fail (tests the exit status)
};
// `wick check`: runs the parity cases, prints a table per device and family.
int cmd_check(const CheckOptions& o);

struct BenchOptions {
  std::string device;                 // empty: the first GPU if any, else the CPU
  std::vector<std::string> families;  // empty: every family
  bool json = false;
  double min_time_s = 0.25;  // timed time per case (after one warm-up run)
  int min_repeats = 5;
  uint64_t seed = 1234;
};
// `wick bench`: times the cases that declare bytes or flops.
int cmd_bench(const BenchOptions& o);

struct TokenizeOptions {
  std::string model;  // GGUF file with tokenizer.ggml.* metadata
  std::string text;
  bool json = false;              // {"ids": [...], "pieces": [...]}
  bool no_special = false;        // no BOS / EOS (llama.cpp's add_special = false)
  bool no_parse_special = false;  // control-token text stays text
};
// `wick tokenize`: the token ids of a text, on one line (or as JSON).
int cmd_tokenize(const TokenizeOptions& o);

// Shared by check and bench: the cases of the named families (all when empty);
// an unknown family name throws UsageError listing the known ones.
std::vector<size_t> select_cases(const std::vector<std::string>& families);

}  // namespace wick::cli
