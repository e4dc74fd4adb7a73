// The splits of tensor parallelism (tensor_parallel.h).
#include "model/tensor_parallel.h"

#include <fmt/format.h>

#include <cstring>

#include "wick/error.h"

namespace wick::model {

namespace {

constexpr const char* kOp = "tensor_parallel";

[[noreturn]] void bad(const std::string& msg) { throw_error(ErrorKind::InvalidArgument, kOp, msg); }

void check_tp(size_t tp) {
  if (tp == 0) bad("tp 0: a split needs at least one rank");
}

}  // namespace

void check_tensor_parallel(const ModelPlan& plan, size_t tp) {
  check_tp(tp);
  const HParams& hp = plan.hp;
  const struct {
    const char* what;
    size_t n;
  } counts[] = {{"head_count", hp.n_head},
                {"head_count_kv", hp.n_head_kv},
                {"feed_forward_length", hp.n_ff},
                {"vocabulary", hp.n_vocab}};
  for (const auto& c : counts) {
    if (c.n % tp != 0) {
      bad(fmt::format("tp {}: {} {} is not a multiple of tp (each rank takes an equal share)", tp, c.what,
                      c.n));
    }
  }
  for (const PlannedTensor& t : plan.tensors) {
    if (t.spec->tp != TpSplit::In) continue;
    const GgmlType type = GgmlType(t.info->type);
    const size_t cols = t.info->shape()[1], part = cols / tp, block = ggml_block_size(type);
    if (part % block != 0) {
      bad(fmt::format("tp {}: tensor '{}' {} {} splits into column slices of {}, not whole blocks of {}", tp,
                      t.info->name, t.info->shape().str(), ggml_type_name(type), part, block));
    }
  }
}

HParams rank_hparams(const HParams& hp, size_t tp) {
  check_tp(tp);
  HParams r = hp;
  r.n_head /= tp;
  r.n_head_kv /= tp;
  r.n_ff /= tp;
  r.n_vocab /= tp;
  return r;
}

std::vector<QTensor> split_matrix(const QTensor& w, TpSplit how, size_t tp, std::string_view name) {
  check_tp(tp);
  if (w.shape().rank() != 2) {
    bad(fmt::format("tensor '{}' {}: a split matrix must be rank 2", name, w.str()));
  }
  const GgmlType type = w.type();
  const size_t rows = w.shape()[0], cols = w.shape()[1];
  if (how == TpSplit::None) return std::vector<QTensor>(tp, w);
  const size_t n = how == TpSplit::Out ? rows : cols;
  if (n % tp != 0) {
    bad(fmt::format("tp {}: tensor '{}' {} has {} {}, not a multiple of tp", tp, name, w.str(), n,
                    how == TpSplit::Out ? "rows" : "columns"));
  }
  const size_t part = n / tp, block = ggml_block_size(type);
  if (how == TpSplit::In && part % block != 0) {
    bad(fmt::format("tp {}: tensor '{}' {} splits into column slices of {}, not whole blocks of {}", tp, name,
                    w.str(), part, block));
  }
  const std::vector<uint8_t> bytes = w.to_host_bytes();
  const size_t row_bytes = ggml_row_size(type, cols);
  std::vector<QTensor> parts;
  for (size_t r = 0; r < tp; ++r) {
    if (how == TpSplit::Out) {
      parts.push_back(QTensor::from_bytes(type, Shape{part, cols}, bytes.data() + r * part * row_bytes,
                                          part * row_bytes, w.device()));
      continue;
    }
    // Column slice [r part, (r+1) part) of each row: whole blocks at a byte offset.
    const size_t slice_bytes = ggml_row_size(type, part), offset = r * slice_bytes;
    std::vector<uint8_t> out(rows * slice_bytes);
    for (size_t i = 0; i < rows; ++i)
      std::memcpy(out.data() + i * slice_bytes, bytes.data() + i * row_bytes + offset, slice_bytes);
    parts.push_back(QTensor::from_bytes(type, Shape{rows, part}, out.data(), out.size(), w.device()));
  }
  return parts;
}

std::vector<Tensor> split_vector(const Tensor& v, TpSplit how, size_t tp, std::string_view name) {
  check_tp(tp);
  if (v.rank() != 1) bad(fmt::format("tensor '{}' {}: a split vector must be rank 1", name, v.str()));
  if (how == TpSplit::None) return std::vector<Tensor>(tp, v);
  if (how == TpSplit::In)
    bad(fmt::format("tensor '{}' {}: a vector has no input features to split", name, v.str()));
  const size_t n = v.dim(0);
  if (n % tp != 0)
    bad(fmt::format("tp {}: tensor '{}' {} has {} elements, not a multiple of tp", tp, name, v.str(), n));
  std::vector<Tensor> parts;
  for (size_t r = 0; r < tp; ++r) parts.push_back(v.narrow(0, r * (n / tp), n / tp).contiguous());
  return parts;
}

}  // namespace wick::model
