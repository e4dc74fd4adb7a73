// Runs the `wick` binary of this build from a test (WICK_TEST_CLI, a compile
// definition of the CLI tests in CMakeLists.txt) and collects its exit status and output.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace wick::test {

struct CliRun {
  int status = -1;
  std::string out;
  std::string err;  // run_cli_split only
};

inline std::string cli_path() { return WICK_TEST_CLI; }

// `wick <args>` (args as a shell would split them): stdout only, or stdout and stderr together.
inline CliRun run_cli(const std::string& args, bool with_stderr = false) {
  const std::string cmd = "'" + cli_path() + "' " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  CliRun r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// `wick <args>` with stdout and stderr collected apart (through files in the temp folder).
inline CliRun run_cli_split(const std::string& args) {
  const std::string base =
      std::filesystem::temp_directory_path() / ("wick_cli_" + std::to_string(::getpid()));
  const std::string cmd = "'" + cli_path() + "' " + args + " > '" + base + ".out' 2> '" + base + ".err'";
  const int st = std::system(cmd.c_str());
  auto slurp = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  CliRun r{WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(base + ".out"), slurp(base + ".err")};
  std::filesystem::remove(base + ".out");
  std::filesystem::remove(base + ".err");
  return r;
}

}  // namespace wick::test
