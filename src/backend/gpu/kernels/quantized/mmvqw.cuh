// QUANTIZED: the wide mat-vec, batch 1 in one launch, for Q4_0, Q8_0, Q4_K, Q6_K.
//   mmvqw<Q, J, X>(n, k, k_pad, w, x, out): one row (X: a row source of q8_1.cuh: x
//       of f32/f16/bf16, or a fused f32 input), where k is a multiple of the round
//       width and rows are whole 16-byte words.
// Each block quantizes x into its shared memory (quantize_row_shared). Teams of
// kTeam (32) lanes (a warp on NVIDIA, half a wave on CDNA: sizes and strides are
// compile-time constants) take rows g, g + G, ... (G teams in all) and stream them
// through shared memory as tiles of rounds, several tiles in flight (asynchronous
// copies, vendor_async.cuh: one bulk copy a tile on sm_90+, 16-byte copies a lane
// elsewhere). A round is 1024 or 2048 columns of one weight row, one part a lane: a
// whole block for Q4_0 / Q8_0 (WholeLane), a Q4_K sub-block pair (K4Lane), a quarter
// of a Q6_K block (K6Lane). A row's sum stays in the lanes until its last round,
// then one reduction over the team (deterministic). The plan (round width, tile,
// stages, shared-memory layout) is qplan's (quantized_plan.h), which the host reads.
#pragma once

#include "../../vendor_async.cuh"
#include "blocks.cuh"
#include "q8_1.cuh"

namespace wk::q {

constexpr int kTeam = qplan::kTeam;

// Q4_0 / Q8_0: lane l takes block l of a round (18 or 34 bytes at 18 l / 34 l: 2-byte
// aligned). It reads the aligned words covering the block, d from the first; the
// quants come out as whole words by one byte permutation each (odd lanes: the words
// after the first; even lanes: shifted by two bytes). The activation (natural order,
// halves swizzled as quantize_row_shared's Swz) is read at per-lane constant offsets.
template <int Q>
struct WholeLane {
  static_assert(Q == kQ4_0 || Q == kQ8_0, "WholeLane: Q4_0 and Q8_0 only");
  static constexpr int kBytes = int(sizeof(typename Traits<Q>::Block)), kQw = Q == kQ4_0 ? 4 : 8;
  int a0, dsh, x0, x1;
  uint32_t sel;
  __device__ __forceinline__ explicit WholeLane(int l) {
    const int o = kBytes * l, odd = (o >> 1) & 1;
    a0 = o - 2 * odd;  // the 4-byte word holding d
    dsh = 16 * odd;
    sel = odd ? 0x7654u : 0x5432u;
    const int sw = 16 * ((l >> 2) & 1);
    x0 = 32 * l + sw;  // columns 0..15 of the lane's group
    x1 = 32 * l + 16 - sw;
  }
  // The lane's block of the round at `round` (shared memory) times the activation's
  // 1024 columns at xq (quants) and xd ((d, S * s) pairs).
  __device__ __forceinline__ float dot(const uint8_t* round, const int8_t* xq, const float2* xd) const {
    const uint32_t* p = reinterpret_cast<const uint32_t*>(round + a0);
    uint32_t w[kQw + 1];
#pragma unroll
    for (int i = 0; i <= kQw; ++i) w[i] = p[i];
    const int4 lo = *reinterpret_cast<const int4*>(xq + x0), hi = *reinterpret_cast<const int4*>(xq + x1);
    const int xa[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    const float2 ds = xd[x0 / 32];
    int s0 = 0, s1 = 0;  // two chains of dependent dot products
    if constexpr (Q == kQ4_0) {
      // byte i: column i (low nibble), column 16 + i (high); value d * (q - 8).
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const uint32_t q = __byte_perm(w[i], w[i + 1], sel);
        s0 = wick_dp4a(int(q & 0x0F0F0F0Fu), xa[i], s0);
        s1 = wick_dp4a(int((q >> 4) & 0x0F0F0F0Fu), xa[4 + i], s1);
      }
      return hf(w[0] >> dsh) * fmaf(ds.x, float(s0 + s1), ds.y);  // ds.y = -8 * s
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        s0 = wick_dp4a(int(__byte_perm(w[i], w[i + 1], sel)), xa[i], s0);
        s1 = wick_dp4a(int(__byte_perm(w[i + 4], w[i + 5], sel)), xa[i + 4], s1);
      }
      return hf(w[0] >> dsh) * (ds.x * float(s0 + s1));
    }
  }
};

