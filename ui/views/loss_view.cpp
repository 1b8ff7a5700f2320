#include <algorithm>
#include <cmath>
#include <optional>

#include "../plot/theme.h"
#include "views.h"

namespace orrery::ui {

std::vector<double> smooth(std::span<const double> y, double w) {
  std::vector<double> out(y.size(), kNaN);
  double ema = 0, weight = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i])) continue;
    ema = w * ema + (1 - w) * y[i];
    weight = w * weight + (1 - w);
    out[i] = ema / weight;  // debiased: early points are not pulled towards zero
  }
  return out;
}

double run_x(const Run& run, double step, bool time_axis) {
  if (!time_axis) return step;
  // Seconds at `step`, interpolated between logged points (elapsed is logged with the loss).
  const auto& xs = run.elapsed.x;
  const auto& ts = run.elapsed.y;
  if (xs.empty()) return kNaN;
  auto it = std::lower_bound(xs.begin(), xs.end(), step);
  if (it == xs.end()) return ts.back() * step / std::max(xs.back(), 1.0);
  const size_t i = static_cast<size_t>(it - xs.begin());
  if (i == 0) return ts[0] * step / std::max(xs[0], 1.0);
  const double f = (step - xs[i - 1]) / std::max(xs[i] - xs[i - 1], 1e-9);
  return ts[i - 1] + f * (ts[i] - ts[i - 1]);
}

namespace {

// The stroke of a run's k-th optimizer group in the learning-rate strip.
plot::Stroke lr_stroke(size_t k) {
  return k == 0 ? plot::Stroke::solid : k == 1 ? plot::Stroke::dashed : plot::Stroke::dotted;
}

std::vector<double> xs_of(const Run& run, const Curve& c, bool time_axis) {
  std::vector<double> out;
  out.reserve(c.x.size());
  for (double s : c.x) out.push_back(run_x(run, s, time_axis));
  return out;
}

}  // namespace

