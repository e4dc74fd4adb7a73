// Strided iteration for the CPU backend, written once: walkers over one or more
// layouts of the same dims in row-major order, and a parallel-for over ranges.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <vector>

#include "wick/layout.h"

namespace wick::cpu {

// The threads of wick's parallel loops: options().cpu_threads, else OpenMP's default
// (OMP_NUM_THREADS, else the cores this process may run on).
int max_threads();

// wick's thread pool (thread_pool.cpp): runs task(ctx, t, nt) for t in [0, nt), the
// caller taking t = 0, and returns when all are done (rethrowing the first exception
// a task threw). Idle workers spin briefly, yielding the core, then sleep (a futex):
// OpenMP's busy-wait starved the working threads on a shared machine
// (docs/PERFORMANCE.md). Called from a task, or while another thread's job holds the
// pool, it runs the tasks serially on the caller.
void run_parallel(int nt, void (*task)(void*, int, int), void* ctx);

// Whether the calling thread is running a task of the pool (a nested parallel loop
// would run serially there).
bool in_parallel();

// Runs f(begin, end) over [0, n) split across the pool's threads; serial below `grain`.
template <class F>
void parallel_for(size_t n, size_t grain, F&& f) {
  if (n == 0) return;
  int max_threads = cpu::max_threads();
  size_t chunks = grain ? (n + grain - 1) / grain : 1;
  if (max_threads <= 1 || chunks <= 1) {
    f(size_t(0), n);
    return;
  }
  int nt = int(chunks < size_t(max_threads) ? chunks : size_t(max_threads));
  struct Ctx {
    std::remove_reference_t<F>* f;
    size_t n;
  } ctx{&f, n};
  run_parallel(
      nt,
      [](void* p, int t, int nt) {
        const Ctx& c = *static_cast<const Ctx*>(p);
        size_t per = (c.n + size_t(nt) - 1) / size_t(nt);
        size_t b = per * size_t(t), e = b + per < c.n ? b + per : c.n;
        if (b < e) (*c.f)(b, e);
      },
      &ctx);
}

// Runs f(begin, end) over [0, n) in chunks of `chunk`. Thread t owns the t-th contiguous
// share of the chunks and takes them in order from its own counter; a thread done with
// its share takes the chunks left in the others' (the next thread's first), so that a
// thread the system slows leaves its rows to the others (the quantized mat-vec:
// docs/PERFORMANCE.md). When no thread is slowed, every call gives each thread the same
// rows, which stay in that core's cache from one call to the next (index_select:
// docs/PERFORMANCE.md).
template <class F>
void parallel_chunks(size_t n, size_t chunk, F&& f) {
  if (n == 0) return;
  if (chunk == 0) chunk = 1;
  const size_t chunks = (n + chunk - 1) / chunk;
  const int max_t = cpu::max_threads();
  const int nt = int(chunks < size_t(max_t) ? chunks : size_t(max_t));
  if (nt <= 1) {
    f(size_t(0), n);
    return;
  }
  struct alignas(64) Share {  // a thread's chunks [next, end), on a cache line of its own
    std::atomic<size_t> next;
    size_t end;
  };
  std::unique_ptr<Share[]> shares(new Share[size_t(nt)]);
  for (int t = 0; t < nt; ++t) {
    shares[size_t(t)].next.store(chunks * size_t(t) / size_t(nt), std::memory_order_relaxed);
    shares[size_t(t)].end = chunks * size_t(t + 1) / size_t(nt);
  }
  struct Ctx {
    std::remove_reference_t<F>* f;
    size_t n, chunk;
    Share* shares;
  } ctx{&f, n, chunk, shares.get()};
  run_parallel(
      nt,
      [](void* p, int t, int nt) {
        Ctx& c = *static_cast<Ctx*>(p);
        for (int k = 0; k < nt; ++k) {
          Share& s = c.shares[(t + k) % nt];
          for (size_t i; (i = s.next.fetch_add(1, std::memory_order_relaxed)) < s.end;) {
            const size_t b = i * c.chunk;
            (*c.f)(b, b + c.chunk < c.n ? b + c.chunk : c.n);
          }
        }
      },
      &ctx);
}

// Storage offset (elements) of the element at row-major linear index i.
inline size_t strided_offset(size_t i, const Layout& l) {
  const auto& d = l.dims();
  const auto& s = l.strides();
  size_t off = l.start_offset();
  for (size_t k = d.size(); k-- > 0;) {
    size_t idx = i % d[k];
    i /= d[k];
    off += idx * s[k];
  }
  return off;
}

// Walks K layouts with identical dims in row-major order from linear index `begin`,
// keeping each operand's storage offset: `offset[j]` after construction and each next().
template <size_t K>
class StridedWalker {
 public:
  StridedWalker(const std::array<const Layout*, K>& layouts, size_t begin) : layouts_(layouts) {
    const auto& d = layouts[0]->dims();
    idx_.assign(d.size(), 0);
    size_t rem = begin;
    for (size_t k = d.size(); k-- > 0;) {
      idx_[k] = d[k] ? rem % d[k] : 0;
      rem = d[k] ? rem / d[k] : 0;
    }
    for (size_t j = 0; j < K; ++j) {
      offset[j] = layouts[j]->start_offset();
      for (size_t k = 0; k < d.size(); ++k) offset[j] += idx_[k] * layouts[j]->strides()[k];
    }
  }
  void next() {
    const auto& d = layouts_[0]->dims();
    for (size_t k = d.size(); k-- > 0;) {
      if (++idx_[k] < d[k]) {
        for (size_t j = 0; j < K; ++j) offset[j] += layouts_[j]->strides()[k];
        return;
      }
      for (size_t j = 0; j < K; ++j) offset[j] -= (d[k] - 1) * layouts_[j]->strides()[k];
      idx_[k] = 0;
    }
  }
  std::array<size_t, K> offset{};

