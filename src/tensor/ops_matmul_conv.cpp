// Front end of matmul, convolutions, pooling and upsampling: shape, dtype, device
// and geometry checks, then one backend call. Groups: conv1d/conv2d pass them to
// the backend (im2col per group); conv_transpose1d with groups > 1 runs one
// transposed convolution per channel group here and concatenates the outputs.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "base/checked.h"
#include "base/dispatch.h"
#include "tensor/checks.h"

namespace wick {

using front::describe;

namespace {

void check_rank(const char* op, const Tensor& t, size_t rank, const char* what, const char* layout) {
  if (t.rank() != rank) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("{} {} must be {} (rank {})", what, describe(t), layout, rank));
  }
}

void check_positive(const char* op, size_t v, const char* what) {
  if (v == 0) throw_error(ErrorKind::InvalidArgument, op, fmt::format("{} must be positive, got 0", what));
}

// What every convolution checks first: input and kernel defined, on one device, of
// one float dtype; their ranks (`input_layout` and `kernel_layout` describe the
// expected dims in messages); stride and dilation positive.
void check_conv_start(const char* op, const Tensor& x, const Tensor& k, size_t rank, const char* input_layout,
                      const char* kernel_layout, size_t stride, size_t dilation) {
  front::check_defined(op, x, "input");
  front::check_defined(op, k, "kernel");
  front::check_same_device(op, x, k);
  if (x.dtype() != k.dtype()) {
    throw_error(ErrorKind::DTypeMismatch, op,
                fmt::format("input {} kernel {}: dtypes differ", describe(x), describe(k)));
  }
  front::check_dtype_in(op, x, kFloatDTypes, "input");
  check_rank(op, x, rank, "input", input_layout);
  check_rank(op, k, rank, "kernel", kernel_layout);
  check_positive(op, stride, "stride");
  check_positive(op, dilation, "dilation");
}

// A transposed convolution's kernel (C_in, C_out/groups, ...) against input (B, C_in, ...).
void check_transposed_c_in(const char* op, const Tensor& x, const Tensor& k) {
  if (k.dims()[0] != x.dims()[1]) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("input {} kernel {}: kernel dim 0 must equal C_in {}", describe(x), describe(k),
                            x.dims()[1]));
  }
}

// Output length of a convolution along one axis; throws when no output position exists. The
// padded input and the dilated kernel must fit in 2^63-1 (the backends index in ptrdiff_t).
size_t conv_out_len(const char* op, const Tensor& x, const Tensor& k, size_t in, size_t ks, size_t padding,
                    size_t stride, size_t dilation) {
  const auto geometry = [&](const char* what) {
    return fmt::format("input {} kernel {} padding {} dilation {}: {}", describe(x), describe(k), padding,
                       dilation, what);
  };
  const ErrorKind bad = ErrorKind::InvalidArgument;
  const size_t span = checked_add(checked_mul(dilation, ks - 1, bad, op, geometry("the dilated kernel")), 1,
                                  bad, op, geometry("the dilated kernel"));
  const size_t padded = checked_add(in, checked_mul(2, padding, bad, op, geometry("the padding")), bad, op,
                                    geometry("the padded input"));
  if (padded < span) {
    throw_error(
        ErrorKind::InvalidArgument, op,
        fmt::format("input {} kernel {} padding {} dilation {}: the dilated kernel ({}) is larger than the "
                    "padded input ({}), no output positions",
                    describe(x), describe(k), padding, dilation, span, padded));
  }
  return (padded - span) / stride + 1;
}

