// Convolution geometry as the CONV kernels take it (one struct passed by value),
// read by the host compiler, nvcc and hipcc alike. A 1-D op is a 2-D one with
// h = k_h = 1 (no padding, stride or dilation along h).
#pragma once

#include <stdint.h>

namespace wick::gpu {

struct ConvGeomK {
  uint64_t c_in, h, w;       // input channels and spatial size
  uint64_t c_out, k_h, k_w;  // kernel
  uint64_t pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
  uint64_t out_h, out_w;
  uint64_t s_b, s_c, s_h, s_w;  // input strides in elements
};

// The planes (b, c) of an NCHW (or NCL, s_h = 0) view: plane p starts at
// p / c * s_b + p % c * s_c.
struct PlanesK {
  uint64_t c, s_b, s_c, s_h, s_w;
};

}  // namespace wick::gpu