// Q4_K: 4 lanes a block, 8 blocks a round of 2048 columns. Lane l takes sub-blocks
// 2j, 2j + 1 (j = l % 4) of block l / 4: qs bytes 32j..32j+31, low nibbles columns
// 64j + i, high ones 64j + 32 + i; their 6-bit scales and mins decoded without
// branches. The activation: natural order, 16-byte words swizzled (Swz 2); (d, s)
// pairs as floats.
struct K4Lane {
  int hb, qb, x[4], sh, s2;
  bool hi;
  __device__ __forceinline__ explicit K4Lane(int l) {
    const int b = l >> 2, j = l & 3, sw = (l >> 1) & 3;
    hb = 144 * b;
    qb = 144 * b + 16 + 32 * j;
#pragma unroll
    for (int c = 0; c < 4; ++c) x[c] = 64 * l + 16 * (c ^ sw);
    sh = 16 * (j & 1);
    hi = j >= 2;
    s2 = hi ? 2 : 0;
  }
  __device__ __forceinline__ float dot(const uint8_t* round, const int8_t* xq, const float2* xd,
                                       int l) const {
    const uint4 h = *reinterpret_cast<const uint4*>(round + hb);
    const uint4 q0 = *reinterpret_cast<const uint4*>(round + qb),
                q1 = *reinterpret_cast<const uint4*>(round + qb + 16);
    int4 a[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) a[c] = *reinterpret_cast<const int4*>(xq + x[c]);
    const float4 ds = *reinterpret_cast<const float4*>(xd + 2 * l);  // (d, s) of sub-blocks 2j, 2j + 1
    const uint32_t qw[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};
    const int xa[16] = {a[0].x, a[0].y, a[0].z, a[0].w, a[1].x, a[1].y, a[1].z, a[1].w,
                        a[2].x, a[2].y, a[2].z, a[2].w, a[3].x, a[3].y, a[3].z, a[3].w};
    int lo0 = 0, lo1 = 0, hi0 = 0, hi1 = 0;  // four chains of dependent dot products
#pragma unroll
    for (int i = 0; i < 8; i += 2) {
      lo0 = wick_dp4a(int(qw[i] & 0x0F0F0F0Fu), xa[i], lo0);
      lo1 = wick_dp4a(int(qw[i + 1] & 0x0F0F0F0Fu), xa[i + 1], lo1);
      hi0 = wick_dp4a(int((qw[i] >> 4) & 0x0F0F0F0Fu), xa[8 + i], hi0);
      hi1 = wick_dp4a(int((qw[i + 1] >> 4) & 0x0F0F0F0Fu), xa[9 + i], hi1);
    }
    // get_scale_min_k4 of sub-blocks 2j, 2j + 1 (one byte each): j < 2: scales[2j..]
    // & 63 and scales[2j + 4..] & 63; j >= 2: low 4 bits from scales[2j + 4..], high
    // 2 from bits 6..7 of scales[2j - 4..] (the scale) or scales[2j..] (the min).
    const uint32_t A = h.y >> sh, B = h.z >> sh, Cc = h.w >> sh;
    const uint32_t X = hi ? Cc : A, Y = hi ? Cc >> 4 : B;
    const uint32_t sc = (X & 0x0F0Fu) | ((A >> s2) & 0x3030u), mn = (Y & 0x0F0Fu) | ((B >> s2) & 0x3030u);
    // value = d * sc * q - dmin * m
    const float v = float(sc & 0xFFu) * ds.x * float(lo0 + lo1) + float(sc >> 8) * ds.z * float(hi0 + hi1);
    const float m = float(mn & 0xFFu) * ds.y + float(mn >> 8) * ds.w;
    return hf(h.x) * v - hf(h.x >> 16) * m;
  }
};

