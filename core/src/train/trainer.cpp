#include "orrery/host/trainer.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include "orrery/host/batch_queue.h"
#include "orrery/host/data_parallel_step.h"
#include "orrery/data_source.h"
#include "orrery/error.h"
#include "orrery/host/format_duration.h"
#include "orrery/host/gradient_sync.h"
#include "orrery/host/micro_step_graphs.h"
#include "orrery/host/evaluate.h"
#include "orrery/host/events.h"
#include "orrery/host/metrics_bus.h"
#include "orrery/host/model.h"
#include "orrery/ops.h"
#include "orrery/optimizer.h"
#include "orrery/host/patching.h"
#include "orrery/host/process_group.h"

namespace orrery {

namespace {

// Clips gradients to a global L2 norm and returns the norm before clipping.
// One norm and one scaling over every gradient (ATen's _foreach ops: a dispatch each, not one
// per parameter).
double clip_global_norm(std::vector<Param>& params, double max_norm) {
  std::vector<at::Tensor> grads;
  for (auto& p : params)
    if (p.tensor.grad().defined()) grads.push_back(p.tensor.grad());
  if (grads.empty()) return 0.0;
  const double total = at::stack(at::_foreach_norm(grads, 2)).norm().item<double>();
  if (max_norm > 0 && total > max_norm) at::_foreach_mul_(grads, max_norm / (total + 1e-6));
  return total;
}

// Copies of every group's parameters, taken before a step that will log.
std::vector<std::vector<at::Tensor>> snapshot(const std::vector<ParamGroupView>& groups) {
  std::vector<std::vector<at::Tensor>> out;
  for (const auto& g : groups) {
    out.emplace_back();
    for (const auto& t : g.tensors) out.back().push_back(t.detach().clone());
  }
  return out;
}

// Adds each group's update RMS (against `before`) and weight RMS to a train event: one
// transfer from the device for all of them.
void add_group_rms(Json& event, const std::vector<ParamGroupView>& groups,
                   const std::vector<std::vector<at::Tensor>>& before) {
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
  at::Tensor all = at::stack(sums);
  auto a = all.accessor<double, 1>();
  Json update = Json::object(), weights = Json::object();
  for (size_t g = 0; g < groups.size(); ++g) {
    update[groups[g].label] = std::sqrt(a[2 * g] / numel[g]);
    weights[groups[g].label] = std::sqrt(a[2 * g + 1] / numel[g]);
  }
  event["update_rms"] = update;
  event["param_rms"] = weights;
}

// One series as a JSON list, null where unobserved (or not finite).
// Every group's learning rate at this step, "2.00e-02" or "2.00e-02/3.00e-03".
std::string lr_text(const std::vector<ParamGroupView>& groups, double factor) {
  std::string out;
  for (const auto& g : groups) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2e", g.base_lr * factor);
    out.append(out.empty() ? "" : "/").append(buf);
  }
  return out;
}

Json series_json(const at::Tensor& values, const at::Tensor& observed) {
  at::Tensor v = values.to(at::kCPU, at::kDouble).contiguous();
  at::Tensor m = observed.to(at::kCPU).contiguous();
  auto va = v.accessor<double, 1>();
  auto ma = m.accessor<bool, 1>();
  Json out = Json::array();
  for (int64_t t = 0; t < va.size(0); ++t)
    out.push_back(ma[t] && std::isfinite(va[t]) ? Json(va[t]) : Json(nullptr));
  return out;
}

// The forecast snapshot event: the first `series` rows of `b` (variate 0) forecast over their
// last `horizon` steps from the steps before.
Json forecast_event(Model& model, const Batch& b, int64_t series, int64_t horizon, int64_t step,
                    Precision precision) {
  at::NoGradGuard no_grad;
  const int64_t cut = b.values.size(2) - horizon;
  // Rows whose every variate has an observation before the cut: the others have nothing to
  // forecast from.
  const at::Tensor usable = b.observed.narrow(2, 0, cut).any(-1).all(-1).nonzero().flatten().cpu();
  const int64_t n = std::min<int64_t>(series, usable.size(0));
  if (n == 0) return nullptr;
  const at::Tensor rows = usable.narrow(0, 0, n).to(b.values.device());
  const at::Tensor values = b.values.index_select(0, rows), observed = b.observed.index_select(0, rows);
  ForecastOptions options;
  options.precision = precision;
  Forecast f = model.forecast(values.narrow(2, 0, cut), observed.narrow(2, 0, cut),
                              b.series_ids.index_select(0, rows), horizon, options);
  const at::Tensor q = f.quantiles.select(2, 0).cpu();  // (Q, n, H)
  const int64_t shown = std::min(cut, 4 * horizon);
  Json list = Json::array();
  for (int64_t i = 0; i < n; ++i) {
    const at::Tensor v = values[i][0], m = observed[i][0];
    list.push_back({{"name", "val/" + std::to_string(usable[i].item<int64_t>())},
                    {"history", series_json(v.narrow(0, cut - shown, shown), m.narrow(0, cut - shown, shown))},
                    {"target", series_json(v.narrow(0, cut, horizon), m.narrow(0, cut, horizon))},
                    {"quantiles", quantile_rows(q.select(1, i))}});
  }
  return make_event(EventKind::forecast,
                    {{"step", step}, {"levels", f.levels}, {"horizon", horizon}, {"series", list}});
}

// A generator's state as hex text and back, for the checkpoint's JSON.
std::string generator_state(at::Generator& gen) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  const at::Tensor t = gen.get_state().contiguous();
  static const char* digits = "0123456789abcdef";
  std::string out;
  const uint8_t* p = t.data_ptr<uint8_t>();
  for (int64_t i = 0; i < t.numel(); ++i) out += digits[p[i] >> 4], out += digits[p[i] & 15];
  return out;
}

