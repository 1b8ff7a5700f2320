#pragma once
// One training step, the one every caller runs: orrery.train's loop, `orrery bench train` and
// whatever trains a model tomorrow (search trials). In order:
//   1. each micro-batch's loss (1/accumulate of the step's) and its backward, eagerly or
//      replayed from a recording (micro_step_graphs.h);
//   2. data parallel: the gradients averaged over the ranks, reduced in buckets while the last
//      backward runs (gradient_sync.h), and (with host checks) the step's loss and series agreed on;
//   3. one global-norm clip, its scale a tensor (nothing waits for the device);
//   4. the fault check: the step's loss and gradient norm come to the host in one read, and a
//      step where either is not finite is skipped: its gradients are dropped, nothing is written
//      into the weights or the optimizer's state;
//   5. the optimizer step with the schedules' scalars, measuring each group's update when asked.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "orrery/batch.h"
#include "orrery/forward_context.h"
#include "orrery/json.h"
#include "orrery/optimizer.h"
#include "orrery/precision.h"

namespace orrery {
class Model;
class ProcessGroup;
class GradientSync;
class MicroStepGraphs;

struct TrainStepOptions {
  int64_t accumulate = 1;  // micro-batches per step (per rank)
  double clip = 1.0;       // global gradient-norm clip; 0 = off
  Precision precision = Precision::fp32;
  bool graph = false;      // record each batch shape's forward and backward once, replay it
  // Step 4 above. Off, nothing in the step waits for the device: the loss and the norm stay
  // tensors (StepOutcome::loss_tensor), and a non-finite step is applied. Only for a caller that
  // checks on its own, or measures what the read costs (`orrery bench train --host-checks off`).
  bool host_checks = true;
  StepWeights step_weights = {};  // the loss's weights over each target patch's steps (forward_context.h)
};

struct StepOutcome {
  // With host checks: the mean loss over the step's micro-batches (and ranks), the gradient norm
  // before clipping, and what was not finite ("loss" or "gradient"; null = the step was applied).
  double loss = 0, grad_norm = 0;
  const char* fault = nullptr;
  int64_t series = 0;      // series (variates) trained on in the step: over every rank with host
                           // checks, this rank's without
  at::Tensor loss_tensor;  // the loss on the device, a 0-d float64 tensor (float32 on MPS): this
                           // rank's mean
  Json update_rms, param_rms;  // when measured: per optimizer group, the RMS of this step's
                               // update and of the weights after it
};

class TrainStep {
 public:
  // `world`: the ranks training together (null = this process alone); u-muP's gradient scales
  // see the global batch, accumulate x world micro-batches.
  TrainStep(Model& model, Optimizer& optimizer, const TrainStepOptions& options, ProcessGroup* world = nullptr);
  ~TrainStep();
  TrainStep(const TrainStep&) = delete;
  TrainStep& operator=(const TrainStep&) = delete;

  // One step on this rank's micro-batches, `keep[j]` the patch mask of micro-batch j (undefined:
  // none). `measure`: fill update_rms and param_rms (a copy of the weights before the update).
  StepOutcome run(const std::vector<Batch>& micro, const std::vector<at::Tensor>& keep, const StepScalars& scalars,
                  bool measure = false);

  // The optimizer's groups, or one "all" group of every parameter when it has none.
  const std::vector<ParamGroupView>& groups() const { return groups_; }
  // Gradient buckets reduced a step (data parallel), 0 alone.
  int64_t buckets() const;

 private:
  void drop_gradients();

  Model& model_;
  Optimizer& optimizer_;
  TrainStepOptions options_;
  ProcessGroup* world_;
  ForwardContext ctx_;
  std::vector<ParamGroupView> groups_;
  std::unique_ptr<MicroStepGraphs> graphs_;
  std::unique_ptr<GradientSync> sync_;
};

}  // namespace orrery
