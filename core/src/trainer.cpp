#include "orrery/trainer.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "orrery/batch_queue.h"
#include "orrery/data_source.h"
#include "orrery/error.h"
#include "orrery/format_duration.h"
#include "orrery/evaluate.h"
#include "orrery/events.h"
#include "orrery/metrics_bus.h"
#include "orrery/model.h"
#include "orrery/ops.h"
#include "orrery/optimizer.h"
#include "orrery/patching.h"

namespace orrery {

namespace {

// Clips gradients to a global L2 norm and returns the norm before clipping.
double clip_global_norm(std::vector<Param>& params, double max_norm) {
  std::vector<at::Tensor> norms;
  for (auto& p : params)
    if (p.tensor.grad().defined()) norms.push_back(p.tensor.grad().norm());
  if (norms.empty()) return 0.0;
  double total = at::stack(norms).norm().item<double>();
  if (max_norm > 0 && total > max_norm) {
    double s = max_norm / (total + 1e-6);
    for (auto& p : params)
      if (p.tensor.grad().defined()) p.tensor.mutable_grad().mul_(s);
  }
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
Json forecast_event(Model& model, const Batch& b, int64_t series, int64_t horizon, int64_t step) {
  at::NoGradGuard no_grad;
  const int64_t cut = b.values.size(2) - horizon;
  // Rows whose every variate has an observation before the cut: the others have nothing to
  // forecast from.
  const at::Tensor usable = b.observed.narrow(2, 0, cut).any(-1).all(-1).nonzero().flatten().cpu();
  const int64_t n = std::min<int64_t>(series, usable.size(0));
  if (n == 0) return nullptr;
  const at::Tensor rows = usable.narrow(0, 0, n).to(b.values.device());
  const at::Tensor values = b.values.index_select(0, rows), observed = b.observed.index_select(0, rows);
  Forecast f = model.forecast(values.narrow(2, 0, cut), observed.narrow(2, 0, cut),
                              b.series_ids.index_select(0, rows), horizon);
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
          {"seed", seed}, {"data_workers", data_workers}, {"prefetch", prefetch}, {"quiet", quiet}};
}

Json TrainResult::to_json() const {
  return {{"steps", steps}, {"first_loss", first_loss}, {"final_loss", final_loss},
          {"seconds", seconds}, {"interrupted", interrupted}};
}

TrainResult train(Model& model, DataSource& data, Optimizer& opt, const TrainConfig& cfg,
                  MetricsBus& bus, DataSource* validation, const Interrupt* interrupt) {
  const int64_t P = model.patch_size();
  if (cfg.context_length % P != 0 || cfg.context_length < 2 * P)
    throw Error("context_length " + std::to_string(cfg.context_length) +
                " must be a multiple of the patch size " + std::to_string(P) +
                " and at least two patches");
  const int64_t N = cfg.context_length / P;
  // u-muP's batch-dependent gradient scales see the global batch: world size (1 until
  // data-parallel training) x accumulation steps.
  ForwardContext ctx;
  ctx.batch_multiplier = cfg.accumulate;
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(cfg.seed * 7919 + 17);
  auto& params = model.params();

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
  queue_cfg.workers = static_cast<int>(cfg.data_workers), queue_cfg.depth = static_cast<int>(cfg.prefetch);
  queue_cfg.device = model.device();
  BatchQueue batches(data, queue_cfg);
  BatchQueueStats data_before;

  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };

  TrainResult result;
  double window_sum = 0;
  int64_t window_n = 0, window_series = 0;
  double window_start = 0;
  double window_paused = 0;  // seconds of the window spent on validation and snapshots
  bool first_window = true;

  // Validation and snapshots due after `done` steps; at the end, whichever the last step
  // has not had yet.
  int64_t last_val = 0, last_forecast = 0;
  auto diagnose = [&](int64_t done, bool at_end) {
    const double t0 = elapsed();
    if (validate && (at_end ? last_val != done : done % val_every == 0)) {
      double sum = 0;
      {
        at::NoGradGuard no_grad;
        for (const auto& b : held_out) sum += model.loss(b).item<double>();
      }
      last_val = done;
      bus.publish(make_event(EventKind::val, {{"step", done}, {"loss", sum / static_cast<double>(held_out.size())},
                                              {"elapsed_s", elapsed()}}));
    }
    if (snapshots && (at_end ? last_forecast != done : done % forecast_every == 0)) {
      last_forecast = done;
      Json ev = forecast_event(model, held_out.front(), cfg.forecast_series, horizon, done);
      if (!ev.is_null()) bus.publish(ev);
    }
    window_paused += elapsed() - t0;
  };

