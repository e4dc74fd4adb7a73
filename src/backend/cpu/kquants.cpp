// The K-quants (Q2_K .. Q6_K) and their CPU activation partner Q8_K, 256-element
// super-blocks. Quantizers follow ggml's reference method (quantize_row_q*_K_ref with
// make_qx_quants / make_q3_quants / make_qkx2_quants); dequantizers use ggml's
// float operations in ggml's order; dot products sum integers per sub-block.
#include <algorithm>

#include "backend/common/kquant_scales.h"
#include "backend/cpu/quants.h"

namespace wick::quant {

namespace {

constexpr float kGroupMaxEps = 1e-15f;

// The first pass of the symmetric quantizers: levels l = round(-nmax / max * x[i])
// clamped to [-nmax, nmax-1], stored as L[i] = l + bias, and their weighted sums
// (weights x^2). False, with L zeroed, for a group of values all near zero.
struct SymmetricStart {
  float max, sumlx, suml2;
};
bool symmetric_start(int n, int nmax, const float* x, int8_t* L, int bias, SymmetricStart& st) {
  float amax;
  st.max = signed_absmax(x, n, amax);
  if (amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return false;
  }
  const float iscale = -nmax / st.max;
  st.sumlx = st.suml2 = 0;
  for (int i = 0; i < n; ++i) {
    int l = nearest_int(iscale * x[i]);
    l = std::max(-nmax, std::min(nmax - 1, l));
    L[i] = int8_t(l + bias);
    float w = x[i] * x[i];
    st.sumlx += w * x[i] * l;
    st.suml2 += w * l * l;
  }
  return true;
}

// Scale for n values quantized symmetrically to [-nmax, nmax-1] (stored +nmax),
// weighted least squares over 19 candidate scales (rmse_type 1: weight x^2).
float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
  SymmetricStart st;
  if (!symmetric_start(n, nmax, x, L, nmax, st)) return 0.f;
  const float max = st.max;
  float sumlx = st.sumlx, suml2 = st.suml2;
  float scale = suml2 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    const float iscale = -(nmax + 0.1f * is) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      int l = nearest_int(iscale * x[i]);
      l = std::max(-nmax, std::min(nmax - 1, l));
      float w = x[i] * x[i];
      sumlx += w * x[i] * l;
      suml2 += w * l * l;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) {
        int l = nearest_int(iscale * x[i]);
        L[i] = int8_t(nmax + std::max(-nmax, std::min(nmax - 1, l)));
      }
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Q3_K's sub-block scale: start from -nmax/max, then coordinate descent on the
// weighted error (weights x^2), up to 5 passes.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
  SymmetricStart st;
  if (!symmetric_start(n, nmax, x, L, 0, st)) return 0.f;
  float sumlx = st.sumlx, suml2 = st.suml2;
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * L[i];
      if (slx > 0) {
        float sl2 = suml2 - w * L[i] * L[i];
        int new_l = nearest_int(x[i] * sl2 / slx);
        new_l = std::max(-nmax, std::min(nmax - 1, new_l));
        if (new_l != L[i]) {
          slx += w * x[i] * new_l;
          sl2 += w * new_l * new_l;
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = int8_t(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = int8_t(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Asymmetric scale+min for n values quantized to [0, nmax]: a grid search over
// nstep+1 scales, each refined by weighted least squares. Returns the scale and
// writes -min to *the_min.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *the_min = -min;
    return 0.f;
  }
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    int l = nearest_int(iscale * (x[i] - min));
    L[i] = uint8_t(std::max(0, std::min(nmax, l)));
    float diff = scale * L[i] + min - x[i];
    diff = use_mad ? std::fabs(diff) : diff * diff;
    best_error += weights[i] * diff;
  }
  if (nstep < 1) {
    *the_min = -min;
    return scale;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * is + nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      int l = nearest_int(iscale * (x[i] - min));
      l = std::max(0, std::min(nmax, l));
      Laux[i] = uint8_t(l);
      float w = weights[i];
      sum_l += w * l;
      sum_l2 += w * l * l;
      sum_xl += w * l * x[i];
    }
    float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        float diff = this_scale * Laux[i] + this_min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        cur_error += weights[i] * diff;
      }
      if (cur_error < best_error) {
        for (int i = 0; i < n; ++i) L[i] = Laux[i];
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// Packs 256 2-bit values: byte qs[32h + l] holds elements 128h + l + 32g at bits 2g.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < kQK_K; j += 128) {
    for (int l = 0; l < 32; ++l) {
      qs[j / 4 + l] = uint8_t(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
    }
  }
}

inline int q2_at(const uint8_t* qs, int e) {
  return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

// Q4_K / Q5_K: the 8 sub-block scales and mins, quantized to 6 bits and packed.
void pack_scales_k4(const float* scales, const float* mins, float max_scale, float max_min, uint8_t* out) {
  float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  for (int j = 0; j < kQK_K / 32; ++j) {
    uint8_t ls = uint8_t(nearest_int(inv_scale * scales[j]));
    uint8_t lm = uint8_t(nearest_int(inv_min * mins[j]));
    ls = std::min<uint8_t>(63, ls);
    lm = std::min<uint8_t>(63, lm);
    if (j < 4) {
      out[j] = ls;
      out[j + 4] = lm;
    } else {
      out[j + 4] = uint8_t((ls & 0xF) | ((lm & 0xF) << 4));
      out[j - 4] |= uint8_t((ls >> 4) << 6);
      out[j - 0] |= uint8_t((lm >> 4) << 6);
    }
  }
}

// Shared by Q4_K (nmax 15, rmin -1, 20 steps) and Q5_K (nmax 31, rmin -0.5, 15 steps):
// fills the packed scales, d, dmin and the final quants L[256].
void quantize_k4_common(const float* x, uint8_t* scales_out, uint16_t& d_out, uint16_t& dmin_out, uint8_t* L,
                        int nmax, float rmin, int nstep) {
  uint8_t Laux[32];
  float weights[32], mins[kQK_K / 32], scales[kQK_K / 32];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < kQK_K / 32; ++j) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] =
        make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin, 0.1f, nstep, false);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  pack_scales_k4(scales, mins, max_scale, max_min, scales_out);
  d_out = f2h(max_scale / 63.f);
  dmin_out = f2h(max_min / 63.f);
  for (int j = 0; j < kQK_K / 32; ++j) {
    uint8_t sc, m;
    scale_min_k4(j, scales_out, sc, m);
    const float d = h2f(d_out) * sc;
    if (!d) continue;
    const float dm = h2f(dmin_out) * m;
    for (int ii = 0; ii < 32; ++ii) {
      int l = nearest_int((x[32 * j + ii] + dm) / d);
      L[32 * j + ii] = uint8_t(std::max(0, std::min(nmax, l)));
    }
  }
}

}  // namespace

