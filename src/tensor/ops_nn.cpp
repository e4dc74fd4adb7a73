// Front end of the fused nn ops (softmax, norms, rotary embeddings): checks
// shapes, dtypes and devices, makes every input contiguous, then one backend call.
#include <fmt/format.h>

#include <cmath>

#include "base/dispatch.h"
#include "tensor/checks.h"

namespace wick {

using front::describe;

namespace {

void check_float_input(const char* op, const Tensor& x) {
  front::check_defined(op, x, "input");
  front::check_dtype_in(op, x, kFloatDTypes, "input");
  if (x.rank() == 0)
    throw_error(ErrorKind::DimOutOfRange, op, fmt::format("input {} has no last dim", describe(x)));
}

// A companion tensor (alpha, beta, cos, sin) on x's device with x's dtype.
void check_companion(const char* op, const Tensor& x, const Tensor& t, const char* what) {
  front::check_defined(op, t, what);
  front::check_same_device(op, x, t);
  if (t.dtype() != x.dtype()) {
    throw_error(ErrorKind::DTypeMismatch, op,
                fmt::format("input {} {} {}: dtypes differ", describe(x), what, describe(t)));
  }
}

// alpha / beta: 1-D with len = the last dim of x.
void check_norm_param(const char* op, const Tensor& x, const Tensor& p, const char* what) {
  check_companion(op, x, p, what);
  if (p.rank() != 1 || p.dims()[0] != x.dims().back()) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("input {} {} {}: {} must be 1-D with the last dim's length {}", describe(x), what,
                            describe(p), what, x.dims().back()));
  }
}

void check_eps(const char* op, float eps) {
  if (!(eps >= 0.0f) || !std::isfinite(eps)) {
    throw_error(ErrorKind::InvalidArgument, op, fmt::format("eps {} must be finite and >= 0", eps));
  }
}

Tensor softmax_impl(const Tensor& x, bool log, const char* op) {
  check_float_input(op, x);
  Tensor c = x.contiguous();
  auto s = front::storage_of(c).softmax_last_dim(c.layout(), log);
  return front::wrap(std::move(s), x.shape(), x.dtype(), x.device());
}

// Along dim: the last-dim kernel on the transposed input, transposed back.
Tensor softmax_dim(const Tensor& x, int64_t dim, bool log, const char* op) {
  check_float_input(op, x);
  const size_t d = resolve_dim(dim, x.rank(), op);
  if (d + 1 == x.rank()) return softmax_impl(x, log, op);
  return softmax_impl(x.transpose(int64_t(d), -1), log, op).transpose(int64_t(d), -1);
}

Tensor rope_any(RopeKind kind, const char* op, const Tensor& x, const Tensor& cos, const Tensor& sin) {
  front::check_defined(op, x, "input");
  front::check_dtype_in(op, x, kFloatDTypes, "input");
  bool thd = kind == RopeKind::Thd;
  if (x.rank() != 4) {
    throw_error(
        ErrorKind::ShapeMismatch, op,
        fmt::format("input {} must be {} (rank 4)", describe(x), thd ? "(B, T, H, D)" : "(B, H, T, D)"));
  }
  check_companion(op, x, cos, "cos");
  check_companion(op, x, sin, "sin");
  size_t b = x.dims()[0], t = thd ? x.dims()[1] : x.dims()[2], d = x.dims()[3];
  if (d % 2 != 0) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("input {}: head dim D = {} must be even", describe(x), d));
  }
  if (cos.shape() != sin.shape()) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("cos {} sin {}: shapes differ", describe(cos), describe(sin)));
  }
  bool ok = cos.rank() == 2 || (cos.rank() == 3 && cos.dims()[0] == b);
  ok = ok && cos.dims().back() == d / 2 && cos.dims()[cos.rank() - 2] >= t;
  if (!ok) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("input {} cos {}: cos/sin must be (T', D/2) or (B, T', D/2) with T' >= T = {}, "
                            "D/2 = {}, B = {}",
                            describe(x), describe(cos), t, d / 2, b));
  }
  Tensor xc = x.contiguous(), cc = cos.contiguous(), sc = sin.contiguous();
  auto s = front::storage_of(xc).rope(kind, xc.layout(), front::storage_of(cc), cc.layout(),
                                      front::storage_of(sc), sc.layout());
  return front::wrap(std::move(s), x.shape(), x.dtype(), x.device());
}

}  // namespace