// Output length of a transposed convolution along one axis (> 0, else throws).
size_t conv_transpose_out_len(const char* op, const Tensor& x, const Tensor& k, size_t in, size_t ks,
                              size_t padding, size_t output_padding, size_t stride, size_t dilation) {
  if (output_padding >= stride && output_padding >= dilation) {
    throw_error(
        ErrorKind::InvalidArgument, op,
        fmt::format("input {} kernel {}: output_padding {} must be smaller than stride {} or dilation {}",
                    describe(x), describe(k), output_padding, stride, dilation));
  }
  // The full (unpadded) output length (in-1)*stride + dilation*(ks-1) + output_padding + 1 and
  // 2*padding must fit in 2^63-1 (the backends index in ptrdiff_t).
  const auto geometry = [&](const char* what) {
    return fmt::format("input {} kernel {} padding {} output_padding {} stride {} dilation {}: {}",
                       describe(x), describe(k), padding, output_padding, stride, dilation, what);
  };
  const ErrorKind bad = ErrorKind::InvalidArgument;
  size_t full = 0;
  if (in > 0) {
    const std::string what = geometry("the output length");
    full = checked_add(checked_mul(in - 1, stride, bad, op, what),
                       checked_mul(dilation, ks - 1, bad, op, what), bad, op, what);
    full = checked_add(checked_add(full, output_padding, bad, op, what), 1, bad, op, what);
  }
  const size_t pad2 = checked_mul(2, padding, bad, op, geometry("the padding"));
  if (full <= pad2) {
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("input {} kernel {} padding {} stride {} dilation {}: no output positions",
                            describe(x), describe(k), padding, stride, dilation));
  }
  return full - pad2;
}

// The backends unfold the input (im2col): a matrix of `per_position` kernel taps (C_in/groups x
// kernel size for a convolution, C_out x kernel size for a transposed one, each a product of the
// dims of an existing tensor) by `positions`; its size must fit as any tensor's does.
void check_unfolded(const char* op, const Tensor& x, const Tensor& k, size_t per_position, size_t positions) {
  uint64_t n = 0;
  if (!mul_fits(per_position, positions, n)) {
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("input {} kernel {}: the unfolded input ({} x {}) exceeds 2^63-1 elements",
                            describe(x), describe(k), per_position, positions));
  }
}

void check_groups(const char* op, const Tensor& x, const Tensor& k, size_t c_in, size_t c_out,
                  size_t groups) {
  check_positive(op, groups, "groups");
  if (c_in % groups != 0 || c_out % groups != 0) {
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("input {} kernel {}: groups {} must divide C_in {} and C_out {}", describe(x),
                            describe(k), groups, c_in, c_out));
  }
}

// A forward convolution's channels: kernel (C_out, C_in/groups, ...) against input (B, C_in, ...).
void check_conv_channels(const char* op, const Tensor& x, const Tensor& k, size_t groups) {
  size_t c_in = x.dims()[1];
  check_groups(op, x, k, c_in, k.dims()[0], groups);
  if (k.dims()[1] * groups != c_in) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("input {} kernel {}: kernel has {} input channels, expected C_in/groups = {}",
                            describe(x), describe(k), k.dims()[1], c_in / groups));
  }
}

}  // namespace

// --- matmul ----------------------------------------------------------------------

Tensor Tensor::matmul(const Tensor& rhs) const {
  const char* op = "matmul";
  front::check_defined(op, *this, "lhs");
  front::check_defined(op, rhs, "rhs");
  front::check_same_device(op, *this, rhs);
  if (rank() == 0 || rhs.rank() == 0) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("lhs {} rhs {}: both operands need rank >= 1", describe(*this), describe(rhs)));
  }
  // NumPy's 1-D rules: a row (1, k) on the left, a column (k, 1) on the right, the
  // added dim dropped from the result.
  if (rank() == 1 || rhs.rank() == 1) {
    size_t rk = rhs.rank() == 1 ? rhs.dims()[0] : rhs.dims()[rhs.rank() - 2];
    if (dims().back() != rk) {
      throw_error(ErrorKind::ShapeMismatch, op,
                  fmt::format("lhs {} rhs {}: inner dims differ", describe(*this), describe(rhs)));
    }
  }
  if (rank() == 1) {
    Tensor out = unsqueeze(0).matmul(rhs);
    return out.squeeze(rhs.rank() == 1 ? -1 : -2);
  }
  if (rhs.rank() == 1) return matmul(rhs.unsqueeze(1)).squeeze(-1);
  front::check_same_dtype(op, *this, rhs);
  front::check_dtype_in(op, *this, kMatmulDTypes, "lhs");
  size_t m = dims()[rank() - 2], k = dims()[rank() - 1], n = rhs.dims()[rhs.rank() - 1];
  if (rhs.dims()[rhs.rank() - 2] != k) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("lhs {} rhs {}: inner dims differ", describe(*this), describe(rhs)));
  }
  // Batch dims broadcast NumPy-style.
  size_t lb = rank() - 2, rb = rhs.rank() - 2, nb = std::max(lb, rb);
  std::vector<size_t> batch(nb);
  for (size_t i = 0; i < nb; ++i) {
    size_t dl = i + lb >= nb ? dims()[i + lb - nb] : 1;
    size_t dr = i + rb >= nb ? rhs.dims()[i + rb - nb] : 1;
    if (dl != dr && dl != 1 && dr != 1) {
      throw_error(ErrorKind::ShapeMismatch, op,
                  fmt::format("lhs {} rhs {}: batch dims do not broadcast", describe(*this), describe(rhs)));
    }
    batch[i] = dl == 1 ? dr : dl;
  }
  size_t b = 1;
  for (size_t v : batch) b *= v;
  auto with = [&](size_t r, size_t c) {
    std::vector<size_t> v = batch;
    v.push_back(r);
    v.push_back(c);
    return Shape(std::move(v));
  };
  Shape out_shape = with(m, n);
  if (front::check_shape(op, out_shape, dtype()) == 0 || k == 0)
    return Tensor::zeros(out_shape, dtype(), device());
  Layout lhs_l = layout().broadcast_as(with(m, k)), rhs_l = rhs.layout().broadcast_as(with(k, n));
  auto s = front::storage_of(*this).matmul(front::storage_of(rhs), MatmulDims{b, m, n, k}, lhs_l, rhs_l);
  return front::wrap(std::move(s), out_shape, dtype(), device());
}

