// oneDNN glue (onednn.h).
#include "backend/cpu/onednn.h"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <list>
#include <mutex>
#include <utility>
#include <vector>

#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/simd.h"
#include "backend/cpu/strided.h"
#include "wick/error.h"

namespace wick::cpu::onednn {

namespace {

// oneDNN's OpenMP runtime threads each primitive over omp_get_max_threads(): set it
// for the scope of a call, then restore the caller's.
class ThreadScope {
 public:
  explicit ThreadScope(int want) : saved_(omp_get_max_threads()) {
    if (want != saved_) omp_set_num_threads(want);
  }
  ~ThreadScope() {
    if (omp_get_max_threads() != saved_) omp_set_num_threads(saved_);
  }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int saved_;
};

[[noreturn]] void rethrow(const dnnl::error& e, const char* op) {
  throw_error(e.status == dnnl_out_of_memory ? ErrorKind::OutOfMemory : ErrorKind::InvalidArgument, op,
              fmt::format("oneDNN: {}", e.what()));
}

// Least recently used primitives are dropped past this many: the shapes of a model's
// layers fit, and a kernel JIT-compiled again costs well under a millisecond.
constexpr size_t kCacheEntries = 256;

// Bytes a reorder writes per thread, at least (a copy of 256 KiB takes some microseconds).
constexpr double kReorderBytesPerThread = 256.0 * 1024;

class Cache {
 public:
  std::shared_ptr<const Primitive> get(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second.second);
    return it->second.first;
  }
  void put(const std::string& key, std::shared_ptr<const Primitive> p) {
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.count(key)) return;
    lru_.push_front(key);
    map_.emplace(key, std::make_pair(std::move(p), lru_.begin()));
    if (lru_.size() > kCacheEntries) {
      map_.erase(lru_.back());
      lru_.pop_back();
    }
  }

 private:
  std::mutex mu_;
  std::list<std::string> lru_;
  std::unordered_map<std::string,
                     std::pair<std::shared_ptr<const Primitive>, std::list<std::string>::iterator>>
      map_;
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: primitives may be in use at exit
  return *c;
}

dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

// Elements a conversion writes per thread, at least (as a reorder's bytes).
constexpr double kConvertPerThread = kReorderBytesPerThread / sizeof(float);

// f(begin, end) over [0, n) in even parts on `threads` OpenMP threads.
template <class F>
void omp_for(size_t n, int threads, F&& f) {
  if (threads <= 1) {
    f(size_t(0), n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const size_t nt = size_t(omp_get_num_threads()), t = size_t(omp_get_thread_num());
    const size_t per = (n + nt - 1) / nt, b = std::min(n, per * t), e = std::min(n, b + per);
    if (b < e) f(b, e);
  }
}

template <class T>
void widen_rows(const T* src, const Layout& l, float* dst) {
  const size_t r = l.rank(), cols = r ? l.dims()[r - 1] : 1, s = r ? l.strides()[r - 1] : 1;
  if (cols == 0) return;
  // The rows' starts: l without its last dim.
  const Layout rows_l(std::vector<size_t>(l.dims().begin(), l.dims().end() - (r ? 1 : 0)),
                      std::vector<size_t>(l.strides().begin(), l.strides().end() - (r ? 1 : 0)),
                      l.start_offset());
  const size_t rows = l.elem_count() / cols;
  omp_for(rows, threads_for(double(rows * cols), kConvertPerThread), [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      const T* row = src + strided_offset(i, rows_l);
      float* out = dst + i * cols;
      if (s == 1) {
        simd::widen(dtype_of<T>, reinterpret_cast<const uint16_t*>(row), out, cols);
      } else {
        for (size_t j = 0; j < cols; ++j) out[j] = float(row[j * s]);
      }
    }
  });
}

}  // namespace

void widen(DType half, const void* src, const Layout& l, float* dst) {
  if (half == DType::F16) {
    widen_rows(static_cast<const f16*>(src), l, dst);
  } else {
    widen_rows(static_cast<const bf16*>(src), l, dst);
  }
}

