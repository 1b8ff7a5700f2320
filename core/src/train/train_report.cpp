#include "train_report.h"

#include <algorithm>
#include <cstdio>

#include "orrery/host/events.h"
#include "orrery/host/format_duration.h"
#include "orrery/host/metrics_bus.h"

namespace orrery {

TrainReport::TrainReport(const TrainConfig& cfg, MetricsBus& bus, TrainState& state,
                         const std::vector<ParamGroupView>& groups, double elapsed_before)
    : cfg_(cfg), bus_(bus), st_(state), groups_(groups), elapsed_before_(elapsed_before), first_step_(state.step),
      window_start_(elapsed_before) {}

std::string TrainReport::lr_text(double lr_factor) const {
  std::string out;
  for (const auto& g : groups_) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2e", g.lr(lr_factor));
    out.append(out.empty() ? "" : "/").append(buf);
  }
  return out;
}

void TrainReport::applied(const StepOutcome& s, double lr_factor, double now, const BatchQueueStats& data) {
  st_.window_sum += s.loss;
  ++st_.window_n;
  st_.window_series += s.series;
  if (!due(st_.step)) return;
  const double mean = st_.window_sum / static_cast<double>(st_.window_n);
  const double series_per_s = static_cast<double>(st_.window_series) / std::max(now - window_start_ - window_paused_, 1e-9);
  // From this process's pace: a resumed run's earlier steps ran elsewhere.
  double eta = static_cast<double>(cfg_.steps - st_.step) * (now - elapsed_before_) /
               static_cast<double>(st_.step - first_step_);
  if (cfg_.max_seconds > 0) eta = std::min(eta, std::max(cfg_.max_seconds - now, 0.0));
  if (st_.first_window) st_.first_loss = mean, st_.first_window = false;
  st_.final_loss = mean;
  Json lrs = Json::object();
  for (const auto& g : groups_) lrs[g.label] = g.lr(lr_factor);
  // Data: mean milliseconds to draw a batch (on a worker) and that the step waited for one.
  const double drawn = std::max<double>(1, static_cast<double>(data.batches - data_before_.batches));
  const double draw_ms = 1e3 * (data.draw_seconds - data_before_.draw_seconds) / drawn;
  const double wait_ms = 1e3 * (data.wait_seconds - data_before_.wait_seconds) / drawn;
  data_before_ = data;
  bus_.publish(make_event(EventKind::train, {{"step", st_.step}, {"loss", mean}, {"lr", lrs},
                                             {"grad_norm", s.grad_norm}, {"series_per_s", series_per_s},
                                             {"data_draw_ms", draw_ms}, {"data_wait_ms", wait_ms},
                                             {"skipped_steps", st_.skipped_steps}, {"elapsed_s", now},
                                             {"eta_s", eta}, {"update_rms", s.update_rms},
                                             {"param_rms", s.param_rms}}));
  if (!cfg_.quiet) {
    std::printf("step %6lld/%lld  loss %.4f  lr %s  gnorm %.3g  %.0f series/s  ETA %s\n",
                static_cast<long long>(st_.step), static_cast<long long>(cfg_.steps), mean,
                lr_text(lr_factor).c_str(), s.grad_norm, series_per_s, format_duration(eta).c_str());
    std::fflush(stdout);
  }
  st_.window_sum = 0, st_.window_n = 0, st_.window_series = 0, window_start_ = now, window_paused_ = 0;
}

}  // namespace orrery
