#pragma once
// How a run reports its progress: the logging window's mean loss and throughput, a "train" event
// every log_every steps and at the last (trainer.h), and a progress line for each.
#include <cstdint>
#include <string>
#include <vector>

#include "orrery/host/batch_queue.h"
#include "orrery/host/train_step.h"
#include "orrery/host/trainer.h"

namespace orrery {
class MetricsBus;

class TrainReport {
 public:
  // `elapsed_before`: the training seconds of a resumed run's earlier processes.
  TrainReport(const TrainConfig& cfg, MetricsBus& bus, TrainState& state, const std::vector<ParamGroupView>& groups,
              double elapsed_before);

  // Whether the step that makes `done` steps logs (and so has its update measured).
  bool due(int64_t done) const { return done % cfg_.log_every == 0 || done == cfg_.steps; }
  // A step applied (state.step steps done): into the window; when due, the event and the line.
  void applied(const StepOutcome& s, double lr_factor, double now, const BatchQueueStats& data);
  // Seconds of the window spent on other work (validation, snapshots): not training throughput.
  void pause(double seconds) { window_paused_ += seconds; }
  // Every group's learning rate at this step, "2.00e-02" or "2.00e-02/3.00e-03".
  std::string lr_text(double lr_factor) const;

 private:
  const TrainConfig& cfg_;
  MetricsBus& bus_;
  TrainState& st_;
  const std::vector<ParamGroupView>& groups_;
  const double elapsed_before_;
  const int64_t first_step_;
  double window_start_, window_paused_ = 0;
  BatchQueueStats data_before_;
};

}  // namespace orrery