void set_generator_state(at::Generator& gen, const std::string& hex) {
  auto nibble = [](char c) -> int {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  if (hex.empty() || hex.size() % 2) throw Error("the masking generator's saved state is not hex");
  const at::Tensor t = at::empty({static_cast<int64_t>(hex.size() / 2)}, at::kByte);
  uint8_t* p = t.data_ptr<uint8_t>();
  for (size_t i = 0; i < hex.size() / 2; ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) throw Error("the masking generator's saved state is not hex");
    p[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  std::lock_guard<std::mutex> lock(gen.mutex());
  try {
    gen.set_state(t);
  } catch (const std::exception& e) {
    throw Error(std::string("the masking generator's saved state does not fit: ") + e.what());
  }
}

// The median of a few numbers.
double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

constexpr size_t kSpikeWindow = 64, kSpikeWarmup = 16;

}  // namespace

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
          .integer("log_every", 25, "progress line and train event every N steps", 1)
          .integer("val_every", 0, "validation every N steps and at the end; 0 = 4 x log_every", 0)
          .integer("val_batches", 2, "held-out batches per validation; 0 = none", 0)
          .integer("forecast_every", 0, "forecast snapshot every N steps and at the end; 0 = with validation", 0)
          .integer("forecast_series", 4, "held-out series per forecast snapshot; 0 = none", 0)
          .integer("seed", 0, "seed of the masking and of the data source when it has none", 0)
          .integer("data_workers", 1, "threads drawing batches ahead of the step; 0 = on the step's thread (the batches are the same)", 0, 64)
          .integer("prefetch", 4, "batches drawn ahead at most", 1, 1024)
          .integer("checkpoint_every", 0, "a checkpoint (weights, optimizer, data and random state) every N steps; 0 = not by steps", 0)
          .number("checkpoint_minutes", 30.0, "and every M minutes of training (and on Ctrl-C); 0 = not by time; both 0 = no checkpoints", 0.0)
          .integer("checkpoint_keep", 3, "checkpoints kept, the newest", 1, 1 << 20)
          .integer("max_skipped_steps", 10, "steps in a row with a non-finite loss or gradient (each skipped) that stop the run", 1)
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
  c.log_every = o["log_every"], c.val_every = o["val_every"], c.val_batches = o["val_batches"];
  c.forecast_every = o["forecast_every"], c.forecast_series = o["forecast_series"];
  c.seed = o["seed"], c.quiet = o["quiet"];
  c.data_workers = o["data_workers"], c.prefetch = o["prefetch"];
  c.checkpoint_every = o["checkpoint_every"], c.checkpoint_minutes = o["checkpoint_minutes"];
  c.checkpoint_keep = o["checkpoint_keep"], c.max_skipped_steps = o["max_skipped_steps"];
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
          {"log_every", log_every}, {"val_every", val_every}, {"val_batches", val_batches},
          {"forecast_every", forecast_every}, {"forecast_series", forecast_series},
          {"seed", seed}, {"data_workers", data_workers}, {"prefetch", prefetch},
          {"checkpoint_every", checkpoint_every}, {"checkpoint_minutes", checkpoint_minutes},
          {"checkpoint_keep", checkpoint_keep}, {"max_skipped_steps", max_skipped_steps},
          {"spike_factor", spike_factor}, {"precision", precision_name(precision)}, {"graph", graph},
          {"shard_optimizer", shard_optimizer}, {"quiet", quiet}};
}

