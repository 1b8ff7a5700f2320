#pragma once
#include <atomic>
#include <cstdint>
#include <string>

#include "orrery/json.h"
#include "orrery/schedule.h"

namespace orrery {
class Model;
class DataSource;
class Optimizer;
class MetricsBus;

struct TrainConfig {
  int64_t steps = 200;
  int64_t batch_size = 16;
  int64_t context_length = 512;
  double clip = 1.0;          // global gradient-norm clip; 0 = off
  double max_seconds = 0;     // time budget; 0 = none
  Schedule schedule;
  MomentumSchedule momentum;            // off unless given
  WeightDecaySchedule weight_decay_schedule;
  int64_t accumulate = 1;     // micro-batches of batch_size per optimizer step
  bool cpm = true;            // contiguous patch masking
  int64_t cpm_max_span = 16;  // c_max, in patches
  double cpm_max_rate = 0.4;  // p_max
  int64_t log_every = 25;     // progress line and "train" event every N steps
  uint64_t seed = 0;
  bool quiet = false;
  static TrainConfig from_json(const Json& j);  // unknown keys are errors
  Json to_json() const;
};

struct TrainResult {
  int64_t steps = 0;
  double first_loss = 0, final_loss = 0;  // means over the first/last logging windows
  double seconds = 0;
  bool interrupted = false;
  Json to_json() const;
};

// Trains `model` in place. Publishes {"event":"train", step, loss, lr, grad_norm,
// series_per_s, elapsed_s, eta_s} every log_every steps and {"event":"end", ...} at the end.
TrainResult train(Model& model, DataSource& data, Optimizer& opt, const TrainConfig& cfg,
                  MetricsBus& bus);

// Set from a signal handler (Ctrl-C) or a UI; long calls poll it and throw orrery::Interrupted.
extern std::atomic<bool> interrupt_requested;
void check_interrupt();

}  // namespace orrery
