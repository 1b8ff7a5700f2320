#include "orrery/host/data_parallel_step.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "orrery/error.h"
#include "orrery/host/process_group.h"

namespace orrery {

StepStart agree_step_start(ProcessGroup* world, int64_t step, const std::vector<Batch>& micro, bool stop,
                           double clock) {
  StepStart s;
  if (!world) {
    s.stop = stop, s.clock = clock;
    for (const auto& b : micro) s.variates.push_back(b.values.size(1));
    return s;
  }
  world->note_progress(step + 1);
  const int64_t W = world->size(), A = static_cast<int64_t>(micro.size()), r = world->rank();
  at::Tensor v = at::zeros({W * A + 2}, at::kDouble);  // variates..., stops, rank 0's clock
  auto a = v.accessor<double, 1>();
  for (int64_t j = 0; j < A; ++j) a[j * W + r] = static_cast<double>(micro[static_cast<size_t>(j)].values.size(1));
  a[W * A] = stop ? 1 : 0;
  if (r == 0) a[W * A + 1] = clock;
  world->all_reduce_sum({v});
  for (int64_t i = 0; i < W * A; ++i) s.variates.push_back(static_cast<int64_t>(a[i]));
  s.stop = a[W * A] > 0, s.clock = a[W * A + 1];
  return s;
}

StepEnd agree_step_end(ProcessGroup* world, double loss, int64_t series, bool loss_fault) {
  if (!world) return {loss, series, loss_fault};
  at::Tensor v = at::tensor({loss_fault ? 0.0 : loss, static_cast<double>(series), loss_fault ? 1.0 : 0.0}, at::kDouble);
  world->all_reduce_sum({v});
  auto a = v.accessor<double, 1>();
  return {a[0] / world->size(), static_cast<int64_t>(a[1]), a[2] > 0};
}

void start_together(ProcessGroup* world, int64_t step, const std::vector<Param>& params) {
  if (!world) return;
  at::Tensor v = at::tensor({world->rank() == 0 ? static_cast<double>(step) : 0.0, static_cast<double>(step)}, at::kDouble);
  world->all_reduce_sum({v});
  const double lead = v[0].item<double>(), all = v[1].item<double>();
  if (all != lead * world->size())
    throw Error("the ranks stand at different steps (this is rank " + std::to_string(world->rank()) + ", at step " +
                std::to_string(step) + "; rank 0 is at step " + std::to_string(static_cast<int64_t>(lead)) +
                "): every rank must resume from the same checkpoint, so keep the run folder on a file system "
                "every machine sees");
  std::vector<at::Tensor> weights;
  for (const auto& p : params) weights.push_back(p.tensor.detach());
  at::NoGradGuard no_grad;
  world->broadcast(weights, 0);
}

}  // namespace orrery
