// STUB: replaced by the family owner.
#include "core/checks.h"

namespace wick {

Tensor Tensor::matmul(const Tensor& rhs) const { throw_error(ErrorKind::InvalidArgument, "matmul", "not implemented yet"); }
Tensor Tensor::conv1d(const Tensor& kernel, size_t padding, size_t stride, size_t dilation, size_t groups) const { throw_error(ErrorKind::InvalidArgument, "conv1d", "not implemented yet"); }
Tensor Tensor::conv_transpose1d(const Tensor& kernel, size_t padding, size_t output_padding, size_t stride, size_t dilation, size_t groups) const { throw_error(ErrorKind::InvalidArgument, "conv_transpose1d", "not implemented yet"); }
Tensor Tensor::conv2d(const Tensor& kernel, size_t padding, size_t stride, size_t dilation, size_t groups) const { throw_error(ErrorKind::InvalidArgument, "conv2d", "not implemented yet"); }
Tensor Tensor::conv_transpose2d(const Tensor& kernel, size_t padding, size_t output_padding, size_t stride, size_t dilation) const { throw_error(ErrorKind::InvalidArgument, "conv_transpose2d", "not implemented yet"); }
Tensor Tensor::avg_pool2d(std::array<size_t, 2> kernel, std::array<size_t, 2> stride) const { throw_error(ErrorKind::InvalidArgument, "avg_pool2d", "not implemented yet"); }
Tensor Tensor::max_pool2d(std::array<size_t, 2> kernel, std::array<size_t, 2> stride) const { throw_error(ErrorKind::InvalidArgument, "max_pool2d", "not implemented yet"); }
Tensor Tensor::upsample_nearest1d(size_t target_len) const { throw_error(ErrorKind::InvalidArgument, "upsample_nearest1d", "not implemented yet"); }
Tensor Tensor::upsample_nearest2d(size_t target_h, size_t target_w) const { throw_error(ErrorKind::InvalidArgument, "upsample_nearest2d", "not implemented yet"); }
Tensor Tensor::upsample_bilinear2d(size_t out_h, size_t out_w, bool align_corners) const { throw_error(ErrorKind::InvalidArgument, "upsample_bilinear2d", "not implemented yet"); }

}  // namespace wick