// --- convolutions ----------------------------------------------------------------

Tensor Tensor::conv1d(const Tensor& kernel, size_t padding, size_t stride, size_t dilation,
                      size_t groups) const {
  const char* op = "conv1d";
  check_conv_start(op, *this, kernel, 3, "(B, C_in, L)", "(C_out, C_in/groups, K)", stride, dilation);
  Conv1dParams p;
  p.b_size = dims()[0], p.c_in = dims()[1], p.l_in = dims()[2];
  p.c_out = kernel.dims()[0], p.k_size = kernel.dims()[2];
  p.padding = padding, p.stride = stride, p.dilation = dilation, p.groups = groups;
  check_conv_channels(op, *this, kernel, groups);
  check_positive(op, p.k_size, "kernel size");
  size_t l_out = conv_out_len(op, *this, kernel, p.l_in, p.k_size, padding, stride, dilation);
  Shape out_shape{p.b_size, p.c_out, l_out};
  if (front::check_shape(op, out_shape, dtype()) == 0) return Tensor::zeros(out_shape, dtype(), device());
  check_unfolded(op, *this, kernel, kernel.dims()[1] * p.k_size, l_out);
  auto s = front::storage_of(*this).conv1d(layout(), front::storage_of(kernel), kernel.layout(), p);
  return front::wrap(std::move(s), out_shape, dtype(), device());
}

Tensor Tensor::conv_transpose1d(const Tensor& kernel, size_t padding, size_t output_padding, size_t stride,
                                size_t dilation, size_t groups) const {
  const char* op = "conv_transpose1d";
  check_conv_start(op, *this, kernel, 3, "(B, C_in, L)", "(C_in, C_out/groups, K)", stride, dilation);
  check_transposed_c_in(op, *this, kernel);
  size_t c_in = dims()[1];
  check_groups(
      op, *this, kernel, c_in,
      checked_mul(kernel.dims()[1], groups, ErrorKind::InvalidArgument, op, "C_out = kernel dim 1 * groups"),
      groups);
  check_positive(op, kernel.dims()[2], "kernel size");
  size_t l_out = conv_transpose_out_len(op, *this, kernel, dims()[2], kernel.dims()[2], padding,
                                        output_padding, stride, dilation);
  if (groups > 1) {
    // Channel group g: input channels [g*C_in/groups, ...) with kernel rows of the same range.
    size_t cin_g = c_in / groups;
    std::vector<Tensor> parts;
    for (size_t g = 0; g < groups; ++g) {
      parts.push_back(narrow(1, g * cin_g, cin_g)
                          .conv_transpose1d(kernel.narrow(0, g * cin_g, cin_g), padding, output_padding,
                                            stride, dilation, 1));
    }
    return Tensor::cat(parts, 1);
  }
  ConvTranspose1dParams p;
  p.b_size = dims()[0], p.c_in = c_in, p.l_in = dims()[2];
  p.c_out = kernel.dims()[1], p.k_size = kernel.dims()[2];
  p.padding = padding, p.output_padding = output_padding, p.stride = stride, p.dilation = dilation;
  Shape out_shape{p.b_size, p.c_out, l_out};
  if (front::check_shape(op, out_shape, dtype()) == 0) return Tensor::zeros(out_shape, dtype(), device());
  check_unfolded(op, *this, kernel, p.c_out * p.k_size, p.l_in);
  auto s = front::storage_of(*this).conv_transpose1d(layout(), front::storage_of(kernel), kernel.layout(), p);
  return front::wrap(std::move(s), out_shape, dtype(), device());
}

