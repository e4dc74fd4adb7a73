// The Communicator front end (wick/comm.h): validation shared by every
// implementation, and the in-process host communicator.
#include "wick/comm.h"

#include <fmt/format.h>

#include <utility>

#include "base/dispatch.h"
#include "tensor/checks.h"

namespace wick {

using front::describe;

namespace {

constexpr const char* kOp = "comm";

// Collectives through the host: every rank's tensor is read back, combined in rank
// order, and written to each rank's device.
class HostCommunicator final : public Communicator {
 public:
  explicit HostCommunicator(std::vector<Device> devices) : Communicator(std::move(devices)) {}
  std::string name() const override { return "host"; }

 protected:
  std::vector<Tensor> do_all_reduce_sum(std::span<const Tensor> per_rank) override {
    const DType dt = per_rank[0].dtype();
    const Shape shape = per_rank[0].shape();
    // f16 / bf16 / f32 add in f32 (each value converts exactly), f64 in f64; the sum
    // rounds once to the dtype.
    const auto reduce = [&]<class Acc>() {
      constexpr DType acc = dtype_of<Acc>;
      std::vector<Acc> sum = per_rank[0].to_dtype(acc).to_vector<Acc>();
      for (size_t r = 1; r < per_rank.size(); ++r) {
        const std::vector<Acc> v = per_rank[r].to_dtype(acc).to_vector<Acc>();
        for (size_t i = 0; i < sum.size(); ++i) sum[i] += v[i];
      }
      std::vector<Tensor> out;
      for (size_t r = 0; r < per_rank.size(); ++r)
        out.push_back(Tensor::from_vector(sum, shape, device(r)).to_dtype(dt));
      return out;
    };
    return dt == DType::F64 ? reduce.operator()<double>() : reduce.operator()<float>();
  }

  std::vector<Tensor> do_all_gather(std::span<const Tensor> per_rank, size_t dim) override {
    std::vector<Tensor> host;
    for (const Tensor& t : per_rank) host.push_back(t.to_device(Device::cpu()));
    const Tensor all = Tensor::cat(host, int64_t(dim));
    std::vector<Tensor> out;
    for (size_t r = 0; r < per_rank.size(); ++r)
      out.push_back(device(r) == Device::cpu() ? all.contiguous() : all.to_device(device(r)));
    return out;
  }
};

}  // namespace

Communicator::Communicator(std::vector<Device> devices) : devices_(std::move(devices)) {
  if (devices_.empty())
    throw_error(ErrorKind::InvalidArgument, kOp, "a device group needs at least one rank");
}

Communicator::~Communicator() = default;

std::shared_ptr<Communicator> Communicator::host(std::vector<Device> devices) {
  return std::make_shared<HostCommunicator>(std::move(devices));
}

Device Communicator::device(size_t rank) const {
  if (rank >= devices_.size()) {
    throw_error(ErrorKind::IndexOutOfRange, kOp,
                fmt::format("rank {} is outside the group of {} ranks", rank, devices_.size()));
  }
  return devices_[rank];
}

void Communicator::check(const char* op, std::span<const Tensor> per_rank) const {
  if (per_rank.size() != size()) {
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("{} tensors for a group of {} ranks (one per rank)", per_rank.size(), size()));
  }
  for (size_t r = 0; r < per_rank.size(); ++r) {
    const Tensor& t = per_rank[r];
    if (!t.defined())
      throw_error(ErrorKind::InvalidArgument, op, fmt::format("rank {}: undefined tensor", r));
    if (t.device() != devices_[r]) {
      throw_error(ErrorKind::DeviceMismatch, op,
                  fmt::format("rank {}: tensor {} is on {}, the rank's device is {}", r, describe(t),
                              t.device().str(), devices_[r].str()));
    }
    if (r == 0) continue;
    const Tensor& t0 = per_rank[0];
    if (t.dtype() != t0.dtype()) {
      throw_error(ErrorKind::DTypeMismatch, op,
                  fmt::format("rank {} {} differs in dtype from rank 0 {}", r, describe(t), describe(t0)));
    }
    if (t.shape() != t0.shape()) {
      throw_error(ErrorKind::ShapeMismatch, op,
                  fmt::format("rank {} {} differs in shape from rank 0 {}", r, describe(t), describe(t0)));
    }
  }
}

std::vector<Tensor> Communicator::all_reduce_sum(std::span<const Tensor> per_rank) {
  const char* op = "all_reduce_sum";
  check(op, per_rank);
  front::check_dtype_in(op, per_rank[0], kFloatDTypes, "rank tensors");
  return do_all_reduce_sum(per_rank);
}

std::vector<Tensor> Communicator::all_gather(std::span<const Tensor> per_rank, size_t dim) {
  const char* op = "all_gather";
  check(op, per_rank);
  if (dim >= per_rank[0].rank()) {
    throw_error(ErrorKind::DimOutOfRange, op,
                fmt::format("dim {} is out of range for rank tensors {}", dim, describe(per_rank[0])));
  }
  return do_all_gather(per_rank, dim);
}

}  // namespace wick