void quantize_q2_k(const float* x, BlockQ2_K* y, size_t n) {
  const size_t nb = n / kQK_K;
  uint8_t L[kQK_K], Laux[16];
  float weights[16], mins[kQK_K / 16], scales[kQK_K / 16];
  const float q4scale = 15.f;
  for (size_t i = 0; i < nb; ++i, x += kQK_K) {
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < kQK_K / 16; ++j) {
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
      scales[j] =
          make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
      if (scales[j] > max_scale) max_scale = scales[j];
      if (mins[j] > max_min) max_min = mins[j];
    }
    if (max_scale > 0) {
      float iscale = q4scale / max_scale;
      for (int j = 0; j < kQK_K / 16; ++j) y[i].scales[j] = uint8_t(nearest_int(iscale * scales[j]));
      y[i].d = f2h(max_scale / q4scale);
    } else {
      for (int j = 0; j < kQK_K / 16; ++j) y[i].scales[j] = 0;
      y[i].d = f2h(0.f);
    }
    if (max_min > 0) {
      float iscale = q4scale / max_min;
      for (int j = 0; j < kQK_K / 16; ++j) y[i].scales[j] |= uint8_t(nearest_int(iscale * mins[j]) << 4);
      y[i].dmin = f2h(max_min / q4scale);
    } else {
      y[i].dmin = f2h(0.f);
    }
    for (int j = 0; j < kQK_K / 16; ++j) {
      const float d = h2f(y[i].d) * (y[i].scales[j] & 0xF);
      if (!d) continue;
      const float dm = h2f(y[i].dmin) * (y[i].scales[j] >> 4);
      for (int ii = 0; ii < 16; ++ii) {
        int l = nearest_int((x[16 * j + ii] + dm) / d);
        L[16 * j + ii] = uint8_t(std::max(0, std::min(3, l)));
      }
    }
    pack_2bit(L, y[i].qs);
  }
}

