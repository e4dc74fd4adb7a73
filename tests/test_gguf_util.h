// Helpers shared by the file-format tests (test_gguf*.cpp, test_npy.cpp): temporary
// directories and the independent Python oracle (tests/python/gguf_oracle.py).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace wick::test {

// The source tree (WICK_TEST_SOURCE_DIR: a compile definition of the test targets).
inline std::string source_dir() { return WICK_TEST_SOURCE_DIR; }

// A fresh, empty directory under the system temp dir, unique to this process and tag.
inline std::filesystem::path make_temp_dir(const std::string& tag) {
  auto p = std::filesystem::temp_directory_path() / ("wick_" + tag + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

// True when python3 can import gguf and numpy; otherwise `why` says what to install.
inline bool python_oracle_available(std::string& why) {
  if (std::system("python3 -c 'import gguf, numpy' > /dev/null 2>&1") != 0) {
    why = "python3 with the gguf and numpy packages is not available (pip install gguf numpy)";
    return false;
  }
  return true;
}

// Runs `gguf_oracle.py CMD ARG`; returns its exit status (3 = a python package is missing).
inline int run_oracle(const std::string& cmd, const std::string& arg) {
  const std::string line =
      "python3 '" + source_dir() + "/tests/python/gguf_oracle.py' " + cmd + " '" + arg + "'";
  const int rc = std::system(line.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
}

}  // namespace wick::test