Json TrainState::to_json() const {
  return {{"step", step}, {"elapsed_s", elapsed_s}, {"skipped_steps", skipped_steps},
          {"skipped_in_row", skipped_in_row}, {"window_sum", window_sum}, {"window_n", window_n},
          {"window_series", window_series}, {"first_window", first_window}, {"first_loss", first_loss},
          {"final_loss", final_loss}, {"last_val", last_val}, {"last_forecast", last_forecast},
          {"recent_losses", recent_losses}, {"masking_rng", masking_rng}};
}

TrainState TrainState::from_json(const Json& j) {
  TrainState s;
  try {
    s.step = j.at("step"), s.elapsed_s = j.at("elapsed_s"), s.skipped_steps = j.at("skipped_steps");
    s.skipped_in_row = j.at("skipped_in_row"), s.window_sum = j.at("window_sum"), s.window_n = j.at("window_n");
    s.window_series = j.at("window_series"), s.first_window = j.at("first_window");
    s.first_loss = j.at("first_loss"), s.final_loss = j.at("final_loss"), s.last_val = j.at("last_val");
    s.last_forecast = j.at("last_forecast");
    s.recent_losses = j.at("recent_losses").get<std::vector<double>>();
    s.masking_rng = j.at("masking_rng");
  } catch (const Json::exception& e) {
    throw Error(std::string("the training state is malformed: ") + e.what());
  }
  if (s.step < 0 || s.window_n < 0) throw Error("the training state is malformed: negative counts");
  return s;
}

Json TrainResult::to_json() const {
  return {{"steps", steps}, {"first_loss", first_loss}, {"final_loss", final_loss},
          {"skipped_steps", skipped_steps}, {"seconds", seconds}, {"interrupted", interrupted}};
}