Tensor Tensor::conv2d(const Tensor& kernel, size_t padding, size_t stride, size_t dilation,
                      size_t groups) const {
  const char* op = "conv2d";
  check_conv_start(op, *this, kernel, 4, "(B, C_in, H, W)", "(C_out, C_in/groups, KH, KW)", stride, dilation);
  Conv2dParams p;
  p.b_size = dims()[0], p.c_in = dims()[1], p.i_h = dims()[2], p.i_w = dims()[3];
  p.c_out = kernel.dims()[0], p.k_h = kernel.dims()[2], p.k_w = kernel.dims()[3];
  p.padding = padding, p.stride = stride, p.dilation = dilation, p.groups = groups;
  check_conv_channels(op, *this, kernel, groups);
  check_positive(op, p.k_h * p.k_w, "kernel size");
  size_t oh = conv_out_len(op, *this, kernel, p.i_h, p.k_h, padding, stride, dilation);
  size_t ow = conv_out_len(op, *this, kernel, p.i_w, p.k_w, padding, stride, dilation);
  Shape out_shape{p.b_size, p.c_out, oh, ow};
  if (front::check_shape(op, out_shape, dtype()) == 0) return Tensor::zeros(out_shape, dtype(), device());
  check_unfolded(op, *this, kernel, kernel.dims()[1] * p.k_h * p.k_w, oh * ow);
  auto s = front::storage_of(*this).conv2d(layout(), front::storage_of(kernel), kernel.layout(), p);
  return front::wrap(std::move(s), out_shape, dtype(), device());
}

Tensor Tensor::conv_transpose2d(const Tensor& kernel, size_t padding, size_t output_padding, size_t stride,
                                size_t dilation) const {
  const char* op = "conv_transpose2d";
  check_conv_start(op, *this, kernel, 4, "(B, C_in, H, W)", "(C_in, C_out, KH, KW)", stride, dilation);
  check_transposed_c_in(op, *this, kernel);
  ConvTranspose2dParams p;
  p.b_size = dims()[0], p.c_in = dims()[1], p.i_h = dims()[2], p.i_w = dims()[3];
  p.c_out = kernel.dims()[1], p.k_h = kernel.dims()[2], p.k_w = kernel.dims()[3];
  p.padding = padding, p.output_padding = output_padding, p.stride = stride, p.dilation = dilation;
  check_positive(op, p.k_h * p.k_w, "kernel size");
  size_t oh =
      conv_transpose_out_len(op, *this, kernel, p.i_h, p.k_h, padding, output_padding, stride, dilation);
  size_t ow =
      conv_transpose_out_len(op, *this, kernel, p.i_w, p.k_w, padding, output_padding, stride, dilation);
  Shape out_shape{p.b_size, p.c_out, oh, ow};
  if (front::check_shape(op, out_shape, dtype()) == 0) return Tensor::zeros(out_shape, dtype(), device());
  check_unfolded(op, *this, kernel, p.c_out * p.k_h * p.k_w, p.i_h * p.i_w);
  auto s = front::storage_of(*this).conv_transpose2d(layout(), front::storage_of(kernel), kernel.layout(), p);
  return front::wrap(std::move(s), out_shape, dtype(), device());
}

// --- pooling and upsampling ------------------------------------------------------

