// The training options (their one schema), the state a checkpoint keeps, and the result, as JSON.
#include "orrery/host/trainer.h"

#include <algorithm>
#include <cmath>

#include "orrery/error.h"

namespace orrery {

const OptionSchema& TrainConfig::schema() {
  static const OptionSchema s =
      OptionSchema{}
          .integer("steps", 200, "optimizer steps", 1, 1e12)
          .integer("batch_size", 16, "series per micro-batch", 1, 1 << 24)
          .integer("accumulate", 1, "micro-batches per optimizer step, each carrying 1/accumulate of the loss", 1, 1 << 20)
          .integer("context_length", 512, "steps per training series: a multiple of the patch size, at least two patches", 1, 1 << 30)
          .number("clip", 1.0, "global gradient-norm clip; 0 = off", 0.0)
          .number("max_seconds", 0.0, "time budget; 0 = none (the schedules follow steps or time, whichever is further)", 0.0)
          .table("schedule", "learning-rate schedule {kind, warmup, decay, decay_shape, min_lr}")
          .table("momentum", "momentum warmup {from, to, warmup, cooldown, final}; off unless given")
          .string("weight_decay_schedule", "constant", "weight-decay multiplier over the run",
                  WeightDecaySchedule::kind_names())
          .boolean("cpm", true, "contiguous patch masking")
          .integer("cpm_max_span", 16, "longest masked span, in patches", 1)
          .number("cpm_max_rate", 0.4, "highest masking rate", 0.0, 1.0)
          .integer("early_steps", 0, "the first N steps of every target patch weigh early_weight in the training loss "
                   "(short horizons read only these); at most the patch size; 0 = uniform", 0, 1 << 20)
          .number("early_weight", 1.0, "the weight of those steps against 1 for the rest (a weighted mean)", 0.0, 1e6)
          .integer("log_every", 25, "progress line and train event every N steps", 1)
          .integer("val_every", 0, "validation every N steps and at the end; 0 = 4 x log_every", 0)
          .integer("val_batches", 2, "held-out batches per validation; 0 = none", 0)
          .integer("forecast_every", 0, "forecast snapshot every N steps and at the end; 0 = with validation", 0)
          .integer("forecast_series", 4, "held-out series per forecast snapshot; 0 = none", 0)
          .integer("sample_tokens", 64, "text drawn after each validation by a model of token ids on a source with "
                   "text (a \"sample\" event); 0 = none", 0, 1 << 16)
          .integer("seed", 0, "the run seed: its data, validation, batch and masking streams derive from it by name", 0)
          .integer("data_workers", 1, "threads drawing batches ahead of the step; 0 = on the step's thread (the batches are the same)", 0, 64)
          .integer("prefetch", 4, "batches drawn ahead at most", 1, 1024)
          .integer("checkpoint_every", 0, "a checkpoint (weights, optimizer, data and random state) every N steps; 0 = not by steps", 0)
          .number("checkpoint_minutes", 30.0, "and every M minutes of training (and on Ctrl-C); 0 = not by time; both 0 = no checkpoints", 0.0)
          .integer("checkpoint_keep", 3, "checkpoints kept, the newest", 1, 1 << 20)
          .number_list("checkpoint_at", {}, "checkpoints also at these steps, kept whatever checkpoint_keep says: "
                                            "where decays branch off (a run's `branch`)")
          .integer("max_skipped_steps", 10, "steps with a non-finite loss or gradient (each skipped) that stop the run as "
                                             "diverged: this many in a row, or among the last twice as many steps", 1)
          .number("spike_factor", 4.0, "a step loss above this x the running median is reported as a spike; 0 = off", 0.0)
          .string("precision", "fp32", "fp32, or bf16: the forward under autocast with float32 weights, optimizer state and loss",
                  {"fp32", "bf16"})
          .boolean("graph", false, "record one micro-batch's forward and backward once and replay it every step "
                   "(a CUDA graph on a GPU: no launch cost); the optimizer step stays eager")
          .boolean("shard_optimizer", false, "data parallel: each rank keeps optimizer state for its share of the "
                   "parameters only (ZeRO-1), whole tensors each; the same result as unsharded")
          .boolean("quiet", false, "no progress lines");
  return s;
}

TrainConfig TrainConfig::from_json(const Json& j, const std::string& owner) {
  const Json o = schema().validate(j, owner);
  TrainConfig c;
  c.steps = o["steps"], c.batch_size = o["batch_size"], c.accumulate = o["accumulate"];
  c.context_length = o["context_length"], c.clip = o["clip"], c.max_seconds = o["max_seconds"];
  c.schedule = Schedule::from_json(o["schedule"]);
  c.momentum = MomentumSchedule::from_json(o["momentum"]);
  c.weight_decay_schedule = WeightDecaySchedule::from_json(o["weight_decay_schedule"]);
  c.cpm = o["cpm"], c.cpm_max_span = o["cpm_max_span"], c.cpm_max_rate = o["cpm_max_rate"];
  c.early_steps = o["early_steps"], c.early_weight = o["early_weight"];
  c.log_every = o["log_every"], c.val_every = o["val_every"], c.val_batches = o["val_batches"];
  c.forecast_every = o["forecast_every"], c.forecast_series = o["forecast_series"];
  c.sample_tokens = o["sample_tokens"];
  c.seed = o["seed"], c.quiet = o["quiet"];
  c.data_workers = o["data_workers"], c.prefetch = o["prefetch"];
  c.checkpoint_every = o["checkpoint_every"], c.checkpoint_minutes = o["checkpoint_minutes"];
  c.checkpoint_keep = o["checkpoint_keep"], c.max_skipped_steps = o["max_skipped_steps"];
  for (const Json& v : o["checkpoint_at"]) {
    const double step = v.get<double>();
    if (!(step >= 1) || step != std::floor(step) || step > 1e15)
      throw Error(owner + " option 'checkpoint_at': " + json_text(v) + " is not a step (a whole number from 1)");
    if (step > static_cast<double>(c.steps))
      throw Error(owner + " option 'checkpoint_at': step " + json_text(v) + " is beyond the run's " +
                  std::to_string(c.steps) + " steps, so it would never be written");
    c.checkpoint_at.push_back(static_cast<int64_t>(step));
  }
  std::sort(c.checkpoint_at.begin(), c.checkpoint_at.end());
  c.spike_factor = o["spike_factor"];
  c.precision = parse_precision(o["precision"], owner + " option 'precision'");
  c.graph = o["graph"];
  c.shard_optimizer = o["shard_optimizer"];
  return c;
}

Json TrainConfig::to_json() const {
  return {{"steps", steps}, {"batch_size", batch_size}, {"context_length", context_length},
          {"accumulate", accumulate}, {"clip", clip}, {"max_seconds", max_seconds},
          {"schedule", schedule.to_json()}, {"momentum", momentum.to_json()},
          {"weight_decay_schedule", weight_decay_schedule.to_json()},
          {"cpm", cpm}, {"cpm_max_span", cpm_max_span}, {"cpm_max_rate", cpm_max_rate},
          {"early_steps", early_steps}, {"early_weight", early_weight},
          {"log_every", log_every}, {"val_every", val_every}, {"val_batches", val_batches},
          {"forecast_every", forecast_every}, {"forecast_series", forecast_series},
          {"sample_tokens", sample_tokens},
          {"seed", seed}, {"data_workers", data_workers}, {"prefetch", prefetch},
          {"checkpoint_every", checkpoint_every}, {"checkpoint_minutes", checkpoint_minutes},
          {"checkpoint_keep", checkpoint_keep}, {"checkpoint_at", checkpoint_at}, {"max_skipped_steps", max_skipped_steps},
          {"spike_factor", spike_factor}, {"precision", precision_name(precision)}, {"graph", graph},
          {"shard_optimizer", shard_optimizer}, {"quiet", quiet}};
}

Json TrainState::to_json() const {
  Json j = {{"step", step}, {"elapsed_s", elapsed_s}, {"skipped_steps", skipped_steps},
          {"skipped_in_row", skipped_in_row}, {"recent_skips", recent_skips}, {"window_sum", window_sum}, {"window_n", window_n},
          {"window_series", window_series}, {"first_window", first_window}, {"first_loss", first_loss},
          {"final_loss", final_loss}, {"last_val", last_val}, {"last_forecast", last_forecast},
          {"recent_losses", recent_losses}, {"masking_rng", masking_rng}};
  if (std::isfinite(val_loss)) j["val_loss"] = val_loss;
  if (std::isfinite(val_bits_per_unit)) j["val_bits_per_unit"] = val_bits_per_unit;
  return j;
}

TrainState TrainState::from_json(const Json& j) {
  TrainState s;
  try {
    s.step = j.at("step"), s.elapsed_s = j.at("elapsed_s"), s.skipped_steps = j.at("skipped_steps");
    s.skipped_in_row = j.at("skipped_in_row"), s.recent_skips = j.at("recent_skips").get<std::vector<int64_t>>();
    s.window_sum = j.at("window_sum"), s.window_n = j.at("window_n");
    s.window_series = j.at("window_series"), s.first_window = j.at("first_window");
    s.first_loss = j.at("first_loss"), s.final_loss = j.at("final_loss"), s.last_val = j.at("last_val");
    s.last_forecast = j.at("last_forecast");
    s.recent_losses = j.at("recent_losses").get<std::vector<double>>();
    s.masking_rng = j.at("masking_rng");
    if (j.contains("val_loss")) s.val_loss = j.at("val_loss");  // absent before Orrery recorded it, or before a val
    if (j.contains("val_bits_per_unit")) s.val_bits_per_unit = j.at("val_bits_per_unit");
  } catch (const Json::exception& e) {
    throw Error(std::string("the training state is malformed: ") + e.what());
  }
  if (s.step < 0 || s.window_n < 0) throw Error("the training state is malformed: negative counts");
  return s;
}

Json TrainResult::to_json() const {
  Json j = {{"steps", steps}, {"first_loss", first_loss}, {"final_loss", final_loss},
            {"skipped_steps", skipped_steps}, {"seconds", seconds}, {"interrupted", interrupted}};
  if (std::isfinite(val_loss)) j["val_loss"] = val_loss;
  if (std::isfinite(val_bits_per_unit)) j["val_bits_per_unit"] = val_bits_per_unit;
  return j;
}

}  // namespace orrery
