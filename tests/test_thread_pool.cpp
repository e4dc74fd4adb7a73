// The CPU backend's thread pool (src/backend/cpu/thread_pool.cpp, through run_parallel
// and parallel_for in strided.h): every task index runs exactly once per job, the
// chunks of parallel_for and parallel_chunks tile [0, n) without overlap, a thread
// that stalls leaves its parallel_chunks share to the others, the first exception a task
// throws reaches the caller after every task has finished, nested loops and callers
// on other threads run their tasks serially, and the pool keeps working after each.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "backend/cpu/strided.h"
#include "wick/options.h"

namespace wick {
namespace {

// Sets the CPU threads of wick's loops; the fixture restores the options afterwards.
class ThreadPool : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = options(); }
  void TearDown() override { set_options(saved_); }
  static void threads(int n) {
    Options o = options();
    o.cpu_threads = n;
    set_options(o);
  }
  Options saved_;
};

struct Counts {
  std::vector<std::atomic<int>> hits;
  std::atomic<int> seen_nt{0};
  explicit Counts(int n) : hits(size_t(n)) {}
};

TEST_F(ThreadPool, EachTaskRunsOncePerJob) {
  for (int nt : {1, 2, 3, 4, 7, 16}) {
    for (int job = 0; job < 50; ++job) {
      Counts c(nt);
      cpu::run_parallel(
          nt,
          [](void* p, int t, int n) {
            auto& c = *static_cast<Counts*>(p);
            c.hits[size_t(t)].fetch_add(1);
            c.seen_nt.store(n);
          },
          &c);
      for (int t = 0; t < nt; ++t) ASSERT_EQ(c.hits[size_t(t)].load(), 1) << "nt " << nt << " task " << t;
      ASSERT_EQ(c.seen_nt.load(), nt);
    }
  }
}

TEST_F(ThreadPool, ParallelForTilesTheRange) {
  for (int nthreads : {1, 2, 5, 8}) {
    threads(nthreads);
    for (size_t n : {size_t(1), size_t(7), size_t(64), size_t(1000), size_t(100003)}) {
      for (size_t grain : {size_t(0), size_t(1), size_t(16), size_t(4096)}) {
        std::vector<std::atomic<int>> hits(n);
        cpu::parallel_for(n, grain, [&](size_t b, size_t e) {
          ASSERT_LT(b, e);
          ASSERT_LE(e, n);
          for (size_t i = b; i < e; ++i) hits[i].fetch_add(1);
        });
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(hits[i].load(), 1)
              << "threads " << nthreads << " n " << n << " grain " << grain << " i " << i;
        }
      }
    }
  }
}

TEST_F(ThreadPool, ParallelChunksTilesTheRangeInChunks) {
  for (int nthreads : {1, 2, 5, 8}) {
    threads(nthreads);
    for (size_t n : {size_t(1), size_t(7), size_t(64), size_t(1000), size_t(100003)}) {
      for (size_t chunk : {size_t(0), size_t(1), size_t(3), size_t(16), size_t(4096)}) {
        std::vector<std::atomic<int>> hits(n);
        const size_t c = chunk ? chunk : 1;  // a chunk of 0 counts as 1
        cpu::parallel_chunks(n, chunk, [&](size_t b, size_t e) {
          // whole chunks (one thread, or a single chunk: all of [0, n) at once)
          ASSERT_LT(b, e);
          ASSERT_LE(e, n);
          ASSERT_EQ(b % c, 0u);
          ASSERT_TRUE(e % c == 0 || e == n);
          for (size_t i = b; i < e; ++i) hits[i].fetch_add(1);
        });
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(hits[i].load(), 1)
              << "threads " << nthreads << " n " << n << " chunk " << chunk << " i " << i;
        }
      }
    }
  }
}