 private:
  std::array<const Layout*, K> layouts_;
  std::vector<size_t> idx_;
};

// Calls f(out_index, in_offset) for each element of `l` in row-major order, in
// parallel chunks when n is large. Contiguous layouts take a plain loop.
template <class F>
void for_each_offset(const Layout& l, F&& f, size_t grain = 1 << 15) {
  size_t n = l.elem_count();
  if (l.is_contiguous()) {
    size_t o = l.start_offset();
    parallel_for(n, grain, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) f(i, o + i);
    });
    return;
  }
  parallel_for(n, grain, [&](size_t b, size_t e) {
    StridedWalker<1> w({&l}, b);
    for (size_t i = b; i < e; ++i, w.next()) f(i, w.offset[0]);
  });
}

// Same for two and three layouts of identical dims: f(out_index, off_a, off_b[, off_c]).
template <class F>
void for_each_offset2(const Layout& a, const Layout& b, F&& f, size_t grain = 1 << 15) {
  size_t n = a.elem_count();
  if (a.is_contiguous() && b.is_contiguous()) {
    size_t oa = a.start_offset(), ob = b.start_offset();
    parallel_for(n, grain, [&](size_t s, size_t e) {
      for (size_t i = s; i < e; ++i) f(i, oa + i, ob + i);
    });
    return;
  }
  parallel_for(n, grain, [&](size_t s, size_t e) {
    StridedWalker<2> w({&a, &b}, s);
    for (size_t i = s; i < e; ++i, w.next()) f(i, w.offset[0], w.offset[1]);
  });
}

template <class F>
void for_each_offset3(const Layout& a, const Layout& b, const Layout& c, F&& f, size_t grain = 1 << 15) {
  size_t n = a.elem_count();
  parallel_for(n, grain, [&](size_t s, size_t e) {
    StridedWalker<3> w({&a, &b, &c}, s);
    for (size_t i = s; i < e; ++i, w.next()) f(i, w.offset[0], w.offset[1], w.offset[2]);
  });
}

}  // namespace wick::cpu
