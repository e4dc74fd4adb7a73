// Helpers shared by the file-format tests (test_gguf*.cpp, test_npy.cpp, test_io_*.cpp):
// temporary directories, a hand-written byte builder and the independent Python oracle
// (tests/python/gguf_oracle.py).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

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

// A hand-written little-endian byte builder, independent of the writers under test.
struct Bytes {
  std::vector<uint8_t> b;
  template <class T>
  Bytes& put(T v) {
    const size_t at = b.size();
    b.resize(at + sizeof(T));
    std::memcpy(b.data() + at, &v, sizeof(T));
    return *this;
  }
  // A GGUF string: u64 length, then the bytes.
  Bytes& str(const std::string& s) {
    put<uint64_t>(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& pad(size_t a) {
    while (b.size() % a) b.push_back(0);
    return *this;
  }
};

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