// Q6_K: 4 lanes a block, 8 blocks a round of 2048 columns (1680 bytes: odd blocks
// start 2 bytes off a word, so every piece is read as the aligned words around it
// and one byte permutation a word, as WholeLane does). Lane l takes half h = p / 2,
// e = p % 2 (p = l % 4) of block l / 4: ql bytes 64h + 16e.. (A) and 64h + 32 +
// 16e.. (B), qh bytes 32h + 16e.., i.e. columns 128h + 16e + 32c + i for c = 0..3
// (A low nibbles, B low, A high, B high; qh bits 2c..2c+1), each 16-column group
// with its scale byte 8h + e + 2c. q - 32 as the dot of q minus 32 times the sum of
// x (a dot product with 0x20 bytes). The activation: natural order, 16-byte words
// swizzled (Swz 3); (d, s) pairs as floats.
struct K6Lane {
  int a0, b0, h0, s0, d0, x[4], dsx, esh, dsh;
  uint32_t sel;
  __device__ __forceinline__ explicit K6Lane(int l) {
    const int b = l >> 2, p = l & 3, h = p >> 1, e = p & 1;
    const int blk = 210 * b, mis = blk & 2;  // 0 or 2
    sel = mis ? 0x5432u : 0x3210u;
    dsh = 8 * mis;
    a0 = blk + 64 * h + 16 * e - mis;  // aligned word starts of the pieces
    b0 = a0 + 32;
    h0 = blk + 128 + 32 * h + 16 * e - mis;
    s0 = blk + 192 + 8 * h - mis;
    d0 = blk + 208 - mis;
    const int sw = ((2 * b + h) & 3) << 1;
#pragma unroll
    for (int c = 0; c < 4; ++c) x[c] = 16 * ((16 * b + 8 * h + 2 * c + e) ^ sw);
    dsx = 8 * b + 4 * h;  // (d, s) pairs of groups 8b + 4h + c
    esh = 8 * e;
  }
  // The 16 bytes at p0 + (2 if the block is odd) as four words.
  __device__ __forceinline__ void piece(const uint8_t* p0, uint32_t (&o)[4]) const {
    const uint32_t* w = reinterpret_cast<const uint32_t*>(p0);
    uint32_t r[5];
#pragma unroll
    for (int i = 0; i < 5; ++i) r[i] = w[i];
#pragma unroll
    for (int i = 0; i < 4; ++i) o[i] = __byte_perm(r[i], r[i + 1], sel);
  }
  __device__ __forceinline__ float dot(const uint8_t* round, const int8_t* xq, const float2* xd) const {
    uint32_t qa[4], qb[4], qh[4];
    piece(round + a0, qa);
    piece(round + b0, qb);
    piece(round + h0, qh);
    const uint32_t* sp = reinterpret_cast<const uint32_t*>(round + s0);
    const uint32_t sw0 = sp[0], sw1 = sp[1], sw2 = sp[2];
    const uint32_t slo = __byte_perm(sw0, sw1, sel), shi = __byte_perm(sw1, sw2, sel);  // scales 8h..8h+7
    const uint32_t dw = *reinterpret_cast<const uint32_t*>(round + d0) >> dsh;
    int4 a[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) a[c] = *reinterpret_cast<const int4*>(xq + x[c]);
    const float4 ds01 = *reinterpret_cast<const float4*>(xd + dsx),
                 ds23 = *reinterpret_cast<const float4*>(xd + dsx + 2);
    const float dx[4] = {ds01.x, ds01.z, ds23.x, ds23.z};
    int sq[4], sx[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) sq[c] = 0, sx[c] = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int xa[4] = {(&a[0].x)[i], (&a[1].x)[i], (&a[2].x)[i], (&a[3].x)[i]};
      const uint32_t q[4] = {(qa[i] & 0x0F0F0F0Fu) | ((qh[i] << 4) & 0x30303030u),
                             (qb[i] & 0x0F0F0F0Fu) | ((qh[i] << 2) & 0x30303030u),
                             ((qa[i] >> 4) & 0x0F0F0F0Fu) | (qh[i] & 0x30303030u),
                             ((qb[i] >> 4) & 0x0F0F0F0Fu) | ((qh[i] >> 2) & 0x30303030u)};
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        sq[c] = wick_dp4a(int(q[c]), xa[c], sq[c]);
        sx[c] = wick_dp4a(0x20202020, xa[c], sx[c]);
      }
    }
    // value = d * scale * (q - 32); scale byte e + 2c of the eight at 8h
    const float sc[4] = {float(int8_t(slo >> esh)), float(int8_t(slo >> (esh + 16))),
                         float(int8_t(shi >> esh)), float(int8_t(shi >> (esh + 16)))};
    float v = 0.f;
