// Progress on stderr for long runs: a rewritten line on a terminal, otherwise a
// line every few seconds (so logs of CI runs stay short but show life).
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace wick::cli {

class Progress {
 public:
  explicit Progress(size_t total) : total_(total), tty_(::isatty(STDERR_FILENO) != 0), last_(clock::now()) {}
  ~Progress() { done(); }

  // Reports that item `k` (0-based) of `total` is starting.
  void step(size_t k, const std::string& what) {
    auto now = clock::now();
    if (tty_) {
      std::string line = fmt::format("[{}/{}] {}", k + 1, total_, what);
      if (line.size() > 100) line.resize(100);
      fmt::print(stderr, "\r\033[K{}", line);
      std::fflush(stderr);
      shown_ = true;
    } else if (now - last_ > std::chrono::seconds(5)) {
      fmt::print(stderr, "[{}/{}] {}\n", k + 1, total_, what);
      last_ = now;
    }
  }
  void done() {
    if (tty_ && shown_) fmt::print(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  using clock = std::chrono::steady_clock;
  size_t total_;
  bool tty_, shown_ = false;
  clock::time_point last_;
};

}  // namespace wick::cli
