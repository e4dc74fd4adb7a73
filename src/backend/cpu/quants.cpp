// The 32-element ggml block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1): reference
// quantizers that reproduce ggml's quantize_row_*_ref bit for bit, dequantizers with
// ggml's arithmetic (same float operations in the same order), and integer dot
// products against the Q8_0 / Q8_1 activation blocks.
#include "backend/cpu/quants.h"

#include <algorithm>
#include <cfloat>

namespace wick::quant {

namespace {

void min_max(const float* x, int n, float& mn, float& mx) {
  mn = FLT_MAX;
  mx = -FLT_MAX;
  for (int j = 0; j < n; ++j) {
    if (x[j] < mn) mn = x[j];
    if (x[j] > mx) mx = x[j];
  }
}

uint32_t load_qh(const uint8_t* qh) {
  uint32_t v;
  std::memcpy(&v, qh, 4);
  return v;
}

// The 5-bit quant of element j (0..31) of a Q5 block.
inline int q5_value(const uint8_t* qs, uint32_t qh, int j) {
  int lo = j < 16 ? (qs[j] & 0x0F) : (qs[j - 16] >> 4);
  return lo | int((qh >> j) & 1u) << 4;
}

}  // namespace

void quantize_q4_0(const float* x, BlockQ4_0* y, size_t n) {
  const size_t nb = n / kQK4_0;
  for (size_t i = 0; i < nb; ++i, x += kQK4_0) {
    float amax;
    const float d = signed_absmax(x, kQK4_0, amax) / -8;
    const float id = d ? 1.0f / d : 0.0f;
    y[i].d = f2h(d);
    for (int j = 0; j < kQK4_0 / 2; ++j) {
      const float x0 = x[j] * id;
      const float x1 = x[kQK4_0 / 2 + j] * id;
      // (int8_t) truncation then clamp to 15, exactly as ggml does
      const uint8_t xi0 = uint8_t(std::min(15, int(int8_t(x0 + 8.5f))));
      const uint8_t xi1 = uint8_t(std::min(15, int(int8_t(x1 + 8.5f))));
      y[i].qs[j] = uint8_t(xi0 | (xi1 << 4));
    }
  }
}

void quantize_q4_1(const float* x, BlockQ4_1* y, size_t n) {
  const size_t nb = n / kQK4_1;
  for (size_t i = 0; i < nb; ++i, x += kQK4_1) {
    float mn, mx;
    min_max(x, kQK4_1, mn, mx);
    const float d = (mx - mn) / ((1 << 4) - 1);
    const float id = d ? 1.0f / d : 0.0f;
    y[i].d = f2h(d);
    y[i].m = f2h(mn);
    for (int j = 0; j < kQK4_1 / 2; ++j) {
      const float x0 = (x[j] - mn) * id;
      const float x1 = (x[kQK4_1 / 2 + j] - mn) * id;
      const uint8_t xi0 = uint8_t(std::min(15, int(int8_t(x0 + 0.5f))));
      const uint8_t xi1 = uint8_t(std::min(15, int(int8_t(x1 + 0.5f))));
      y[i].qs[j] = uint8_t(xi0 | (xi1 << 4));
    }
  }
}

void quantize_q5_0(const float* x, BlockQ5_0* y, size_t n) {
  const size_t nb = n / kQK5_0;
  for (size_t i = 0; i < nb; ++i, x += kQK5_0) {
    float amax;
    const float d = signed_absmax(x, kQK5_0, amax) / -16;
    const float id = d ? 1.0f / d : 0.0f;
    y[i].d = f2h(d);
    uint32_t qh = 0;
    for (int j = 0; j < kQK5_0 / 2; ++j) {
      const float x0 = x[j] * id;
      const float x1 = x[kQK5_0 / 2 + j] * id;
      const uint8_t xi0 = uint8_t(std::min(31, int(int8_t(x0 + 16.5f))));
      const uint8_t xi1 = uint8_t(std::min(31, int(int8_t(x1 + 16.5f))));
      y[i].qs[j] = uint8_t((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
      qh |= ((xi0 & 0x10u) >> 4) << (j + 0);
      qh |= ((xi1 & 0x10u) >> 4) << (j + kQK5_0 / 2);
    }
    std::memcpy(y[i].qh, &qh, sizeof(qh));
  }
}

void quantize_q5_1(const float* x, BlockQ5_1* y, size_t n) {
  const size_t nb = n / kQK5_1;
  for (size_t i = 0; i < nb; ++i, x += kQK5_1) {
    float mn, mx;
    min_max(x, kQK5_1, mn, mx);
    const float d = (mx - mn) / ((1 << 5) - 1);
    const float id = d ? 1.0f / d : 0.0f;
    y[i].d = f2h(d);
    y[i].m = f2h(mn);
    uint32_t qh = 0;
    for (int j = 0; j < kQK5_1 / 2; ++j) {
      const float x0 = (x[j] - mn) * id;
      const float x1 = (x[kQK5_1 / 2 + j] - mn) * id;
      const uint8_t xi0 = uint8_t(x0 + 0.5f);
      const uint8_t xi1 = uint8_t(x1 + 0.5f);
      y[i].qs[j] = uint8_t((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
      qh |= ((xi0 & 0x10u) >> 4) << (j + 0);
      qh |= ((xi1 & 0x10u) >> 4) << (j + kQK5_1 / 2);
    }
    std::memcpy(y[i].qh, &qh, sizeof(qh));
  }
}

namespace {
// d = amax/127, q = roundf(x/d): shared by Q8_0 and Q8_1; returns sum of q.
int quantize_8bit(const float* x, int8_t* qs, float& d) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  d = amax / ((1 << 7) - 1);
  const float id = d ? 1.0f / d : 0.0f;
  int sum = 0;
  for (int j = 0; j < 32; ++j) {
    qs[j] = int8_t(std::roundf(x[j] * id));
    sum += qs[j];
  }
  return sum;
}
}  // namespace

void quantize_q8_0(const float* x, BlockQ8_0* y, size_t n) {
  const size_t nb = n / kQK8_0;
  for (size_t i = 0; i < nb; ++i, x += kQK8_0) {
    float d;
    quantize_8bit(x, y[i].qs, d);
    y[i].d = f2h(d);
  }
}

void quantize_q8_1(const float* x, BlockQ8_1* y, size_t n) {
  const size_t nb = n / kQK8_1;
  for (size_t i = 0; i < nb; ++i, x += kQK8_1) {
    float d;
    const int sum = quantize_8bit(x, y[i].qs, d);
    y[i].d = f2h(d);
    y[i].s = f2h(float(sum) * d);
  }
}

void dequantize_q4_0(const BlockQ4_0* x, float* y, size_t n) {
  const size_t nb = n / kQK4_0;
  for (size_t i = 0; i < nb; ++i, y += kQK4_0) {
    const float d = h2f(x[i].d);
    for (int j = 0; j < 16; ++j) {
      y[j] = float((x[i].qs[j] & 0x0F) - 8) * d;
      y[j + 16] = float((x[i].qs[j] >> 4) - 8) * d;
    }
  }
}

void dequantize_q4_1(const BlockQ4_1* x, float* y, size_t n) {
  const size_t nb = n / kQK4_1;
  for (size_t i = 0; i < nb; ++i, y += kQK4_1) {
    const float d = h2f(x[i].d), m = h2f(x[i].m);
    for (int j = 0; j < 16; ++j) {
      y[j] = float(x[i].qs[j] & 0x0F) * d + m;
      y[j + 16] = float(x[i].qs[j] >> 4) * d + m;
    }
  }
}

void dequantize_q5_0(const BlockQ5_0* x, float* y, size_t n) {
  const size_t nb = n / kQK5_0;
  for (size_t i = 0; i < nb; ++i, y += kQK5_0) {
    const float d = h2f(x[i].d);
    const uint32_t qh = load_qh(x[i].qh);
    for (int j = 0; j < 32; ++j) y[j] = float(q5_value(x[i].qs, qh, j) - 16) * d;
  }
}

void dequantize_q5_1(const BlockQ5_1* x, float* y, size_t n) {
  const size_t nb = n / kQK5_1;
  for (size_t i = 0; i < nb; ++i, y += kQK5_1) {
    const float d = h2f(x[i].d), m = h2f(x[i].m);
    const uint32_t qh = load_qh(x[i].qh);
    for (int j = 0; j < 32; ++j) y[j] = float(q5_value(x[i].qs, qh, j)) * d + m;
  }
}

void dequantize_q8_0(const BlockQ8_0* x, float* y, size_t n) {
  const size_t nb = n / kQK8_0;
  for (size_t i = 0; i < nb; ++i, y += kQK8_0) {
    const float d = h2f(x[i].d);
    for (int j = 0; j < 32; ++j) y[j] = float(x[i].qs[j]) * d;
  }
}

void dequantize_q8_1(const BlockQ8_1* x, float* y, size_t n) {
  const size_t nb = n / kQK8_1;
  for (size_t i = 0; i < nb; ++i, y += kQK8_1) {
    const float d = h2f(x[i].d);
    for (int j = 0; j < 32; ++j) y[j] = float(x[i].qs[j]) * d;
  }
}

// Dot products: each weight block is unpacked to 32 int8 quants (plain loops the
// compiler vectorizes), summed as integers against the activation block, then scaled
// once per block (ggml's scalar reference order).
namespace {
inline void unpack_nibbles(const uint8_t* qs, int8_t* q, int offset) {
  for (int j = 0; j < 16; ++j) {
    q[j] = int8_t((qs[j] & 0x0F) - offset);
    q[j + 16] = int8_t((qs[j] >> 4) - offset);
  }
}
inline void unpack_q5(const uint8_t* qs, const uint8_t* qh_bytes, int8_t* q, int offset) {
  const uint32_t qh = load_qh(qh_bytes);
  for (int j = 0; j < 16; ++j) {
    q[j] = int8_t(((qs[j] & 0x0F) | int((qh >> j) & 1u) << 4) - offset);
    q[j + 16] = int8_t(((qs[j] >> 4) | int((qh >> (j + 16)) & 1u) << 4) - offset);
  }
}
inline int dot32(const int8_t* a, const int8_t* b) {
  int s = 0;
  for (int l = 0; l < 32; ++l) s += int(a[l]) * int(b[l]);
  return s;
}
}  // namespace

void vec_dot_q4_0_q8_0(size_t n, const BlockQ4_0* x, const BlockQ8_0* y, size_t ny, float* s) {
  int8_t q[32];
  dot_rows(
      n / kQK8_0, y, ny, s, [&](size_t i) { unpack_nibbles(x[i].qs, q, 8); },
      [&](size_t i, const BlockQ8_0& b) { return float(dot32(q, b.qs)) * h2f(x[i].d) * h2f(b.d); });
}

void vec_dot_q4_1_q8_1(size_t n, const BlockQ4_1* x, const BlockQ8_1* y, size_t ny, float* s) {
  int8_t q[32];
  dot_rows(
      n / kQK8_1, y, ny, s, [&](size_t i) { unpack_nibbles(x[i].qs, q, 0); },
      [&](size_t i, const BlockQ8_1& b) {
        return (h2f(x[i].d) * h2f(b.d)) * float(dot32(q, b.qs)) + h2f(x[i].m) * h2f(b.s);
      });
}

void vec_dot_q5_0_q8_0(size_t n, const BlockQ5_0* x, const BlockQ8_0* y, size_t ny, float* s) {
  int8_t q[32];
  dot_rows(
      n / kQK8_0, y, ny, s, [&](size_t i) { unpack_q5(x[i].qs, x[i].qh, q, 16); },
      [&](size_t i, const BlockQ8_0& b) { return float(dot32(q, b.qs)) * h2f(x[i].d) * h2f(b.d); });
}

void vec_dot_q5_1_q8_1(size_t n, const BlockQ5_1* x, const BlockQ8_1* y, size_t ny, float* s) {
  int8_t q[32];
  dot_rows(
      n / kQK8_1, y, ny, s, [&](size_t i) { unpack_q5(x[i].qs, x[i].qh, q, 0); },
      [&](size_t i, const BlockQ8_1& b) {
        return (h2f(x[i].d) * h2f(b.d)) * float(dot32(q, b.qs)) + h2f(x[i].m) * h2f(b.s);
      });
}

void vec_dot_q8_0_q8_0(size_t n, const BlockQ8_0* x, const BlockQ8_0* y, size_t ny, float* s) {
  dot_rows(
      n / kQK8_0, y, ny, s, [](size_t) {},
      [&](size_t i, const BlockQ8_0& b) { return float(dot32(x[i].qs, b.qs)) * (h2f(x[i].d) * h2f(b.d)); });
}

void vec_dot_q8_1_q8_1(size_t n, const BlockQ8_1* x, const BlockQ8_1* y, size_t ny, float* s) {
  dot_rows(
      n / kQK8_1, y, ny, s, [](size_t) {},
      [&](size_t i, const BlockQ8_1& b) { return float(dot32(x[i].qs, b.qs)) * (h2f(x[i].d) * h2f(b.d)); });
}

}  // namespace wick::quant