void quantize_q3_k(const float* x, BlockQ3_K* y, size_t n) {
  const size_t nb = n / kQK_K;
  int8_t L[kQK_K];
  float scales[kQK_K / 16];
  for (size_t i = 0; i < nb; ++i, x += kQK_K) {
    float max_scale = 0, amax = 0;
    for (int j = 0; j < kQK_K / 16; ++j) {
      scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
      float scale = std::fabs(scales[j]);
      if (scale > amax) {
        amax = scale;
        max_scale = scales[j];
      }
    }
    std::memset(y[i].scales, 0, 12);
    if (max_scale) {
      float iscale = -32.f / max_scale;
      for (int j = 0; j < kQK_K / 16; ++j) {
        int8_t l = int8_t(nearest_int(iscale * scales[j]));
        l = int8_t(std::max(-32, std::min(31, int(l))) + 32);
        if (j < 8) {
          y[i].scales[j] = uint8_t(l & 0xF);
        } else {
          y[i].scales[j - 8] |= uint8_t((l & 0xF) << 4);
        }
        l = int8_t(l >> 4);
        y[i].scales[j % 4 + 8] |= uint8_t(l << (2 * (j / 4)));
      }
      y[i].d = f2h(1 / iscale);
    } else {
      y[i].d = f2h(0.f);
    }
    for (int j = 0; j < kQK_K / 16; ++j) {
      const int sc = q3k_scale(y[i].scales, j);
      float d = h2f(y[i].d) * float(sc);
      if (!d) continue;
      for (int ii = 0; ii < 16; ++ii) {
        int l = nearest_int(x[16 * j + ii] / d);
        L[16 * j + ii] = int8_t(std::max(-4, std::min(3, l)) + 4);
      }
    }
    // high bit of element j goes to bit j/32 of hmask[j%32]
    std::memset(y[i].hmask, 0, kQK_K / 8);
    uint8_t Lu[kQK_K];
    for (int j = 0; j < kQK_K; ++j) {
      int v = L[j];
      if (v > 3) {
        y[i].hmask[j % 32] |= uint8_t(1u << (j / 32));
        v -= 4;
      }
      Lu[j] = uint8_t(v);
    }
    pack_2bit(Lu, y[i].qs);
  }
}

void quantize_q4_k(const float* x, BlockQ4_K* y, size_t n) {
  const size_t nb = n / kQK_K;
  uint8_t L[kQK_K];
  for (size_t i = 0; i < nb; ++i, x += kQK_K) {
    std::memset(y[i].scales, 0, kKScaleSize);
    quantize_k4_common(x, y[i].scales, y[i].d, y[i].dmin, L, 15, -1.f, 20);
    uint8_t* q = y[i].qs;
    for (int j = 0; j < kQK_K; j += 64, q += 32) {
      for (int l = 0; l < 32; ++l) q[l] = uint8_t(L[j + l] | (L[j + l + 32] << 4));
    }
  }
}

