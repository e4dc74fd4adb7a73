// Collectives over a device group: the ranks 0..size()-1 of a communicator, each on
// a device, exchange tensors (the model runner's tensor parallelism is built on them).
//
//   auto comm = wick::Communicator::host({wick::Device::cpu(), wick::Device::cpu()});
//   std::vector<wick::Tensor> parts = {a0, a1};        // one tensor per rank
//   std::vector<wick::Tensor> sums = comm->all_reduce_sum(parts);  // sums[r] on device(r)
//
// One caller drives every rank of the group (as one process drives N GPUs with
// ncclCommInitAll): a collective takes one tensor per rank, in rank order, and returns
// one per rank. Every rank's tensor must have the same shape and dtype and live on its
// rank's device; otherwise the collective throws wick::Error naming itself, the ranks,
// shapes and dtypes, before anything moves.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "wick/device.h"
#include "wick/tensor.h"

namespace wick {

class Communicator {
 public:
  virtual ~Communicator();

  // An in-process communicator: rank r on devices[r] (devices may repeat; a CPU-only
  // group is N ranks on Device::cpu()). Collectives go through the host and add in f32
  // in rank order (((x0 + x1) + x2) + ...), so results are deterministic and the same on
  // every rank. Throws InvalidArgument for an empty group.
  static std::shared_ptr<Communicator> host(std::vector<Device> devices);

  // Ranks in the group.
  size_t size() const { return devices_.size(); }
  // The device of `rank`; throws IndexOutOfRange naming the rank and the group size.
  Device device(size_t rank) const;
  // "host", "nccl": what carries the collectives.
  virtual std::string name() const = 0;

  // Elementwise sum over ranks of per_rank[0..size()), floating dtypes; result r on device(r).
  std::vector<Tensor> all_reduce_sum(std::span<const Tensor> per_rank);
  // The rank tensors concatenated along `dim` in rank order; result r on device(r).
  std::vector<Tensor> all_gather(std::span<const Tensor> per_rank, size_t dim);

 protected:
  explicit Communicator(std::vector<Device> devices);
  // Called after validation: per_rank has size() defined tensors of one shape and dtype,
  // tensor r on device(r).
  virtual std::vector<Tensor> do_all_reduce_sum(std::span<const Tensor> per_rank) = 0;
  virtual std::vector<Tensor> do_all_gather(std::span<const Tensor> per_rank, size_t dim) = 0;

 private:
  void check(const char* op, std::span<const Tensor> per_rank) const;
  std::vector<Device> devices_;
};

}  // namespace wick