#pragma unroll
    for (int c = 0; c < 4; ++c) v += sc[c] * dx[c] * float(sq[c] - sx[c]);
    return hf(dw) * v;
  }
};

// Per type: the plan's rounds of kRoundCols columns (one part a lane: WholeLane,
// K4Lane or K6Lane), kT rounds a tile (whole 16-byte words), kS tiles of shared memory
// a team, kP tiles issued before the wait for the previous kernel; the activation
// layout the reader wants (swizzle, the scale of the (d, s) pairs' s).
template <int Q>
struct Wide {
  static constexpr qplan::WideShape kShape = qplan::wide_shape(Q);
  static_assert(kShape.round_cols > 0, "mmvqw: a type with a wide plan");
  static constexpr int kRoundCols = kShape.round_cols;
  static constexpr int kRoundBytes = kRoundCols / Traits<Q>::kQK * int(sizeof(typename Traits<Q>::Block));
  static constexpr int kT = kShape.tile_rounds, kS = kShape.stages, kP = kShape.prefetch;
  static constexpr int kReader = Q == kQ4_0 || Q == kQ8_0 ? 0 : Q == kQ4_K ? 1 : 2;  // Whole, K4, K6
  static constexpr int kSwz = kReader + 1, kSumScale = Q == kQ4_0 ? -8 : 1;
  static constexpr int kTileWords = kT * kRoundBytes / 16, kW = (kTileWords + kTeam - 1) / kTeam;
  static_assert(kT * kRoundBytes % 16 == 0, "mmvqw: a tile is whole 16-byte words");
};
// Slots of a team (qplan::kTeamSlotBytes): kTeamRows rows of kTeam floats, then the
// barriers; rows are summed by groups of 4 lanes, one row a group.
constexpr int kSlotFloats = int(qplan::kTeamSlotBytes / sizeof(float)), kRowFloats = qplan::kTeamRows * kTeam;
static_assert(qplan::kTeamRows * 4 == kTeam, "mmvqw: one row a 4-lane group");
static_assert(sizeof(float2) == qplan::kWideDsBytes, "mmvqw: (d, s) pairs of floats");