void quantize_q5_k(const float* x, BlockQ5_K* y, size_t n) {
  const size_t nb = n / kQK_K;
  uint8_t L[kQK_K];
  for (size_t i = 0; i < nb; ++i, x += kQK_K) {
    std::memset(y[i].scales, 0, kKScaleSize);
    quantize_k4_common(x, y[i].scales, y[i].d, y[i].dmin, L, 31, -0.5f, 15);
    uint8_t* qh = y[i].qh;
    uint8_t* ql = y[i].qs;
    std::memset(qh, 0, kQK_K / 8);
    uint8_t m1 = 1, m2 = 2;
    for (int n0 = 0; n0 < kQK_K; n0 += 64, ql += 32) {
      for (int j = 0; j < 32; ++j) {
        int l1 = L[n0 + j];
        if (l1 > 15) {
          l1 -= 16;
          qh[j] |= m1;
        }
        int l2 = L[n0 + j + 32];
        if (l2 > 15) {
          l2 -= 16;
          qh[j] |= m2;
        }
        ql[j] = uint8_t(l1 | (l2 << 4));
      }
      m1 = uint8_t(m1 << 2);
      m2 = uint8_t(m2 << 2);
    }
  }
}

void quantize_q6_k(const float* x, BlockQ6_K* y, size_t n) {
  const size_t nb = n / kQK_K;
  int8_t L[kQK_K];
  float scales[kQK_K / 16];
  for (size_t i = 0; i < nb; ++i, x += kQK_K) {
    float max_scale = 0, max_abs_scale = 0;
    for (int ib = 0; ib < kQK_K / 16; ++ib) {
      const float scale = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib);
      scales[ib] = scale;
      if (std::fabs(scale) > max_abs_scale) {
        max_abs_scale = std::fabs(scale);
        max_scale = scale;
      }
    }
    if (max_abs_scale < kGroupMaxEps) {
      std::memset(&y[i], 0, sizeof(BlockQ6_K));
      y[i].d = f2h(0.f);
      continue;
    }
    float iscale = -128.f / max_scale;
    y[i].d = f2h(1 / iscale);
    for (int ib = 0; ib < kQK_K / 16; ++ib)
      y[i].scales[ib] = int8_t(std::min(127, nearest_int(iscale * scales[ib])));
    for (int j = 0; j < kQK_K / 16; ++j) {
      float d = h2f(y[i].d) * y[i].scales[j];
      if (!d) continue;
      for (int ii = 0; ii < 16; ++ii) {
        int l = nearest_int(x[16 * j + ii] / d);
        L[16 * j + ii] = int8_t(std::max(-32, std::min(31, l)) + 32);
      }
    }
    uint8_t* ql = y[i].ql;
    uint8_t* qh = y[i].qh;
    for (int j = 0; j < kQK_K; j += 128, ql += 64, qh += 32) {
      for (int l = 0; l < 32; ++l) {
        const uint8_t q1 = L[j + l + 0] & 0xF;
        const uint8_t q2 = L[j + l + 32] & 0xF;
        const uint8_t q3 = L[j + l + 64] & 0xF;
        const uint8_t q4 = L[j + l + 96] & 0xF;
        ql[l + 0] = uint8_t(q1 | (q3 << 4));
        ql[l + 32] = uint8_t(q2 | (q4 << 4));
        qh[l] = uint8_t((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) |
                        ((L[j + l + 96] >> 4) << 6));
      }
    }
  }
}

void quantize_q8_k(const float* x, BlockQ8_K* y, size_t n) {
  const size_t nb = n / kQK_K;
  for (size_t i = 0; i < nb; ++i, x += kQK_K) {
    float amax;
    const float max = signed_absmax(x, kQK_K, amax);
    if (!amax) {
      std::memset(&y[i], 0, sizeof(BlockQ8_K));
      continue;
    }
    // -127 (not -128) as in ggml, so every quant fits in [-127, 127]
    const float iscale = -127.f / max;
    for (int j = 0; j < kQK_K; ++j) y[i].qs[j] = int8_t(std::min(127, nearest_int(iscale * x[j])));
    for (int j = 0; j < kQK_K / 16; ++j) {
      int sum = 0;
      for (int ii = 0; ii < 16; ++ii) sum += y[i].qs[j * 16 + ii];
      y[i].bsums[j] = int16_t(sum);
    }
    y[i].d = 1 / iscale;
  }
}

