#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "orrery/error.h"
#include "orrery/interrupt.h"
#include "orrery/json.h"
#include "orrery/options.h"
#include "orrery/precision.h"
#include "orrery/host/schedule.h"

namespace orrery {
class Model;
class DataSource;
class Optimizer;
class MetricsBus;
class ProcessGroup;

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
  int64_t early_steps = 0;    // the first steps of each target patch weigh early_weight in the
  double early_weight = 1;    // loss (StepWeights); 0 = uniform
  int64_t log_every = 25;     // progress line and "train" event every N steps
  int64_t val_every = 0;        // validation loss every N steps and at the end; 0 = 4 x log_every
  int64_t val_batches = 2;      // fixed held-out batches it averages over; 0 = no validation
  int64_t forecast_every = 0;   // forecast snapshot every N steps and at the end; 0 = val cadence
  int64_t forecast_series = 4;  // series per snapshot, from the first held-out batch; 0 = none
  int64_t sample_tokens = 64;   // text drawn after each validation by a model of token ids; 0 = none
  uint64_t seed = 0;
  int64_t data_workers = 1;   // threads drawing batches ahead of the step (0 = on the step's thread)
  int64_t prefetch = 4;       // batches drawn ahead at most
  int64_t checkpoint_every = 0;     // a checkpoint every N steps; 0 = not by steps
  double checkpoint_minutes = 30;   // and every M minutes of training; 0 = not by time
  int64_t checkpoint_keep = 3;      // the newest K are kept
  std::vector<int64_t> checkpoint_at;  // and checkpoints at these steps, always kept: where
                                       // decays branch off (RunRequest::branch)
  int64_t max_skipped_steps = 10;   // non-finite steps in a row, or among the last 2 x as many,
                                    // that stop the run
  double spike_factor = 4;          // a loss above this x the running median is a spike; 0 = off
  Precision precision = Precision::fp32;  // bf16: forward under autocast, fp32 weights and loss
  bool graph = false;  // record a micro-batch's forward and backward once, replay it (graphed_call.h)
  bool shard_optimizer = false;  // data parallel: optimizer state split over the ranks (zero.h)
  bool quiet = false;
  bool checkpoints() const { return checkpoint_every > 0 || checkpoint_minutes > 0 || !checkpoint_at.empty(); }
  // Every option above: name, type, default, range and what it does. The one list that
  // from_json, orrery.train and the docs test read.
  static const OptionSchema& schema();
  // Checked against schema(): unknown names, wrong types, non-finite or out-of-range values
  // are errors naming the option; `owner` names who asked ("orrery.train").
  static TrainConfig from_json(const Json& j, const std::string& owner = "training");
  Json to_json() const;
};

// Where a run stands after `step` steps: with the weights and the optimizer's state, everything
// continuing it exactly needs. Batch k is drawn with mix_seed(seed, k), so the data's position
// (every worker's) is the step count; the masking generator's state is kept whole; the rest is
// the logging window and the fault counters in progress, so the resumed run logs what the
// uninterrupted one would have.
struct TrainState {
  int64_t step = 0;
  double elapsed_s = 0;  // training time so far: time budgets and time-based schedules go on from it
  int64_t skipped_steps = 0, skipped_in_row = 0;
  std::vector<int64_t> recent_skips;  // the skipped steps among the last 2 x max_skipped_steps
  double window_sum = 0;
  int64_t window_n = 0, window_series = 0;
  bool first_window = true;
  double first_loss = 0, final_loss = 0;
  int64_t last_val = 0, last_forecast = 0;
  double val_loss = std::numeric_limits<double>::quiet_NaN();  // the last validation loss; NaN before one
  double val_bits_per_unit = std::numeric_limits<double>::quiet_NaN();  // the same per unit of the source (bits)
  std::vector<double> recent_losses;  // the last step losses, for spikes
  std::string masking_rng;            // the masking generator's state, hex
  Json to_json() const;
  static TrainState from_json(const Json& j);  // throws orrery::Error on a malformed state
};

// What train() throws when a run diverges: max_skipped_steps non-finite steps in a row or among
// the last 2 x max_skipped_steps, or a run that ends on skipped steps. The weights after step
// `suspect_from` gave the first of those losses, so a checkpoint of that step or later holds
// weights that do (run_training sets such checkpoints aside).
struct TrainingDiverged : Error {
  TrainingDiverged(const std::string& message, int64_t suspect) : Error(message), suspect_from(suspect) {}
  int64_t suspect_from;
};