template <int Q, int J, class X>
__device__ void mmvqw(int n, int k, int k_pad, const uint8_t* __restrict__ w, X x, float* __restrict__ out) {
  using C = Wide<Q>;
  constexpr int kRC = C::kRoundCols, kRB = C::kRoundBytes, kT = C::kT, kS = C::kS, kTW = C::kTileWords;
  extern __shared__ uint4 smem_w[];
  const int l = int(threadIdx.x) % kTeam, team = int(threadIdx.x) / kTeam, teams = int(blockDim.x) / kTeam;
  int8_t* sq = reinterpret_cast<int8_t*>(smem_w);
  float2* sd = reinterpret_cast<float2*>(sq + k_pad);  // k_pad: a multiple of kRowPadding
  uint4* stages0 = reinterpret_cast<uint4*>(sd + k_pad / 32);
  uint4* stages = stages0 + size_t(team) * kS * kTW;
  float* slots = reinterpret_cast<float*>(stages0 + size_t(teams) * kS * kTW) + kSlotFloats * team;
#if defined(WICK_BULK_COPY)
  static_assert(kS <= qplan::kTeamBarriers, "mmvqw: a barrier a stage");
  uint64_t* bars = reinterpret_cast<uint64_t*>(slots + kRowFloats);  // one a stage
  if (l == 0) {
#pragma unroll
    for (int i = 0; i < kS; ++i) wick_mbar_init(bars + i);
    wick_mbar_init_fence();
  }
  wick_wave_sync();
  unsigned parity = 0;  // bit s: the parity of stage s's next phase
#endif
  // Team g of G takes rows g, g + G, g + 2G, ...: at any time the teams read
  // neighbouring rows, sweeping the weight together. A row is tpr tiles of kT
  // rounds (its last one shorter where kT does not divide the row's rpr rounds).
  const int G = int(gridDim.x) * teams, g = int(blockIdx.x) * teams + team;
  const int rows = g < n ? (n - 1 - g) / G + 1 : 0;
  const int rpr = k / kRC, tpr = (rpr + kT - 1) / kT, tiles = rows * tpr;
  const size_t row_words = size_t(rpr) * kRB / 16, stride_words = size_t(G) * row_words;
  // The copy cursor: tile ij of the row at isrc (16-byte aligned).
  const uint4* isrc = reinterpret_cast<const uint4*>(w) + size_t(g) * row_words;
  int ij = 0;
  // The next tile into stage `stage`: one bulk copy by lane 0 (completing the stage's
  // barrier phase), or per-lane copies making one commit group a call (empty past the
  // last tile; whole tiles copy every word without tests but the last's).
  auto issue = [&](int t, int stage) {
    if (t < tiles) {
      const int nw = min(kT, rpr - ij * kT) * kRB / 16;
#if defined(WICK_BULK_COPY)
      if (l == 0)
        wick_bulk_copy(stages + stage * kTW, isrc + size_t(ij) * kTW, unsigned(nw) * 16u, bars + stage);
#else
      constexpr int kW = C::kW;  // words a lane
      const uint4* s = isrc + size_t(ij) * kTW + l;
      uint4* d = stages + stage * kTW + l;
      if (nw == kTW) {
#pragma unroll
        for (int u = 0; u < kW; ++u)
          if (kTeam * (u + 1) <= kTW || l + kTeam * u < kTW) wick_copy16_async(d + kTeam * u, s + kTeam * u);
      } else {
#pragma unroll
        for (int u = 0; u < kW; ++u)
          if (l + kTeam * u < nw) wick_copy16_async(d + kTeam * u, s + kTeam * u);
      }
#endif
      if (++ij == tpr) {
        ij = 0;
        isrc += stride_words;
      }
    }
#if !defined(WICK_BULK_COPY)
    wick_async_commit();
#endif
  };
  // The first kP tiles in flight before the previous kernel is waited for (launched
  // dependent: the weight is no kernel's output), then x quantized, the other first
  // tiles in flight behind its loads.
#if defined(WICK_BULK_COPY)
  constexpr int kP = C::kP;
#else
  constexpr int kP = 0;         // never launched dependent: x's loads first
#endif
#pragma unroll
  for (int j = 0; j < kP; ++j) issue(j, j);
#if defined(WICK_BULK_COPY)
  wick_grid_launch_dependents();
  wick_grid_wait_previous();
#endif
  // Team 0's row slots: the scratch of x's prepare (read before the barrier after
  // the quantization; the slots are written after it).
  x.prepare(k, reinterpret_cast<float*>(stages0 + size_t(teams) * kS * kTW));
  quantize_row_shared<C::kSwz, J, C::kSumScale>(k, k_pad, x, sq, sd, [&] {
#pragma unroll
    for (int j = kP; j < kS - 1; ++j) issue(j, j);
  });
  __syncthreads();  // the activation visible to every team
  const WholeLane<C::kReader == 0 ? Q : kQ4_0> whole(l);
  const K4Lane k4(l);
  const K6Lane k6(l);
  // Finished rows' lane sums wait in the team's slots (the team's row i0 + i in
  // slots[32 i..]), kTeamRows (8) at a time: lanes 4i..4i+3 add row i's 32 values,
  // then two shuffles.
  int np = 0, i0 = 0;
  auto flush = [&] {
    wick_wave_sync();  // every lane's slot stores visible
    const float4 u = *reinterpret_cast<const float4*>(slots + 8 * l);
    const float4 v = *reinterpret_cast<const float4*>(slots + 8 * l + 4);
    float sum = ((u.x + u.y) + (u.z + u.w)) + ((v.x + v.y) + (v.z + v.w));
    sum += wick_shfl_xor(sum, 1);
    sum += wick_shfl_xor(sum, 2);
    const int i = l >> 2;
    if ((l & 3) == 0 && i < np) out[g + (i0 + i) * G] = sum;
    i0 += np;
    np = 0;
    wick_wave_sync();  // every lane done reading the slots
  };
  // The lane's part of round r of the tile at tb, whose first round is round c0 of its row.
  auto part = [&](const uint8_t* tb, int c0, int r) {
    const uint8_t* rb = tb + r * kRB;
    const int8_t* xq = sq + kRC * (c0 + r);
    const float2* xd = sd + kRC / 32 * (c0 + r);
    if constexpr (C::kReader == 0) {
      return whole.dot(rb, xq, xd);
    } else if constexpr (C::kReader == 1) {
      return k4.dot(rb, xq, xd, l);
    } else {
      return k6.dot(rb, xq, xd);
    }
  };
  int cj = 0, stage = 0;  // the tile computed: tile cj of its row, in stage `stage`
  float acc = 0.f;
  for (int t = 0; t < tiles; ++t) {  // the same trip count for every lane of a team
#if defined(WICK_BULK_COPY)
    wick_mbar_wait(bars + stage, (parity >> stage) & 1u);  // tile t landed
    parity ^= 1u << stage;
    wick_wave_sync();                      // every lane done with tile t - 1
    if (l == 0) wick_fence_proxy_async();  // ... before the copy over it
#else
    wick_async_wait<kS - 2>();  // this lane's copies of tile t landed
    wick_wave_sync();           // every lane's too; every lane done with tile t - 1
#endif
    issue(t + kS - 1, stage == 0 ? kS - 1 : stage - 1);  // into tile t - 1's stage
    const uint8_t* tb = reinterpret_cast<const uint8_t*>(stages + stage * kTW);
    stage = stage + 1 == kS ? 0 : stage + 1;
    const int c0 = cj * kT, nr = min(kT, rpr - c0);
    if (nr == kT) {  // every round of the tile, without branches, so they interleave
      float p[kT];
#pragma unroll
      for (int r = 0; r < kT; ++r) p[r] = part(tb, c0, r);
#pragma unroll
      for (int r = 0; r < kT; ++r) acc += p[r];
    } else {
#pragma unroll
      for (int r = 0; r < kT; ++r)
        if (r < nr) acc += part(tb, c0, r);
    }
    if (++cj == tpr) {  // the row's last tile (the same for the whole team)
      cj = 0;
      slots[kTeam * np + l] = acc;
      acc = 0.f;
      if (++np == qplan::kTeamRows) flush();
    }
  }
  if (np > 0) flush();
#if !defined(WICK_BULK_COPY)
  wick_async_wait<0>();  // no copy outlives the block (every bulk copy was waited for)
#endif
}

}  // namespace wk::q