// ---- dequantize ----------------------------------------------------------------

void dequantize_q2_k(const BlockQ2_K* x, float* y, size_t n) {
  for (size_t i = 0; i < n / kQK_K; ++i, y += kQK_K) {
    const float d = h2f(x[i].d), mn = h2f(x[i].dmin);
    for (int s = 0; s < 16; ++s) {
      const uint8_t sc = x[i].scales[s];
      const float dl = d * float(sc & 0xF), ml = mn * float(sc >> 4);
      // sub-block s covers elements 16s .. 16s+15
      for (int l = 0; l < 16; ++l) y[16 * s + l] = dl * float(q2_at(x[i].qs, 16 * s + l)) - ml;
    }
  }
}

void dequantize_q3_k(const BlockQ3_K* x, float* y, size_t n) {
  for (size_t i = 0; i < n / kQK_K; ++i, y += kQK_K) {
    const float d_all = h2f(x[i].d);
    for (int s = 0; s < 16; ++s) {
      const float dl = d_all * float(q3k_scale(x[i].scales, s));
      for (int l = 0; l < 16; ++l) {
        const int e = 16 * s + l;
        const int hbit = (x[i].hmask[e % 32] >> (e / 32)) & 1;
        y[e] = dl * float(q2_at(x[i].qs, e) - (hbit ? 0 : 4));
      }
    }
  }
}

namespace {
// The 4-bit part of element e of Q4_K/Q5_K: chunk e/64, low nibbles then high nibbles.
inline int k4_nibble(const uint8_t* qs, int e) {
  const uint8_t b = qs[32 * (e / 64) + e % 32];
  return (e % 64) < 32 ? (b & 0xF) : (b >> 4);
}
inline int q5k_value(const BlockQ5_K& b, int e) {
  const int hbit = (b.qh[e % 32] >> (e / 32)) & 1;
  return k4_nibble(b.qs, e) + 16 * hbit;
}
inline int q6k_value(const BlockQ6_K& b, int e) {
  const int h = e / 128, r = e % 128, k = r / 32, l = e % 32;
  const uint8_t lo_byte = b.ql[64 * h + 32 * (k & 1) + l];
  const int lo = k < 2 ? (lo_byte & 0xF) : (lo_byte >> 4);
  const int hi = (b.qh[32 * h + l] >> (2 * k)) & 3;
  return (lo | hi << 4) - 32;
}
}  // namespace

void dequantize_q4_k(const BlockQ4_K* x, float* y, size_t n) {
  for (size_t i = 0; i < n / kQK_K; ++i, y += kQK_K) {
    const float d = h2f(x[i].d), mn = h2f(x[i].dmin);
    for (int s = 0; s < 8; ++s) {
      uint8_t sc, m;
      scale_min_k4(s, x[i].scales, sc, m);
      const float d1 = d * sc, m1 = mn * m;
      for (int l = 0; l < 32; ++l) y[32 * s + l] = d1 * float(k4_nibble(x[i].qs, 32 * s + l)) - m1;
    }
  }
}

void dequantize_q5_k(const BlockQ5_K* x, float* y, size_t n) {
  for (size_t i = 0; i < n / kQK_K; ++i, y += kQK_K) {
    const float d = h2f(x[i].d), mn = h2f(x[i].dmin);
    for (int s = 0; s < 8; ++s) {
      uint8_t sc, m;
      scale_min_k4(s, x[i].scales, sc, m);
      const float d1 = d * sc, m1 = mn * m;
      for (int l = 0; l < 32; ++l) y[32 * s + l] = d1 * float(q5k_value(x[i], 32 * s + l)) - m1;
    }
  }
}

