#pragma once
// A sharded optimizer (ZeRO stage 1): each rank of a data-parallel run keeps optimizer state for
// its share of the parameters only, so the state's memory per rank falls as 1/world.
//
// Shares are whole parameters (as PyTorch's ZeroRedundancyOptimizer cuts them): NorMuon and
// Muon orthogonalise whole matrices, so a matrix cannot be split, and AdamW's update is
// element-wise, so a whole tensor is as good a unit as a slice. Parameters go, largest first,
// to the rank holding the fewest elements so far (ties: the lowest rank); every rank computes
// the same assignment. A step updates this rank's share from the averaged gradients every rank
// holds (gradient_sync.h), then every rank's updated weights are broadcast from it, so the
// weights stay identical everywhere. The result equals the unsharded optimizer's exactly.
#include <memory>
#include <vector>

#include "orrery/host/routed_optimizer.h"

namespace orrery {
class ProcessGroup;

// The rank that updates each parameter, in `params` order.
std::vector<int> assign_shards(const std::vector<Param>& params, int world);

class ShardedOptimizer final : public Optimizer {
 public:
  ShardedOptimizer(const Registry& registry, const std::vector<OptimizerGroup>& groups, std::vector<Param>& params,
                   const Parametrisation& param, ProcessGroup& world);
  // This rank's share, then every rank's weights from it (a collective every rank calls).
  void step(const StepScalars& s) override;
  double base_lr() const override { return share_->base_lr(); }
  // Every group over every parameter, as the unsharded optimizer lists them.
  std::vector<ParamGroupView> groups() const override { return share_->groups(); }
  // This rank's share of the state.
  NamedTensors state_tensors() const override { return share_->state_tensors(); }
  Json counters() const override { return share_->counters(); }
  void restore_counters(const Json& c) override { share_->restore_counters(c); }
  Json describe() const { return share_->describe(); }
  // The whole state, every rank's share, on rank 0 (empty elsewhere): what a checkpoint saves,
  // the same tensors the unsharded optimizer would. A collective every rank calls.
  NamedTensors gather_state() const;

 private:
  ProcessGroup& world_;
  std::unique_ptr<RoutedOptimizer> share_;
  std::vector<std::vector<at::Tensor>> owned_by_;  // per rank, the parameters it updates
};

}  // namespace orrery