TrainResult train(Model& model, DataSource& data, Optimizer& opt, const TrainConfig& cfg,
                  MetricsBus& bus, DataSource* validation, const Interrupt* interrupt, const TrainHooks& hooks) {
  const int64_t P = model.patch_size();
  if (cfg.context_length % P != 0 || cfg.context_length < 2 * P)
    throw Error("context_length " + std::to_string(cfg.context_length) +
                " must be a multiple of the patch size " + std::to_string(P) +
                " and at least two patches");
  const int64_t N = cfg.context_length / P;
  ProcessGroup* world = hooks.world;
  const int64_t W = world ? world->size() : 1, rank = world ? world->rank() : 0, A = cfg.accumulate;
  // u-muP's batch-dependent gradient scales see the global batch (dd-unit-scaling): world size x
  // accumulation steps.
  ForwardContext ctx;
  ctx.batch_multiplier = A * W;
  ctx.precision = cfg.precision;
  std::optional<MicroStepGraphs> graphs;
  if (cfg.graph) graphs.emplace(model, ctx, cfg.accumulate);
  // Eagerly gradients are released between steps; a graph holds them, so they are zeroed.
  auto clear_grads = [&] {
    if (graphs) return MicroStepGraphs::zero_grads(model.params());
    for (auto& p : model.params()) p.tensor.mutable_grad().reset();
  };
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(cfg.seed * 7919 + 17);
  auto& params = model.params();
  TrainState st;  // where the run stands; a resumed run starts from its saved state
  if (hooks.resume) {
    st = *hooks.resume;
    if (st.step > cfg.steps)
      throw Error("the checkpoint is at step " + std::to_string(st.step) + ", past this run's " +
                  std::to_string(cfg.steps) + " steps");
    set_generator_state(gen, st.masking_rng);
  }
  const int64_t first_step = st.step;

  // Diagnostics. Update and weight RMS per optimizer group, measured on logging steps only.
  std::vector<ParamGroupView> groups = opt.groups();
  if (groups.empty()) {
    groups.push_back({"all", {}, opt.base_lr()});
    for (auto& p : params) groups.back().tensors.push_back(p.tensor);
  }
  // Validation and forecast snapshots on fixed held-out batches, drawn once from `validation`
  // (never from `data` or `gen`, so training is the same with or without them).
  const bool validate = validation && cfg.val_batches > 0;
  const bool snapshots = validation && cfg.forecast_series > 0;
  const int64_t val_every = cfg.val_every > 0 ? cfg.val_every : 4 * cfg.log_every;
  const int64_t forecast_every = cfg.forecast_every > 0 ? cfg.forecast_every : val_every;
  const int64_t horizon = std::max(P, cfg.context_length / 4 / P * P);
  std::vector<Batch> held_out;
  if (validate || snapshots)
    for (int64_t i = 0; i < (validate ? cfg.val_batches : 1); ++i)
      held_out.push_back(to_device(validation->sample({cfg.batch_size, cfg.context_length, mix_seed(cfg.seed, static_cast<uint64_t>(i))}),
                                   model.device()));
  // Training batches: batch k of the run is drawn with mix_seed(seed, k) by the queue's workers.
  BatchQueueConfig queue_cfg;
  queue_cfg.batch = cfg.batch_size, queue_cfg.length = cfg.context_length;
  queue_cfg.seed = mix_seed(cfg.seed, 0x7261696e);  // "rain": a stream of its own
  queue_cfg.first = st.step * A;
  queue_cfg.every = W, queue_cfg.offset = rank;  // this rank's micro-batches of each step
  queue_cfg.workers = static_cast<int>(cfg.data_workers), queue_cfg.depth = static_cast<int>(cfg.prefetch);
  queue_cfg.device = model.device();
  BatchQueue batches(data, queue_cfg);
  BatchQueueStats data_before;
  // Data parallel: every rank starts from rank 0's step and weights, and averages gradients.
  start_together(world, st.step, params);
  std::optional<GradientSync> sync;
  if (world) {
    std::vector<at::Tensor> tensors;
    for (const auto& p : params) tensors.push_back(p.tensor);
    sync.emplace(*world, tensors, !cfg.graph);
  }

  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const double elapsed_before = st.elapsed_s;
  auto elapsed = [&] { return elapsed_before + std::chrono::duration<double>(clock::now() - start).count(); };

  TrainResult result;
  result.steps = st.step;
  double window_start = elapsed_before;
  double window_paused = 0;  // seconds of the window spent on validation and snapshots

  // Validation and snapshots due after `done` steps; at the end, whichever the last step
  // has not had yet.
  auto diagnose = [&](int64_t done, bool at_end) {
    const double t0 = elapsed();
    if (validate && (at_end ? st.last_val != done : done % val_every == 0)) {
      double sum = 0;
      {
        at::NoGradGuard no_grad;
        ForwardContext val_ctx;
        val_ctx.precision = cfg.precision;
        for (const auto& b : held_out) sum += model.loss(b, {}, val_ctx).item<double>();
      }
      st.last_val = done;
      bus.publish(make_event(EventKind::val, {{"step", done}, {"loss", sum / static_cast<double>(held_out.size())},
                                              {"elapsed_s", elapsed()}}));
    }
    if (snapshots && (at_end ? st.last_forecast != done : done % forecast_every == 0)) {
      st.last_forecast = done;
      Json ev = forecast_event(model, held_out.front(), cfg.forecast_series, horizon, done, cfg.precision);
      if (!ev.is_null()) bus.publish(ev);
    }
    window_paused += elapsed() - t0;
  };
  // A checkpoint of the state after st.step steps, through the caller's hook.
  // Time-based checkpoints go by rank 0's clock at step starts, which every rank agrees on: a
  // sharded optimizer's checkpoint is a collective (zero.h).
  double last_checkpoint = st.elapsed_s;
  int64_t checkpointed = st.step;
  auto checkpoint = [&](double clock) {
    if (!hooks.checkpoint || !cfg.checkpoints() || checkpointed == st.step) return;
    st.elapsed_s = elapsed();
    st.masking_rng = generator_state(gen);
    bus.publish(make_event(EventKind::checkpoint, {{"step", st.step}}));
    hooks.checkpoint(st);
    checkpointed = st.step, last_checkpoint = clock;
  };

  for (int64_t step = st.step; step < cfg.steps; ++step) {
    // Every batch and mask of the step is drawn even after a fault, so batch k stays batch k.
    std::vector<Batch> micro;
    for (int64_t j = 0; j < A; ++j) micro.push_back(batches.next());
    const StepStart start = agree_step_start(world, micro, interrupt && interrupt->requested(), elapsed());
    if (start.stop) {
      result.interrupted = true;
      break;
    }
    if (cfg.max_seconds > 0 && start.clock >= cfg.max_seconds) break;
    double progress = static_cast<double>(step) / cfg.steps;
    if (cfg.max_seconds > 0) progress = std::max(progress, start.clock / cfg.max_seconds);

    const double lr_factor = cfg.schedule.factor(step, progress, cfg.steps);
    const StepScalars scalars{lr_factor, cfg.weight_decay_schedule.factor(progress),
                              cfg.momentum.value(step, progress)};
    // The masks of the whole global batch, in its order; this rank keeps its own.
    std::vector<at::Tensor> keep(static_cast<size_t>(A));
    if (cfg.cpm)
      for (int64_t j = 0; j < A; ++j)
        for (int64_t q = 0; q < W; ++q) {
          at::Tensor m = contiguous_patch_mask(cfg.batch_size, start.variates[static_cast<size_t>(j * W + q)], N,
                                               cfg.cpm_max_span, cfg.cpm_max_rate, gen);
          if (q == rank) keep[static_cast<size_t>(j)] = m.to(model.device());
        }
    clear_grads();
    double l = 0;
    int64_t series = 0;
    const char* fault = nullptr;  // what was not finite: the step is skipped
    for (int64_t j = 0; j < A && !fault; ++j) {
      const Batch& b = micro[static_cast<size_t>(j)];
      if (sync && j + 1 == A) sync->arm();  // the last backward starts the reductions
      // Each micro-batch carries 1/accumulate of the step's mean loss. A graph has run the
      // backward already; eagerly it runs only for a finite loss.
      at::Tensor loss = graphs ? graphs->run(b, keep[static_cast<size_t>(j)])
                               : model.loss(b, keep[static_cast<size_t>(j)], ctx) / static_cast<double>(A);
      const double part = loss.item<double>();
      if (!std::isfinite(part)) {
        fault = "loss";
        continue;
      }
      if (!graphs) loss.backward();
      l += part;
      series += b.values.size(0) * b.values.size(1);
    }
    if (sync) sync->finish();  // also after a fault here: the other ranks wait for these buckets
    const StepEnd end = agree_step_end(world, l, series, fault != nullptr);
    l = end.loss, series = end.series;
    if (end.loss_fault) fault = "loss";
    const double gnorm = fault ? NAN : clip_global_norm(params, cfg.clip);
    if (!fault && !std::isfinite(gnorm)) fault = "gradient";
    const bool logs = (step + 1) % cfg.log_every == 0 || step + 1 == cfg.steps;
    st.step = result.steps = step + 1;
    if (fault) {
      // Checked before any update: a bad step writes nothing into the weights or the state.
      clear_grads();
      ++st.skipped_steps, ++st.skipped_in_row;
      bus.publish(make_event(EventKind::skip, {{"step", st.step}, {"reason", fault}, {"skipped_steps", st.skipped_steps},
                                               {"skipped_in_row", st.skipped_in_row}}));
      if (!cfg.quiet) {
        std::printf("step %6lld/%lld  skipped: the %s is not finite (%lld in a row, lr %s)\n",
                    static_cast<long long>(st.step), static_cast<long long>(cfg.steps), fault,
                    static_cast<long long>(st.skipped_in_row), lr_text(groups, lr_factor).c_str());
        std::fflush(stdout);
      }
      if (st.skipped_in_row >= cfg.max_skipped_steps)
        throw Error("training stopped at step " + std::to_string(st.step) + ": " + std::to_string(st.skipped_in_row) +
                    " steps in a row had a non-finite loss or gradient (max_skipped_steps = " +
                    std::to_string(cfg.max_skipped_steps) + "; lr " + lr_text(groups, lr_factor) +
                    "). The weights are those after step " + std::to_string(st.step - st.skipped_in_row) +
                    " and the checkpoints are intact: lower the learning rate, tighten clipping or check the data, "
                    "then resume");
    } else {
      st.skipped_in_row = 0;
      if (cfg.spike_factor > 0 && st.recent_losses.size() >= kSpikeWarmup) {
        const double m = median(st.recent_losses);
        if (l > cfg.spike_factor * m)
          bus.publish(make_event(EventKind::spike, {{"step", st.step}, {"loss", l}, {"median", m}}));
      }
      st.recent_losses.push_back(l);
      if (st.recent_losses.size() > kSpikeWindow) st.recent_losses.erase(st.recent_losses.begin());
      std::vector<std::vector<at::Tensor>> before;
      if (logs) before = snapshot(groups);
      opt.step(scalars);
      st.window_sum += l;
      ++st.window_n;
      st.window_series += series;
      if (logs) {
        const double now = elapsed();
        const double mean = st.window_sum / st.window_n;
        const double series_per_s = st.window_series / std::max(now - window_start - window_paused, 1e-9);
        // From this process's pace: a resumed run's earlier steps ran elsewhere.
        double eta = static_cast<double>(cfg.steps - st.step) * (now - elapsed_before) /
                     static_cast<double>(st.step - first_step);
        if (cfg.max_seconds > 0) eta = std::min(eta, std::max(cfg.max_seconds - now, 0.0));
        if (st.first_window) st.first_loss = mean, st.first_window = false;
        st.final_loss = mean;
        Json lrs = Json::object();
        for (const auto& g : groups) lrs[g.label] = g.base_lr * lr_factor;
        // Data: mean milliseconds to draw a batch (on a worker) and that the step waited for one.
        const BatchQueueStats data_now = batches.stats();
        const double drawn = std::max<double>(1, static_cast<double>(data_now.batches - data_before.batches));
        const double draw_ms = 1e3 * (data_now.draw_seconds - data_before.draw_seconds) / drawn;
        const double wait_ms = 1e3 * (data_now.wait_seconds - data_before.wait_seconds) / drawn;
        data_before = data_now;
        Json ev = make_event(EventKind::train, {{"step", st.step}, {"loss", mean}, {"lr", lrs},
                                                {"grad_norm", gnorm}, {"series_per_s", series_per_s},
                                                {"data_draw_ms", draw_ms}, {"data_wait_ms", wait_ms},
                                                {"skipped_steps", st.skipped_steps},
                                                {"elapsed_s", now}, {"eta_s", eta}});
        add_group_rms(ev, groups, before);
        bus.publish(ev);
        if (!cfg.quiet) {
          std::printf("step %6lld/%lld  loss %.4f  lr %s  gnorm %.3g  %.0f series/s  ETA %s\n",
                      static_cast<long long>(st.step), static_cast<long long>(cfg.steps), mean,
                      lr_text(groups, lr_factor).c_str(), gnorm, series_per_s, format_duration(eta).c_str());
          std::fflush(stdout);
        }
        st.window_sum = 0, st.window_n = 0, st.window_series = 0, window_start = now, window_paused = 0;
      }
    }
    diagnose(st.step, false);
    if ((cfg.checkpoint_every > 0 && st.step % cfg.checkpoint_every == 0) ||
        (cfg.checkpoint_minutes > 0 && start.clock - last_checkpoint >= 60 * cfg.checkpoint_minutes))
      checkpoint(start.clock);
  }
  // Ctrl-C: the run can go on from here. At the end: a resumed script finds the final weights.
  checkpoint(elapsed());
  if (st.step > 0) diagnose(st.step, true);
  result.first_loss = st.first_loss, result.final_loss = st.final_loss;
  if (st.window_n > 0) {  // a run cut by time or Ctrl-C: report the partial window
    result.final_loss = st.window_sum / st.window_n;
    if (st.first_window) result.first_loss = result.final_loss;
  }
  result.skipped_steps = st.skipped_steps;
  result.seconds = elapsed();
  bus.publish(make_event(EventKind::end, result.to_json()));
  return result;
}

}  // namespace orrery