namespace {

Tensor pool2d(const Tensor& x, PoolOp op_kind, const char* op, std::array<size_t, 2> kernel,
              std::array<size_t, 2> stride) {
  front::check_defined(op, x, "input");
  check_rank(op, x, 4, "input", "(B, C, H, W)");
  if (kernel[0] == 0 || kernel[1] == 0 || stride[0] == 0 || stride[1] == 0) {
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("input {}: kernel [{},{}] and stride [{},{}] must be positive", describe(x),
                            kernel[0], kernel[1], stride[0], stride[1]));
  }
  if (kernel[0] > x.dims()[2] || kernel[1] > x.dims()[3]) {
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("kernel [{},{}] is larger than the input {}", kernel[0], kernel[1], describe(x)));
  }
  Shape out_shape{x.dims()[0], x.dims()[1], (x.dims()[2] - kernel[0]) / stride[0] + 1,
                  (x.dims()[3] - kernel[1]) / stride[1] + 1};
  if (out_shape.elem_count() == 0) return Tensor::zeros(out_shape, x.dtype(), x.device());
  auto s = front::storage_of(x).pool2d(op_kind, x.layout(), kernel, stride);
  return front::wrap(std::move(s), out_shape, x.dtype(), x.device());
}

// Upsampling needs a positive target and, when there is anything to read, non-empty spatial dims.
void check_upsample(const char* op, const Tensor& x, size_t rank, const char* layout,
                    std::initializer_list<size_t> targets) {
  front::check_defined(op, x, "input");
  check_rank(op, x, rank, "input", layout);
  for (size_t t : targets) {
    if (t == 0)
      throw_error(ErrorKind::InvalidArgument, op, fmt::format("input {}: output size 0", describe(x)));
  }
  for (size_t d = 2; d < rank; ++d) {
    if (x.dims()[d] == 0) {
      throw_error(ErrorKind::InvalidArgument, op,
                  fmt::format("input {}: spatial dim {} is empty, nothing to sample", describe(x), d));
    }
  }
}

}  // namespace

Tensor Tensor::avg_pool2d(std::array<size_t, 2> kernel, std::array<size_t, 2> stride) const {
  return pool2d(*this, PoolOp::Avg, "avg_pool2d", kernel, stride);
}

Tensor Tensor::max_pool2d(std::array<size_t, 2> kernel, std::array<size_t, 2> stride) const {
  return pool2d(*this, PoolOp::Max, "max_pool2d", kernel, stride);
}

Tensor Tensor::upsample_nearest1d(size_t target_len) const {
  const char* op = "upsample_nearest1d";
  check_upsample(op, *this, 3, "(B, C, L)", {target_len});
  Shape out_shape{dims()[0], dims()[1], target_len};
  if (front::check_shape(op, out_shape, dtype()) == 0) return Tensor::zeros(out_shape, dtype(), device());
  auto s = front::storage_of(*this).upsample_nearest1d(layout(), target_len);
  return front::wrap(std::move(s), out_shape, dtype(), device());
}

Tensor Tensor::upsample_nearest2d(size_t target_h, size_t target_w) const {
  const char* op = "upsample_nearest2d";
  check_upsample(op, *this, 4, "(B, C, H, W)", {target_h, target_w});
  Shape out_shape{dims()[0], dims()[1], target_h, target_w};
  if (front::check_shape(op, out_shape, dtype()) == 0) return Tensor::zeros(out_shape, dtype(), device());
  auto s = front::storage_of(*this).upsample_nearest2d(layout(), target_h, target_w);
  return front::wrap(std::move(s), out_shape, dtype(), device());
}

Tensor Tensor::upsample_bilinear2d(size_t out_h, size_t out_w, bool align_corners,
                                   std::optional<double> scale_h, std::optional<double> scale_w) const {
  const char* op = "upsample_bilinear2d";
  check_upsample(op, *this, 4, "(B, C, H, W)", {out_h, out_w});
  for (const auto& [s, what] : {std::pair{scale_h, "scale_h"}, std::pair{scale_w, "scale_w"}}) {
    if (s && !(std::isfinite(*s) && *s > 0)) {
      throw_error(ErrorKind::InvalidArgument, op,
                  fmt::format("input {}: {} {} must be finite and positive", describe(*this), what, *s));
    }
  }
  Shape out_shape{dims()[0], dims()[1], out_h, out_w};
  if (front::check_shape(op, out_shape, dtype()) == 0) return Tensor::zeros(out_shape, dtype(), device());
  BilinearParams p;
  p.out_h = out_h, p.out_w = out_w, p.align_corners = align_corners;
  p.scale_h = scale_h, p.scale_w = scale_w;
  auto s = front::storage_of(*this).upsample_bilinear2d(layout(), p);
  return front::wrap(std::move(s), out_shape, dtype(), device());
}

}  // namespace wick