// A thread that stalls leaves the rest of its share to the others: with 4 threads and
// 400 chunks, the thread holding chunk 0 (the first of share 0, 100 chunks) waits until
// the others have done every other chunk, its own share's included.
TEST_F(ThreadPool, ParallelChunksOthersTakeAStalledThreadsShare) {
  threads(4);
  const size_t n = 400;
  std::vector<std::atomic<int>> hits(n);
  std::atomic<size_t> done{0};
  std::atomic<size_t> done_when_released{0};
  cpu::parallel_chunks(n, 1, [&](size_t b, size_t) {
    // Chunk 0 waits until every other chunk is done, or 10 s.
    if (b == 0) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (done.load() < n - 1 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
      done_when_released.store(done.load());
    }
    hits[b].fetch_add(1);
    done.fetch_add(1);
  });
  EXPECT_EQ(done_when_released.load(), n - 1);  // the others did all the rest, not a timeout
  EXPECT_EQ(done.load(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
}

TEST_F(ThreadPool, ParallelForSumMatchesSerial) {
  threads(4);
  const size_t n = 1 << 20;
  std::vector<uint64_t> partial(n);
  cpu::parallel_for(n, 1024, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) partial[i] = uint64_t(i) * 3 + 1;
  });
  uint64_t sum = std::accumulate(partial.begin(), partial.end(), uint64_t(0));
  // sum of 3i + 1 over [0, n): 3 n (n - 1) / 2 + n.
  EXPECT_EQ(sum, 3 * uint64_t(n) * (n - 1) / 2 + n);
}

TEST_F(ThreadPool, FirstExceptionReachesTheCallerAfterAllTasks) {
  for (int thrower : {0, 1, 3}) {
    Counts c(4);
    struct Ctx {
      Counts* c;
      int thrower;
    } ctx{&c, thrower};
    EXPECT_THROW(cpu::run_parallel(
                     4,
                     [](void* p, int t, int) {
                       auto& x = *static_cast<Ctx*>(p);
                       x.c->hits[size_t(t)].fetch_add(1);
                       if (t == x.thrower) throw std::runtime_error("task failed");
                     },
                     &ctx),
                 std::runtime_error);
    for (int t = 0; t < 4; ++t) EXPECT_EQ(c.hits[size_t(t)].load(), 1) << "thrower " << thrower;
  }
  // The pool still runs jobs after a failed one.
  threads(4);
  std::atomic<size_t> total{0};
  cpu::parallel_for(1000, 10, [&](size_t b, size_t e) { total += e - b; });
  EXPECT_EQ(total.load(), 1000u);
}

TEST_F(ThreadPool, NestedLoopsRunSerially) {
  threads(4);
  std::vector<std::atomic<int>> hits(64 * 64);
  cpu::parallel_for(64, 1, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      cpu::parallel_for(64, 1, [&](size_t b2, size_t e2) {
        for (size_t j = b2; j < e2; ++j) hits[i * 64 + j].fetch_add(1);
      });
    }
  });
  for (size_t k = 0; k < hits.size(); ++k) ASSERT_EQ(hits[k].load(), 1) << k;
}

TEST_F(ThreadPool, CallersOnManyThreads) {
  threads(4);
  constexpr int kCallers = 6, kJobs = 200;
  constexpr size_t n = 4096;
  std::vector<std::thread> callers;
  std::vector<int> ok(kCallers, 0);
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      int good = 0;
      for (int j = 0; j < kJobs; ++j) {
        std::vector<std::atomic<int>> hits(n);
        cpu::parallel_for(n, 64, [&](size_t b, size_t e) {
          for (size_t i = b; i < e; ++i) hits[i].fetch_add(1);
        });
        bool all = true;
        for (size_t i = 0; i < n; ++i) all = all && hits[i].load() == 1;
        good += all;
      }
      ok[size_t(c)] = good;
    });
  }
  for (auto& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(ok[size_t(c)], kJobs) << "caller " << c;
}

}  // namespace
}  // namespace wick
