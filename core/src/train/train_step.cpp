#include "orrery/host/train_step.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "orrery/error.h"
#include "orrery/host/data_parallel_step.h"
#include "orrery/host/gradient_sync.h"
#include "orrery/host/micro_step_graphs.h"
#include "orrery/host/model.h"
#include "orrery/host/process_group.h"

namespace orrery {

namespace {

using Snapshot = std::vector<std::vector<at::Tensor>>;

// Copies of every group's parameters, taken before an update that is measured.
Snapshot snapshot(const std::vector<ParamGroupView>& groups) {
  Snapshot out;
  for (const auto& g : groups) {
    out.emplace_back();
    for (const auto& t : g.tensors) out.back().push_back(t.detach().clone());
  }
  return out;
}

// Each group's update RMS (against `before`) and weight RMS, in one transfer from the device.
void measure_groups(StepOutcome& out, const std::vector<ParamGroupView>& groups, const Snapshot& before) {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> sums;  // per group: sum of squared updates, sum of squared weights
  std::vector<double> numel;
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<at::Tensor> du, w;
    int64_t n = 0;
    for (size_t i = 0; i < groups[g].tensors.size(); ++i) {
      const at::Tensor t = groups[g].tensors[i].detach();
      du.push_back((t - before[g][i]).to(at::kDouble).square().sum());
      w.push_back(t.to(at::kDouble).square().sum());
      n += t.numel();
    }
    if (du.empty()) du.push_back(at::zeros({}, at::kDouble)), w.push_back(at::zeros({}, at::kDouble));
    sums.push_back(at::stack(du).sum().cpu());
    sums.push_back(at::stack(w).sum().cpu());
    numel.push_back(static_cast<double>(std::max<int64_t>(n, 1)));
  }
  const at::Tensor all = at::stack(sums);
  const auto a = all.accessor<double, 1>();
  out.update_rms = Json::object(), out.param_rms = Json::object();
  for (size_t g = 0; g < groups.size(); ++g) {
    out.update_rms[groups[g].label] = std::sqrt(a[2 * g] / numel[g]);
    out.param_rms[groups[g].label] = std::sqrt(a[2 * g + 1] / numel[g]);
  }
}

// The global L2 norm of the gradients before clipping, as a tensor; with max_norm > 0 they are
// scaled by min(1, max_norm / (norm + 1e-6)) as torch.nn.utils.clip_grad_norm_ does, the scale a
// tensor too, so nothing waits for the device.
at::Tensor clip_global_norm(std::vector<Param>& params, double max_norm, const at::Device& device) {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> grads;
  for (auto& p : params)
    if (p.tensor.grad().defined()) grads.push_back(p.tensor.grad());
  if (grads.empty()) return at::zeros({}, at::TensorOptions().dtype(at::kFloat).device(device));
  const at::Tensor norm = at::stack(at::_foreach_norm(grads, 2)).norm();
  if (max_norm > 0) at::_foreach_mul_(grads, (max_norm / (norm + 1e-6)).clamp_max(1.0));
  return norm;
}

}  // namespace

TrainStep::TrainStep(Model& model, Optimizer& optimizer, const TrainStepOptions& options, ProcessGroup* world)
    : model_(model), optimizer_(optimizer), options_(options), world_(world) {
  if (options.accumulate < 1) throw Error("a training step needs at least one micro-batch (accumulate >= 1)");
  // u-muP's batch-dependent gradient scales see the global batch (dd-unit-scaling).
  ctx_.batch_multiplier = options.accumulate * (world ? world->size() : 1);
  ctx_.precision = options.precision;
  ctx_.step_weights = options.step_weights;
  if (options.graph) graphs_ = std::make_unique<MicroStepGraphs>(model, ctx_, options.accumulate);
  if (world) {
    std::vector<at::Tensor> tensors;
    for (const auto& p : model.params()) tensors.push_back(p.tensor);
    // A recorded backward must not launch collectives: with a graph every bucket waits for finish().
    sync_ = std::make_unique<GradientSync>(*world, tensors, !options.graph);
  }
  groups_ = optimizer.groups();
  if (groups_.empty()) {
    groups_.push_back({"all", {}, optimizer.base_lr()});
    for (const auto& p : model.params()) groups_.back().tensors.push_back(p.tensor);
  }
}

TrainStep::~TrainStep() = default;

int64_t TrainStep::buckets() const { return sync_ ? sync_->buckets() : 0; }

// Eagerly the gradients are released; a recording holds them, so they are zeroed in place.
void TrainStep::drop_gradients() {
  if (graphs_) return MicroStepGraphs::zero_grads(model_.params());
  for (auto& p : model_.params()) p.tensor.mutable_grad().reset();
}

StepOutcome TrainStep::run(const std::vector<Batch>& micro, const std::vector<at::Tensor>& keep,
                           const StepScalars& scalars, bool measure) {
  const auto A = static_cast<size_t>(options_.accumulate);
  if (micro.size() != A || keep.size() != A)
    throw Error("a training step takes " + std::to_string(A) + " micro-batches and as many masks, got " +
                std::to_string(micro.size()) + " and " + std::to_string(keep.size()));
  StepOutcome out;
  // The loss summed in float64, so A micro-batches add up as A ranks' losses average (MPS has no
  // float64: float32 there).
  const at::ScalarType sum_type = model_.device().is_mps() ? at::kFloat : at::kDouble;
  drop_gradients();
  for (size_t j = 0; j < A; ++j) {
    const Batch& b = micro[j];
    if (sync_ && j + 1 == A) sync_->arm();  // the last backward starts the reductions
    // A recording has run the backward already (its loss is overwritten by the next replay).
    at::Tensor loss = graphs_ ? graphs_->run(b, keep[j]) : model_.loss(b, keep[j], ctx_) / static_cast<double>(A);
    if (!graphs_) loss.backward();
    // A copy: a recording's loss is overwritten by the next replay.
    const at::Tensor part = loss.detach().to(sum_type, /*non_blocking=*/false, /*copy=*/true);
    out.loss_tensor = j == 0 ? part : out.loss_tensor + part;
    out.series += b.values.size(0) * b.values.size(1);
  }
  if (sync_) sync_->finish();
  const at::Tensor norm = clip_global_norm(model_.params(), options_.clip, model_.device());
  if (options_.host_checks) {
    const at::Tensor host = at::stack({out.loss_tensor, norm.to(sum_type)}).to(at::kCPU, at::kDouble);
    const StepEnd end = agree_step_end(world_, host[0].item<double>(), out.series, !std::isfinite(host[0].item<double>()));
    out.loss = end.loss, out.series = end.series, out.grad_norm = host[1].item<double>();
    if (end.loss_fault) out.fault = "loss";
    else if (!std::isfinite(out.grad_norm)) out.fault = "gradient";
    if (out.fault) {
      drop_gradients();
      return out;
    }
  }
  const Snapshot before = measure ? snapshot(groups_) : Snapshot{};
  optimizer_.step(scalars);
  if (measure) measure_groups(out, groups_, before);
  return out;
}

}  // namespace orrery
