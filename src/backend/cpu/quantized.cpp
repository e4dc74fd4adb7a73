// The CPU backend's quantized entry points (backend.h): quantize, dequantize and the
// quantized matmul over ggml block rows, by the row kernels of quant_types.cpp. The
// matmul has two paths: x quantized to the weight's activation type and dotted block
// by block (ggml's; the default: the hand-written kernels of quants_x86.cpp where the
// CPU has them), or the weight dequantized to f32 and one f32 GEMM with x as it is (QMatmulPath::DequantGemm:
// the reference the fast paths are held to).
#include <algorithm>
#include <vector>

#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/quants.h"
#include "backend/cpu/strided.h"
#include "wick/quant.h"

namespace wick {

namespace {

// Bytes of quantized activation rows a mat-vec pass keeps in cache (a share of L2).
constexpr size_t kActChunkBytes = size_t(256) << 10;
// Bytes of weight rows a thread takes at a time (a mat-vec of [14336 x 4096] q4_0: 256
// pieces, 16 a thread on 16 cores).
constexpr size_t kRowsChunkBytes = size_t(128) << 10;

// The f32 elements of the contiguous view x_l of s (s itself, or an f32 copy in `keep`).
const float* f32_data(const CpuStorage& s, const Layout& x_l, StoragePtr& keep) {
  if (s.dtype() == DType::F32) return s.data<float>() + x_l.start_offset();
  keep = s.to_dtype(x_l, DType::F32);
  return CpuStorage::of(*keep).data<float>();
}

const uint8_t* bytes_at(const BackendStorage& s, size_t byte_offset) {
  return CpuStorage::of(s).data<uint8_t>() + byte_offset;
}

}  // namespace

StoragePtr CpuDevice::quantize(GgmlType t, const BackendStorage& x, const Layout& x_l, size_t rows,
                               size_t k) {
  StoragePtr keep;
  const float* xs = f32_data(CpuStorage::of(x), x_l, keep);
  const size_t row_bytes = ggml_row_size(t, k);
  auto out = cpu_alloc(rows * row_bytes, DType::U8);
  uint8_t* o = out->data<uint8_t>();
  cpu::parallel_for(rows, 16, [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) quant::quantize_row(t, xs + r * k, o + r * row_bytes, k);
  });
  return out;
}

StoragePtr CpuDevice::dequantize(GgmlType t, const BackendStorage& blocks, size_t byte_offset, size_t n,
                                 DType out) {
  // Rows never split a block, so the packed bytes are n / block whole blocks.
  const uint8_t* src = bytes_at(blocks, byte_offset);
  const size_t block = ggml_block_size(t), block_bytes = ggml_type_size(t);
  auto y = cpu_alloc(n, DType::F32);
  float* yp = y->data<float>();
  cpu::parallel_for(n / block, 256, [&](size_t b, size_t e) {
    quant::dequantize_row(t, src + b * block_bytes, yp + b * block, (e - b) * block);
  });
  if (out == DType::F32) return y;
  return y->to_dtype(Layout(Shape{n}), out);
}

StoragePtr CpuDevice::qmatmul(GgmlType t, const BackendStorage& w, size_t byte_offset, size_t n, size_t k,
                              const BackendStorage& x, const Layout& x_l, size_t m, QMatmulPath path) {
  StoragePtr keep;
  const float* xs = f32_data(CpuStorage::of(x), x_l, keep);
  if (path == QMatmulPath::DequantGemm) {
    // The reference path: the weight dequantized to f32, x unquantized, one f32 GEMM.
    const StoragePtr wd = dequantize(t, w, byte_offset, n * k, DType::F32);
    auto out = cpu_alloc(m * n, DType::F32);
    cpu::gemm(false, true, m, n, k, xs, k, CpuStorage::of(*wd).data<float>(), k, out->data<float>(), n);
    if (x.dtype() == DType::F32) return out;
    return out->to_dtype(Layout(Shape{m * n}), x.dtype());
  }
  // x's rows quantized once to the weight's activation type; then each weight row is
  // dotted with a chunk of activation rows at a time (the chunk stays in L2 while the
  // thread streams its weight rows past it; one chunk at batch 1). Threads take the
  // weight rows in pieces.
  const GgmlType at = ggml_vec_dot_type(t);
  const size_t act_row = ggml_row_size(at, k), w_row = ggml_row_size(t, k);
  const quant::VecDotFn dot = quant::vec_dot_kernel(t, k);
  std::vector<uint8_t> act(m * act_row);
  cpu::parallel_for(m, 4, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) quant::quantize_row(at, xs + i * k, act.data() + i * act_row, k);
  });
  const uint8_t* wb = bytes_at(w, byte_offset);
  auto out = cpu_alloc(m * n, DType::F32);
  float* o = out->data<float>();
  // Weight rows in pieces of about kRowsChunkBytes that the threads take in turn.
  const size_t rows = std::max<size_t>(8, kRowsChunkBytes / std::max<size_t>(w_row, 1));
  if (const quant::MatVec mv = m == 1 ? quant::mat_vec_simd(t, cpu::isa()) : quant::MatVec{}; mv.run) {
    // Batch 1: the activation's side prepared once, then each piece's rows against it,
    // written in place.
    std::vector<uint8_t> prep(mv.prep_bytes(k) + 64);
    uint8_t* const pp = prep.data() + (64 - reinterpret_cast<uintptr_t>(prep.data()) % 64) % 64;
    mv.prepare(k, act.data(), pp);
    cpu::parallel_chunks(
        n, rows, [&](size_t b, size_t e) { mv.run(k, wb + b * w_row, e - b, act.data(), pp, o + b); });
    if (x.dtype() == DType::F32) return out;
    return out->to_dtype(Layout(Shape{n}), x.dtype());
  }
  const size_t chunk = std::max<size_t>(1, kActChunkBytes / std::max<size_t>(act_row, 1));
  cpu::parallel_chunks(n, rows, [&](size_t b, size_t e) {
    std::vector<float> col(std::min(m, chunk));
    for (size_t r0 = 0; r0 < m; r0 += chunk) {
      const size_t rn = std::min(chunk, m - r0);
      for (size_t j = b; j < e; ++j) {
        dot(k, wb + j * w_row, act.data() + r0 * act_row, rn, col.data());
        for (size_t i = 0; i < rn; ++i) o[(r0 + i) * n + j] = col[i];
      }
    }
  });
  if (x.dtype() == DType::F32) return out;
  return out->to_dtype(Layout(Shape{m * n}), x.dtype());
}

}  // namespace wick
