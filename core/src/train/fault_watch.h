#pragma once
// Steps that go wrong. A skipped step (its loss or gradient not finite, train_step.h) is
// published with a line; max_skipped_steps of them in a row or among the last 2 x
// max_skipped_steps, or one at the run's last step, stop the run as diverged
// (TrainingDiverged, trainer.h); a step loss above spike_factor x the median of the last 64
// (from the 16th step on) is published as a spike.
#include <string>

#include "orrery/host/train_step.h"
#include "orrery/host/trainer.h"

namespace orrery {
class MetricsBus;

class FaultWatch {
 public:
  FaultWatch(const TrainConfig& cfg, MetricsBus& bus, TrainState& state) : cfg_(cfg), bus_(bus), st_(state) {}

  // After the step that made state.step steps; `lrs` is its learning rates as text. Throws
  // TrainingDiverged when the run must stop.
  void check(const StepOutcome& s, const std::string& lrs);

 private:
  const TrainConfig& cfg_;
  MetricsBus& bus_;
  TrainState& st_;
};

}  // namespace orrery