void dequantize_q6_k(const BlockQ6_K* x, float* y, size_t n) {
  for (size_t i = 0; i < n / kQK_K; ++i, y += kQK_K) {
    const float d = h2f(x[i].d);
    for (int e = 0; e < kQK_K; ++e) y[e] = d * float(x[i].scales[e / 16]) * float(q6k_value(x[i], e));
  }
}

void dequantize_q8_k(const BlockQ8_K* x, float* y, size_t n) {
  for (size_t i = 0; i < n / kQK_K; ++i, y += kQK_K) {
    for (int j = 0; j < kQK_K; ++j) y[j] = x[i].d * float(x[i].qs[j]);
  }
}

// ---- dot products against Q8_K -------------------------------------------------
// Each weight block is first unpacked into 256 int8 quants with plain loops over
// contiguous bytes (so the compiler vectorizes them), then summed per sub-block
// against Q8_K's int8 quants; the min terms use Q8_K's precomputed bsums.

namespace {

// The 2-bit field of Q2_K / Q3_K: element 128h + 32g + l is (qs[32h + l] >> 2g) & 3.
inline void unpack_2bit(const uint8_t* qs, int8_t* q) {
  for (int h = 0; h < 2; ++h) {
    for (int g = 0; g < 4; ++g) {
      for (int l = 0; l < 32; ++l) q[128 * h + 32 * g + l] = int8_t((qs[32 * h + l] >> (2 * g)) & 3);
    }
  }
}

// Q4_K / Q5_K nibbles: chunk c holds elements 64c + l (low) and 64c + 32 + l (high).
inline void unpack_4bit(const uint8_t* qs, int8_t* q) {
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      q[64 * c + l] = int8_t(qs[32 * c + l] & 0xF);
      q[64 * c + 32 + l] = int8_t(qs[32 * c + l] >> 4);
    }
  }
}

inline int dot_i8(const int8_t* a, const int8_t* b, int n) {
  int s = 0;
  for (int l = 0; l < n; ++l) s += int(a[l]) * int(b[l]);
  return s;
}

}  // namespace

void vec_dot_q2_k_q8_k(size_t n, const BlockQ2_K* x, const BlockQ8_K* y, size_t ny, float* s) {
  int8_t q[kQK_K];
  dot_rows(
      n / kQK_K, y, ny, s, [&](size_t i) { unpack_2bit(x[i].qs, q); },
      [&](size_t i, const BlockQ8_K& b) {
        int summs = 0, isum = 0;
        for (int j = 0; j < 16; ++j) {
          summs += (x[i].scales[j] >> 4) * b.bsums[j];
          isum += (x[i].scales[j] & 0xF) * dot_i8(q + 16 * j, b.qs + 16 * j, 16);
        }
        const float dall = b.d * h2f(x[i].d), dmin = b.d * h2f(x[i].dmin);
        return dall * float(isum) - dmin * float(summs);
      });
}

void vec_dot_q3_k_q8_k(size_t n, const BlockQ3_K* x, const BlockQ8_K* y, size_t ny, float* s) {
  int8_t q[kQK_K];
  int sc[16];
  dot_rows(
      n / kQK_K, y, ny, s,
      [&](size_t i) {
        unpack_2bit(x[i].qs, q);
        // a clear high bit (bit e/32 of hmask[e%32]) means q - 4
        for (int g = 0; g < 8; ++g) {
          for (int l = 0; l < 32; ++l)
            q[32 * g + l] = int8_t(q[32 * g + l] - (((x[i].hmask[l] >> g) & 1) ? 0 : 4));
        }
        for (int j = 0; j < 16; ++j) sc[j] = q3k_scale(x[i].scales, j);
      },
      [&](size_t i, const BlockQ8_K& b) {
        int isum = 0;
        for (int j = 0; j < 16; ++j) isum += sc[j] * dot_i8(q + 16 * j, b.qs + 16 * j, 16);
        return b.d * h2f(x[i].d) * float(isum);
      });
}