// How a caller takes part in a run: `resume` continues from a saved state (weights and optimizer
// already loaded); `checkpoint` is called with the state when a checkpoint is due (every
// checkpoint_every steps, every checkpoint_minutes, and when an interrupt stops the run), after
// the step's events are published.
//
// `world`: the processes training this model together (data parallel), null for this one alone.
// Each rank draws its own micro-batches of the step's global batch (world x accumulate x
// batch_size samples: the j-th of rank r is number j * world + r of the step's), the gradients
// are averaged over the ranks (gradient_sync.h) and every rank applies the same update, so the
// weights stay identical; u-muP's gradient scales see the global batch. The run is the same as
// one process with accumulate x world micro-batches, up to the order of float sums. Only the
// caller decides who writes: run_training gives rank 0 the checkpoint hook and the run folder.
struct TrainHooks {
  const TrainState* resume = nullptr;
  std::function<void(const TrainState&)> checkpoint;
  ProcessGroup* world = nullptr;
};

struct TrainResult {
  int64_t steps = 0;
  double first_loss = 0, final_loss = 0;  // means over the first/last logging windows
  double val_loss = std::numeric_limits<double>::quiet_NaN();  // the held-out loss at the end; NaN without
  // The held-out loss in bits per unit of the source (bits per byte for text), when its batches
  // carry units (Batch::units); NaN otherwise.
  double val_bits_per_unit = std::numeric_limits<double>::quiet_NaN();
  int64_t skipped_steps = 0;              // steps not applied: a non-finite loss or gradient
  double seconds = 0;
  bool interrupted = false;
  Json to_json() const;
};

// Trains `model` in place. Publishes (events.h), in this order at a step that has them:
//  {"event":"train", step, loss, lr, grad_norm, series_per_s, data_draw_ms, data_wait_ms,
//   elapsed_s, eta_s, update_rms, param_rms} every log_every steps and at the last step;
//   data_draw_ms is the mean time a worker took to draw a batch and data_wait_ms the mean
//   time the step waited for one (batch_queue.h); lr, update_rms and
//   param_rms map each optimizer group (Optimizer::groups(); one group "all" when it gives
//   none) to its learning rate at this step, the RMS of this step's update,
//   sqrt(sum ||p_after - p_before||^2 / numel), and the RMS of its weights after it;
//  {"event":"val", step, loss, elapsed_s} every val_every steps and at the end, when
//   `validation` is given and val_batches > 0: the mean loss, without gradients or patch
//   masking, over val_batches fixed batches drawn from `validation` once at the start;
//  {"event":"forecast", step, levels, horizon, series: [{name, history, target, quantiles}]}
//   every forecast_every steps and at the end, when `validation` is given and forecast_series
//   > 0: the first forecast_series series of the first held-out batch (variate 0) that have an
//   observation to forecast from, over their last `horizon` = max(P, context_length/4 rounded
//   down to a multiple of P) steps; history holds at most 4 x horizon steps; unobserved values
//   are null;
//  {"event":"sample", step, prompt, text, elapsed_s} after each validation, for a model that
//   predicts its data's own values (a categorical head) on a `validation` source that holds text
//   (DataSource::decode_text), when sample_tokens > 0: the first 16 steps of the first held-out
//   row as the prompt and sample_tokens steps drawn after it (Model::generate, temperature 0.8,
//   top_k 40, a seed fixed by the step), both decoded by the source;
//  {"event":"skip", step, reason ("loss" or "gradient"), skipped_steps, skipped_in_row} for a
//   step whose loss or gradient norm is not finite: its update is not applied (the batches are
//   still drawn, so the data goes on as if it had been); max_skipped_steps of them in a row, or
//   among the last 2 x max_skipped_steps steps, or any at the last step, end the run with
//   TrainingDiverged, the weights those of the last applied step; no checkpoint is written
//   while the newest step was skipped (its weights just gave a non-finite loss);
//  {"event":"spike", step, loss, median} when a step's loss exceeds spike_factor x the median of
//   the last 64 step losses (from the 16th step on);
//  {"event":"checkpoint", step} just before hooks.checkpoint is called;
//  {"event":"end", steps, first_loss, final_loss, skipped_steps, seconds, interrupted} last.
// Train events also carry skipped_steps, the run's total so far.
// "The end" is the last step run, also when max_seconds or `interrupt` cut the run short (an
// interrupt ends the run after the step in progress; the request stays set for the caller).
// Validation and snapshots draw nothing from the training data or its random stream, so the
// training is the same with or without them.
TrainResult train(Model& model, DataSource& data, Optimizer& opt, const TrainConfig& cfg,
                  MetricsBus& bus, DataSource* validation = nullptr,
                  const Interrupt* interrupt = nullptr, const TrainHooks& hooks = {});

}  // namespace orrery
