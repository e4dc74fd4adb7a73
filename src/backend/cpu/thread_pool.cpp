// wick's CPU thread pool (strided.h: run_parallel). One job at a time: the caller
// publishes (generation, thread count) in one atomic word, workers 1..nt-1 run their
// task, and the last to finish wakes the caller. Waiting (for a job, or for the
// workers) spins for a bounded time with sched_yield, so a waiting thread gives its
// core to any runnable thread, then sleeps on the atomic (a futex). Measured on a
// shared 2-core machine: OpenMP's default busy-wait gave 0.64 decode tokens/s where
// this wait gives 12 (docs/PERFORMANCE.md).
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "backend/cpu/strided.h"

namespace wick::cpu {

namespace {

// How long a waiting thread spins (yielding) before it sleeps: long enough to catch
// the next parallel loop of a sequence of small ops, short against a sleeping wake-up.
constexpr auto kSpin = std::chrono::microseconds(50);

// Waits until pred() holds: spin with sched_yield for kSpin, then atomic waits on
// `word` while it still reads `seen`.
template <class T, class Pred>
void wait_for(const std::atomic<T>& word, Pred pred) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (unsigned i = 0; !pred(); ++i) {
    if (i % 64 == 63 && std::chrono::steady_clock::now() > until) {
      T v = word.load(std::memory_order_acquire);
      if (!pred()) word.wait(v, std::memory_order_acquire);
    } else {
      sched_yield();
    }
  }
}

thread_local bool t_in_pool = false;  // a worker, or a caller running its job

class Pool {
 public:
  static Pool& get() {
    static Pool* pool = new Pool;  // never destroyed: workers sleep until the process ends
    return *pool;
  }

  void run(int nt, void (*task)(void*, int, int), void* ctx) {
    std::unique_lock<std::mutex> lock(run_mu_, std::try_to_lock);
    if (t_in_pool || !lock.owns_lock()) {  // nested, or another thread's job holds the pool
      for (int t = 0; t < nt; ++t) task(ctx, t, nt);
      return;
    }
    while (int(workers_.size()) < nt - 1) {
      const int index = int(workers_.size()) + 1;
      workers_.emplace_back([this, index] { work(index); });
      workers_.back().detach();
    }
    task_ = task;
    ctx_ = ctx;
    error_ = nullptr;
    pending_.store(nt - 1, std::memory_order_relaxed);
    const uint64_t gen = (job_.load(std::memory_order_relaxed) >> 16) + 1;
    job_.store((gen << 16) | uint64_t(nt), std::memory_order_release);
    job_.notify_all();
    t_in_pool = true;
    try {
      task(ctx, 0, nt);
    } catch (...) {
      record(std::current_exception());
    }
    t_in_pool = false;
    wait_for(pending_, [&] { return pending_.load(std::memory_order_acquire) == 0; });
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void work(int index) {
    t_in_pool = true;
    uint64_t seen = 0;
    for (;;) {
      uint64_t job = 0;
      wait_for(job_, [&] { return ((job = job_.load(std::memory_order_acquire)) >> 16) != (seen >> 16); });
      seen = job;
      const int nt = int(job & 0xffff);
      if (index >= nt) continue;
      try {
        task_(ctx_, index, nt);
      } catch (...) {
        record(std::current_exception());
      }
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
    }
  }
  void record(std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(error_mu_);
    if (!error_) error_ = e;
  }

  std::mutex run_mu_;  // one job at a time
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> job_{0};  // generation << 16 | thread count
  std::atomic<int> pending_{0};   // workers of the job still running
  void (*task_)(void*, int, int) = nullptr;
  void* ctx_ = nullptr;
  std::mutex error_mu_;
  std::exception_ptr error_;
};

}  // namespace

bool in_parallel() { return t_in_pool; }

void run_parallel(int nt, void (*task)(void*, int, int), void* ctx) {
  if (nt > 0xffff) nt = 0xffff;
  Pool::get().run(nt, task, ctx);
}

}  // namespace wick::cpu