std::vector<plot::PlotFrame> draw_loss_view(plot::Canvas& c, plot::Rect r, std::span<const StyledRun> runs,
                                            const LossViewOptions& o) {
  // Runs whose data carry units (text: bytes) get their validation loss per unit in a strip of
  // its own, between the loss and the learning rate: bits per byte, comparable across tokenizers.
  std::string unit;
  for (const auto& s : runs)
    if (!s.run->val_bits.empty()) unit = unit.empty() || unit == s.run->val_unit ? s.run->val_unit : "unit";
  const bool bits = o.show_validation && !unit.empty();
  const float two[] = {3.f, 1.f}, three[] = {3.f, 1.4f, 1.f};
  const auto rows = bits ? split_rows(r, three) : split_rows(r, two);
  const plot::Theme& t = plot::theme();
  plot::Range xr(o.log_x), yr(o.log_y), lr_range(true), bits_range(false);
  for (const auto& s : runs) {
    const Run& run = *s.run;
    xr.add_all(xs_of(run, run.train_loss, o.time_axis));
    yr.add_all(run.train_loss.y);
    if (o.show_validation) xr.add_all(xs_of(run, run.val_loss, o.time_axis)), yr.add_all(run.val_loss.y);
    for (const auto& [group, curve] : run.lr_curves) lr_range.add_all(curve.y);
    bits_range.add_all(run.val_bits.y);
  }
  plot::Axis x = xr.axis(o.time_axis ? "seconds" : "step", 0.01);
  if (!o.log_x && !o.time_axis && !xr.empty()) x.lo = std::max(x.lo, 0.0);
  const plot::Axis loss_y = yr.axis("loss"), lr_y = lr_range.axis("learning rate");
  const plot::Axis bits_y = bits_range.axis("bits per " + unit);
  float left = std::max(plot::Plot::label_room(c, loss_y), plot::Plot::label_room(c, lr_y));
  if (bits) left = std::max(left, plot::Plot::label_room(c, bits_y));
  plot::Plot loss(c, rows[0], "loss", x, loss_y, left);
  std::vector<plot::LegendEntry> legend;
  for (const auto& s : runs) {
    const Run& run = *s.run;
    const auto x_train = xs_of(run, run.train_loss, o.time_axis);
    if (o.smoothing > 0) {
      loss.line(x_train, run.train_loss.y, s.color.with_alpha(0.25f), 1.f);
      loss.line(x_train, smooth(run.train_loss.y, o.smoothing), s.color, 2.f);
    } else {
      loss.line(x_train, run.train_loss.y, s.color, 2.f);
    }
    if (o.show_validation && !run.val_loss.empty()) {
      const auto x_val = xs_of(run, run.val_loss, o.time_axis);
      loss.line(x_val, run.val_loss.y, s.color, 1.5f, plot::Stroke::dashed);
      for (size_t i = 0; i < x_val.size(); ++i) loss.marker(x_val[i], run.val_loss.y[i], s.color, plot::Marker::circle, 2.5f);
    }
    // Faults: a skipped step as a dashed rule; a spike as a dotted rule with a cross at its
    // loss (at the top edge when the loss is off the chart).
    for (double step : run.skipped) loss.vertical_rule(run_x(run, step, o.time_axis), s.color.with_alpha(0.7f));
    for (size_t i = 0; i < run.spikes.x.size(); ++i) {
      const double x = run_x(run, run.spikes.x[i], o.time_axis);
      loss.vertical_rule(x, s.color.with_alpha(0.7f), plot::Stroke::dotted);
      loss.marker(x, std::min(run.spikes.y[i], loss_y.hi), s.color, plot::Marker::cross, 5.f);
    }
    legend.push_back({run.name, s.color});
  }
  if (runs.empty()) loss.note("no runs selected");
  else if (yr.empty()) loss.note("waiting for the first logged step");
  if (legend.size() > 12) legend.resize(12), legend.push_back({"...", t.muted});
  const bool any_val = std::any_of(runs.begin(), runs.end(), [](const StyledRun& s) { return !s.run->val_loss.empty(); });
  if (any_val && o.show_validation) legend.push_back({"validation", t.muted, plot::LegendEntry::dashed});
  if (std::any_of(runs.begin(), runs.end(), [](const StyledRun& s) { return !s.run->skipped.empty(); }))
    legend.push_back({"skipped step (| dashed)", t.muted, plot::LegendEntry::dashed});
  if (std::any_of(runs.begin(), runs.end(), [](const StyledRun& s) { return !s.run->spikes.empty(); }))
    legend.push_back({"loss spike (x)", t.muted, plot::LegendEntry::marker});
  loss.legend(legend);

  std::optional<plot::Plot> per_unit;
  if (bits) {
    per_unit.emplace(c, rows[1], "validation bits per " + unit, x, bits_y, left);
    for (const auto& s : runs) {
      const Run& run = *s.run;
      if (run.val_bits.empty()) continue;
      const auto x_val = xs_of(run, run.val_bits, o.time_axis);
      per_unit->line(x_val, run.val_bits.y, s.color, 1.5f, plot::Stroke::dashed);
      for (size_t i = 0; i < x_val.size(); ++i) per_unit->marker(x_val[i], run.val_bits.y[i], s.color, plot::Marker::circle, 2.5f);
    }
  }

  // Every optimizer group's rate: the run's colour, one stroke per group (in label order).
  plot::Plot lr(c, rows.back(), "", x, lr_y, left);
  std::vector<std::string> groups;
  for (const auto& s : runs) {
    size_t k = 0;
    for (const auto& [group, curve] : s.run->lr_curves) {
      lr.line(xs_of(*s.run, curve, o.time_axis), curve.y, s.color, 1.5f, lr_stroke(k++));
      if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
    }
  }
  if (groups.size() > 1) {
    std::vector<plot::LegendEntry> styles;
    for (const auto& s : runs) {
      size_t k = 0;
      for (const auto& [group, curve] : s.run->lr_curves) {
        const auto kind = lr_stroke(k++) == plot::Stroke::solid ? plot::LegendEntry::line : plot::LegendEntry::dashed;
        if (std::none_of(styles.begin(), styles.end(), [&](const auto& e) { return e.label == group; }))
          styles.push_back({group, t.muted, kind});
      }
    }
    lr.legend(styles);
  }
  if (per_unit) return {loss.frame(), lr.frame(), per_unit->frame()};
  return {loss.frame(), lr.frame()};
}

}  // namespace orrery::ui