namespace {
// Q4_K and Q5_K (kFifthBit): 8 sub-blocks of 32 with 6-bit scales and mins.
template <bool kFifthBit, class Block>
void vec_dot_k4(size_t n, const Block* x, const BlockQ8_K* y, size_t ny, float* s,
                const uint8_t* (*qh_of)(const Block&)) {
  int8_t q[kQK_K];
  uint8_t sc[8], mn[8];
  dot_rows(
      n / kQK_K, y, ny, s,
      [&](size_t i) {
        unpack_4bit(x[i].qs, q);
        if constexpr (kFifthBit) {
          const uint8_t* qh = qh_of(x[i]);
          for (int c = 0; c < 4; ++c) {
            for (int l = 0; l < 32; ++l) {
              q[64 * c + l] = int8_t(q[64 * c + l] + (((qh[l] >> (2 * c)) & 1) << 4));
              q[64 * c + 32 + l] = int8_t(q[64 * c + 32 + l] + (((qh[l] >> (2 * c + 1)) & 1) << 4));
            }
          }
        }
        for (int j = 0; j < 8; ++j) scale_min_k4(j, x[i].scales, sc[j], mn[j]);
      },
      [&](size_t i, const BlockQ8_K& b) {
        int isum = 0, summs = 0;
        for (int j = 0; j < 8; ++j) {
          summs += mn[j] * (b.bsums[2 * j] + b.bsums[2 * j + 1]);
          isum += sc[j] * dot_i8(q + 32 * j, b.qs + 32 * j, 32);
        }
        return b.d * h2f(x[i].d) * float(isum) - b.d * h2f(x[i].dmin) * float(summs);
      });
}
const uint8_t* no_qh(const BlockQ4_K&) { return nullptr; }
const uint8_t* q5k_qh(const BlockQ5_K& b) { return b.qh; }
}  // namespace

void vec_dot_q4_k_q8_k(size_t n, const BlockQ4_K* x, const BlockQ8_K* y, size_t ny, float* s) {
  vec_dot_k4<false>(n, x, y, ny, s, no_qh);
}

void vec_dot_q5_k_q8_k(size_t n, const BlockQ5_K* x, const BlockQ8_K* y, size_t ny, float* s) {
  vec_dot_k4<true>(n, x, y, ny, s, q5k_qh);
}

void vec_dot_q6_k_q8_k(size_t n, const BlockQ6_K* x, const BlockQ8_K* y, size_t ny, float* s) {
  int8_t q[kQK_K];
  dot_rows(
      n / kQK_K, y, ny, s,
      [&](size_t i) {
        const uint8_t* ql = x[i].ql;
        const uint8_t* qh = x[i].qh;
        for (int h = 0; h < 2; ++h) {
          for (int l = 0; l < 32; ++l) {
            const uint8_t a = ql[64 * h + l], c = ql[64 * h + 32 + l], hi = qh[32 * h + l];
            q[128 * h + l] = int8_t(((a & 0xF) | ((hi & 3) << 4)) - 32);
            q[128 * h + 32 + l] = int8_t(((c & 0xF) | (((hi >> 2) & 3) << 4)) - 32);
            q[128 * h + 64 + l] = int8_t(((a >> 4) | (((hi >> 4) & 3) << 4)) - 32);
            q[128 * h + 96 + l] = int8_t(((c >> 4) | (((hi >> 6) & 3) << 4)) - 32);
          }
        }
      },
      [&](size_t i, const BlockQ8_K& b) {
        int isum = 0;
        for (int j = 0; j < 16; ++j) isum += x[i].scales[j] * dot_i8(q + 16 * j, b.qs + 16 * j, 16);
        return b.d * h2f(x[i].d) * float(isum);
      });
}

void vec_dot_q8_k_q8_k(size_t n, const BlockQ8_K* x, const BlockQ8_K* y, size_t ny, float* s) {
  dot_rows(
      n / kQK_K, y, ny, s, [](size_t) {},
      [&](size_t i, const BlockQ8_K& b) { return x[i].d * b.d * float(dot_i8(x[i].qs, b.qs, kQK_K)); });
}

}  // namespace wick::quant
