// Reading .npz archives from memory: an entry deflated the way np.savez_compressed
// writes it (zlib, default level) against the same entry stored (np.savez). Bytes/s
// are of the .npy data the entry holds; the "ratio" counter is compressed / stored
// bytes. Two arrays of 32 MiB: randn f32 (weights-like, little redundancy) and a
// ramp (arange f32, much).
#include "wick/io.h"

#include <benchmark/benchmark.h>
#include <zlib.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <utility>

#include "wick/tensor.h"

namespace wick {
namespace {

constexpr size_t kElems = size_t(8) << 20;  // 8 Mi f32: 32 MiB

template <class T>
void put(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

// Raw deflate (no zlib header), default level: what Python's zipfile writes.
std::vector<uint8_t> deflate_raw(const std::vector<uint8_t>& in) {
  z_stream s{};
  if (deflateInit2(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::vector<uint8_t> out(deflateBound(&s, uLong(in.size())));
  s.next_in = const_cast<Bytef*>(in.data());
  s.avail_in = uInt(in.size());
  s.next_out = out.data();
  s.avail_out = uInt(out.size());
  const int rc = deflate(&s, Z_FINISH);
  out.resize(s.total_out);
  deflateEnd(&s);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  return out;
}

// A zip holding one entry, "x.npy": stored (method 0) or deflated (method 8).
std::vector<uint8_t> zip_one(const std::vector<uint8_t>& npy, bool deflated) {
  const std::vector<uint8_t> body = deflated ? deflate_raw(npy) : npy;
  const uint32_t crc = uint32_t(crc32(0, npy.data(), uInt(npy.size())));
  const std::string name = "x.npy";
  std::vector<uint8_t> out;
  auto sizes = [&](std::vector<uint8_t>& v) {
    put<uint16_t>(v, deflated ? 8 : 0);  // method
    put<uint16_t>(v, 0);                 // time
    put<uint16_t>(v, 0x21);              // date: 1980-01-01
    put<uint32_t>(v, crc);
    put<uint32_t>(v, uint32_t(body.size()));
    put<uint32_t>(v, uint32_t(npy.size()));
    put<uint16_t>(v, uint16_t(name.size()));
    put<uint16_t>(v, 0);  // extra length
  };
  put<uint32_t>(out, 0x04034b50u);  // local file header
  put<uint16_t>(out, 20);           // version needed
  put<uint16_t>(out, 0);            // flags
  sizes(out);
  out.insert(out.end(), name.begin(), name.end());
  out.insert(out.end(), body.begin(), body.end());
  const uint32_t cd_off = uint32_t(out.size());
  put<uint32_t>(out, 0x02014b50u);  // central directory entry
  put<uint16_t>(out, 20);           // version made by
  put<uint16_t>(out, 20);           // version needed
  put<uint16_t>(out, 0);            // flags
  sizes(out);
  put<uint16_t>(out, 0);  // comment length
  put<uint16_t>(out, 0);  // disk
  put<uint16_t>(out, 0);  // internal attributes
  put<uint32_t>(out, 0);  // external attributes
  put<uint32_t>(out, 0);  // local header offset
  out.insert(out.end(), name.begin(), name.end());
  const uint32_t cd_size = uint32_t(out.size()) - cd_off;
  put<uint32_t>(out, 0x06054b50u);  // end of central directory
  put<uint16_t>(out, 0);
  put<uint16_t>(out, 0);
  put<uint16_t>(out, 1);
  put<uint16_t>(out, 1);
  put<uint32_t>(out, cd_size);
  put<uint32_t>(out, cd_off);
  put<uint16_t>(out, 0);
  return out;
}

struct Archive {
  std::vector<uint8_t> zip;
  size_t npy_bytes = 0, entry_bytes = 0;
};

const Archive& archive(bool randn, bool deflated) {
  static std::map<std::pair<bool, bool>, Archive> cache;
  auto [it, fresh] = cache.try_emplace({randn, deflated});
  if (fresh) {
    Tensor::manual_seed(1);
    const Tensor t =
        randn ? Tensor::randn(Shape{kElems}, DType::F32) : Tensor::arange(0, double(kElems), 1, DType::F32);
    const std::vector<uint8_t> npy = npy_serialize(t);
    it->second.zip = zip_one(npy, deflated);
    it->second.npy_bytes = npy.size();
    it->second.entry_bytes = deflated ? deflate_raw(npy).size() : npy.size();
  }
  return it->second;
}

void BM_NpzRead(benchmark::State& state, bool randn, bool deflated) {
  try {
    const Archive& a = archive(randn, deflated);
    for (auto _ : state) {
      auto entries = parse_npz(a.zip.data(), a.zip.size());
      benchmark::DoNotOptimize(entries);
    }
    state.SetBytesProcessed(int64_t(a.npy_bytes) * int64_t(state.iterations()));
    state.counters["ratio"] = double(a.entry_bytes) / double(a.npy_bytes);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

#define WICK_BENCH_NPZ(name, randn, deflated) \
  BENCHMARK_CAPTURE(BM_NpzRead, name, randn, deflated)->UseRealTime()->Unit(benchmark::kMillisecond)
WICK_BENCH_NPZ(randn_stored, true, false);
WICK_BENCH_NPZ(randn_deflated, true, true);
WICK_BENCH_NPZ(ramp_stored, false, false);
WICK_BENCH_NPZ(ramp_deflated, false, true);

}  // namespace
}  // namespace wick