Tensor nn::softmax_last_dim(const Tensor& x) { return softmax_impl(x, false, "softmax_last_dim"); }

Tensor nn::log_softmax_last_dim(const Tensor& x) { return softmax_impl(x, true, "log_softmax_last_dim"); }

Tensor nn::softmax(const Tensor& x, int64_t dim) { return softmax_dim(x, dim, false, "softmax"); }

Tensor nn::log_softmax(const Tensor& x, int64_t dim) { return softmax_dim(x, dim, true, "log_softmax"); }

Tensor nn::rms_norm(const Tensor& x, const Tensor& alpha, float eps) {
  const char* op = "rms_norm";
  check_float_input(op, x);
  check_eps(op, eps);
  if (alpha.defined()) check_norm_param(op, x, alpha, "alpha");
  Tensor xc = x.contiguous();
  Tensor ac = alpha.defined() ? alpha.contiguous() : Tensor();
  auto s = front::storage_of(xc).rms_norm(xc.layout(), ac.defined() ? ac.storage().get() : nullptr,
                                          ac.defined() ? &ac.layout() : nullptr, eps);
  return front::wrap(std::move(s), x.shape(), x.dtype(), x.device());
}

std::pair<Tensor, Tensor> nn::add_rms_norm(const Tensor& x, const Tensor& r, const Tensor& alpha, float eps) {
  const char* op = "add_rms_norm";
  check_float_input(op, x);
  check_companion(op, x, r, "residual");
  if (r.shape() != x.shape()) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("input {} residual {}: shapes differ", describe(x), describe(r)));
  }
  check_eps(op, eps);
  if (alpha.defined()) check_norm_param(op, x, alpha, "alpha");
  Tensor xc = x.contiguous(), rc = r.contiguous();
  Tensor ac = alpha.defined() ? alpha.contiguous() : Tensor();
  auto [sum, norm] = front::storage_of(xc).add_rms_norm(xc.layout(), front::storage_of(rc), rc.layout(),
                                                        ac.defined() ? ac.storage().get() : nullptr,
                                                        ac.defined() ? &ac.layout() : nullptr, eps);
  return {front::wrap(std::move(sum), x.shape(), x.dtype(), x.device()),
          front::wrap(std::move(norm), x.shape(), x.dtype(), x.device())};
}

Tensor nn::swiglu(const Tensor& gate, const Tensor& up) {
  const char* op = "swiglu";
  front::check_defined(op, gate, "gate");
  front::check_dtype_in(op, gate, kFloatDTypes, "gate");
  check_companion(op, gate, up, "up");
  if (up.shape() != gate.shape()) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("gate {} up {}: shapes differ", describe(gate), describe(up)));
  }
  if (gate.elem_count() == 0) return Tensor::empty(gate.shape(), gate.dtype(), gate.device());
  auto s = front::storage_of(gate).swiglu(gate.layout(), front::storage_of(up), up.layout());
  return front::wrap(std::move(s), gate.shape(), gate.dtype(), gate.device());
}

Tensor nn::layer_norm(const Tensor& x, const Tensor& alpha, const Tensor& beta, float eps) {
  const char* op = "layer_norm";
  check_float_input(op, x);
  check_eps(op, eps);
  if (alpha.defined()) check_norm_param(op, x, alpha, "alpha");
  if (beta.defined()) check_norm_param(op, x, beta, "beta");
  Tensor xc = x.contiguous();
  Tensor ac = alpha.defined() ? alpha.contiguous() : Tensor();
  Tensor bc = beta.defined() ? beta.contiguous() : Tensor();
  auto s = front::storage_of(xc).layer_norm(
      xc.layout(), ac.defined() ? ac.storage().get() : nullptr, ac.defined() ? &ac.layout() : nullptr,
      bc.defined() ? bc.storage().get() : nullptr, bc.defined() ? &bc.layout() : nullptr, eps);
  return front::wrap(std::move(s), x.shape(), x.dtype(), x.device());
}

Tensor nn::rope(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  return rope_any(RopeKind::HalfSplit, "rope", x, cos, sin);
}

Tensor nn::rope_i(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  return rope_any(RopeKind::Interleaved, "rope_i", x, cos, sin);
}

Tensor nn::rope_thd(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  return rope_any(RopeKind::Thd, "rope_thd", x, cos, sin);
}

}  // namespace wick