void narrow(DType half, const float* src, void* dst, size_t n) {
  auto* out = static_cast<uint16_t*>(dst);
  omp_for(n, threads_for(double(n), kConvertPerThread),
          [&](size_t b, size_t e) { simd::narrow(half, src + b, out + b, e - b); });
}

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::memory::data_type data_type(DType dt) {
  switch (dt) {
    case DType::F32:
      return dnnl::memory::data_type::f32;
    case DType::BF16:
      return dnnl::memory::data_type::bf16;
    case DType::F16:
      return dnnl::memory::data_type::f16;
    default:
      return dnnl::memory::data_type::undef;
  }
}

Key& Key::add(const dnnl::memory::desc& d) {
  // dnnl_memory_desc_t is zero-initialised by oneDNN before it is filled in, so its
  // bytes name it exactly.
  s_.append(reinterpret_cast<const char*>(&d.data), sizeof(d.data));
  return *this;
}

int threads_for(double work, double per_thread) {
  if (in_parallel()) return 1;  // a task of wick's pool: its thread is the primitive's only one
  // One thread, or all of them: libgomp ends the threads a smaller team leaves out and
  // starts them anew for the next larger one, so a count in between would cost thread
  // creations at each change (docs/PERFORMANCE.md).
  return work < 2 * per_thread ? 1 : max_threads();
}

std::shared_ptr<const Primitive> primitive(const std::string& key, const MakePd& make, int threads,
                                           const char* op) {
  ThreadScope scope(threads);
  // The kernels oneDNN builds depend on the thread count they will run on.
  std::string k = key;
  const int64_t nt = threads;
  k.append(reinterpret_cast<const char*>(&nt), sizeof(nt));
  if (auto p = cache().get(k)) return p->prim ? p : nullptr;
  auto p = std::make_shared<Primitive>();
  p->threads = threads;
  try {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::primitive_desc_base pd = make(attr);
    p->prim = dnnl::primitive(pd.get());
    p->src = pd.src_desc();
    p->weights = pd.weights_desc();
    p->dst = pd.dst_desc();
    p->scratchpad = pd.scratchpad_desc();
    p->reference = std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
  } catch (const dnnl::error& e) {
    if (e.status != dnnl_unimplemented) rethrow(e, op);
    p = std::make_shared<Primitive>();  // remembered as "none"
    p->threads = threads;
  }
  cache().put(k, p);
  return p->prim ? p : nullptr;
}

void execute(const Primitive& p, std::unordered_map<int, dnnl::memory> args, const char* op) {
  ThreadScope scope(p.threads);
  try {
    std::shared_ptr<CpuStorage> scratch;
    if (const size_t bytes = p.scratchpad.get_size(); bytes > 0) {
      scratch = cpu_alloc(bytes, DType::U8);
      args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(p.scratchpad, engine(), scratch->raw()));
    }
    p.prim.execute(stream(), args);
    stream().wait();
  } catch (const dnnl::error& e) {
    rethrow(e, op);
  }
}

void reorder(const dnnl::memory::desc& from, const void* src, const dnnl::memory::desc& to, void* dst,
             const char* op) {
  Key key("reorder");
  key.add(from).add(to);
  auto p = primitive(
      key.str(),
      [&](const dnnl::primitive_attr& attr) {
        return dnnl::reorder::primitive_desc(engine(), from, engine(), to, attr);
      },
      threads_for(double(to.get_size()), kReorderBytesPerThread), op);
  if (!p) {
    throw_error(ErrorKind::InvalidArgument, op, "oneDNN has no reorder between these layouts");
  }
  execute(*p,
          {{DNNL_ARG_FROM, dnnl::memory(from, engine(), const_cast<void*>(src))},
           {DNNL_ARG_TO, dnnl::memory(to, engine(), dst)}},
          op);
}

}  // namespace wick::cpu::onednn