  for (int64_t step = 0; step < cfg.steps; ++step) {
    if (interrupt && interrupt->requested()) {
      result.interrupted = true;
      break;
    }
    const double t = elapsed();
    if (cfg.max_seconds > 0 && t >= cfg.max_seconds) break;
    double progress = static_cast<double>(step) / cfg.steps;
    if (cfg.max_seconds > 0) progress = std::max(progress, t / cfg.max_seconds);

    const double lr_factor = cfg.schedule.factor(step, progress, cfg.steps);
    const StepScalars scalars{lr_factor, cfg.weight_decay_schedule.factor(progress),
                              cfg.momentum.value(step, progress)};
    // Checked before any update, so a bad step never writes NaN into the weights or the state.
    auto refuse = [&](const char* what) {
      throw Error(std::string("training ") + what + " became non-finite at step " +
                  std::to_string(step + 1) + " (lr " + lr_text(groups, lr_factor) +
                  "); the model is left as it was after the previous step. Lower the learning "
                  "rate or tighten clipping");
    };
    for (auto& p : params) p.tensor.mutable_grad().reset();
    double l = 0;
    for (int64_t micro = 0; micro < cfg.accumulate; ++micro) {
      Batch b = batches.next();
      at::Tensor keep;
      if (cfg.cpm)
        keep = contiguous_patch_mask(b.values.size(0), b.values.size(1), N, cfg.cpm_max_span,
                                     cfg.cpm_max_rate, gen).to(model.device());
      // Each micro-batch carries 1/accumulate of the step's mean loss.
      at::Tensor loss = model.loss(b, keep, ctx) / static_cast<double>(cfg.accumulate);
      const double part = loss.item<double>();
      if (!std::isfinite(part)) refuse("loss");
      loss.backward();
      l += part;
      window_series += b.values.size(0) * b.values.size(1);
    }
    const double gnorm = clip_global_norm(params, cfg.clip);
    if (!std::isfinite(gnorm)) refuse("gradient norm");
    const bool logs = (step + 1) % cfg.log_every == 0 || step + 1 == cfg.steps;
    std::vector<std::vector<at::Tensor>> before;
    if (logs) before = snapshot(groups);
    opt.step(scalars);
    window_sum += l;
    ++window_n;
    result.steps = step + 1;

    if (logs) {
      const double now = elapsed();
      const double mean = window_sum / window_n;
      const double series_per_s = window_series / std::max(now - window_start - window_paused, 1e-9);
      double eta = (cfg.steps - step - 1) * now / (step + 1);
      if (cfg.max_seconds > 0) eta = std::min(eta, std::max(cfg.max_seconds - now, 0.0));
      if (first_window) result.first_loss = mean, first_window = false;
      result.final_loss = mean;
      Json lrs = Json::object();
      for (const auto& g : groups) lrs[g.label] = g.base_lr * lr_factor;
      // Data: mean milliseconds to draw a batch (on a worker) and that the step waited for one.
      const BatchQueueStats data_now = batches.stats();
      const double drawn = std::max<double>(1, static_cast<double>(data_now.batches - data_before.batches));
      const double draw_ms = 1e3 * (data_now.draw_seconds - data_before.draw_seconds) / drawn;
      const double wait_ms = 1e3 * (data_now.wait_seconds - data_before.wait_seconds) / drawn;
      data_before = data_now;
      Json ev = make_event(EventKind::train, {{"step", step + 1}, {"loss", mean}, {"lr", lrs},
                                              {"grad_norm", gnorm}, {"series_per_s", series_per_s},
                                              {"data_draw_ms", draw_ms}, {"data_wait_ms", wait_ms},
                                              {"elapsed_s", now}, {"eta_s", eta}});
      add_group_rms(ev, groups, before);
      bus.publish(ev);
      if (!cfg.quiet) {
        std::printf("step %6lld/%lld  loss %.4f  lr %s  gnorm %.3g  %.0f series/s  ETA %s\n",
                    static_cast<long long>(step + 1), static_cast<long long>(cfg.steps), mean,
                    lr_text(groups, lr_factor).c_str(), gnorm, series_per_s, format_duration(eta).c_str());
        std::fflush(stdout);
      }
      window_sum = 0, window_n = 0, window_series = 0, window_start = now, window_paused = 0;
    }
    diagnose(step + 1, false);
  }
  if (result.steps > 0) diagnose(result.steps, true);
  if (window_n > 0) {  // a run cut by time or Ctrl-C: report the partial window
    result.final_loss = window_sum / window_n;
    if (first_window) result.first_loss = result.final_loss;
  }
  result.seconds = elapsed();
  bus.publish(make_event(EventKind::end, result.to_json()));
  return result;
}

}  // namespace orrery
