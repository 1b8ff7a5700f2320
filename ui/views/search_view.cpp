// The Search tab: a study's objective by trial with the best so far, the share of the
// objective's variance each dimension explains, and the objective against every dimension.
#include <algorithm>
#include <cmath>

#include "orrery/sort_stably.h"
#include "../plot/theme.h"
#include "views.h"

namespace orrery::ui {

namespace {

struct TrialLook {
  plot::Color color;
  plot::Marker marker;
};

// Complete trials are filled dots, the best one large; pruned ones crosses at their last
// intermediate value; running ones rings at their latest.
TrialLook look_of(const StudyTrial& t) {
  if (t.state == "pruned") return {plot::theme().muted, plot::Marker::cross};
  if (t.state == "running") return {plot::Color::hex(0x73d98a), plot::Marker::ring};
  return {plot::theme().fan, plot::Marker::circle};
}

}  // namespace

double study_trial_y(const StudyTrial& t) {
  if (t.state == "complete") return t.value;
  if ((t.state == "pruned" || t.state == "running") && !t.intermediate.empty()) return t.intermediate.back().second;
  return kNaN;
}

std::vector<double> best_so_far(const SearchStudy& s) {
  std::vector<double> out;
  double best = kNaN;
  for (const auto& t : s.trials) {
    if (t.state == "complete" && std::isfinite(t.value) &&
        (!std::isfinite(best) || (s.maximize ? t.value > best : t.value < best)))
      best = t.value;
    out.push_back(best);
  }
  return out;
}

std::vector<plot::PlotFrame> draw_search_view(plot::Canvas& c, plot::Rect r, const SearchStudy& s) {
  std::vector<plot::PlotFrame> frames;
  const float weights[] = {1.f, 1.15f};
  const auto rows = split_rows(r, weights, 12);
  auto top = split_columns(rows[0], 2, 16);
  top[0].x1 = rows[0].x0 + (rows[0].w() - 16) * 0.64f;
  top[1].x0 = top[0].x1 + 16;

  // One y range for every panel: the objective of the trials that have one.
  plot::Range yr;
  for (const auto& t : s.trials) yr.add(study_trial_y(t));
  const plot::Axis ya = yr.axis(s.maximize ? "objective (higher is better)" : "objective (lower is better)");
  plot::Range xr;
  for (const auto& t : s.trials) xr.add(static_cast<double>(t.number));
  const float left = plot::Plot::label_room(c, ya);

  int complete = 0, pruned = 0, failed = 0, running = 0;
  for (const auto& t : s.trials)
    (t.state == "complete" ? complete : t.state == "pruned" ? pruned : t.state == "failed" ? failed : running) += 1;
  char title[256];
  std::snprintf(title, sizeof title, "%s: %zu trials (%d complete, %d pruned, %d failed, %d running)", s.title.c_str(),
                s.trials.size(), complete, pruned, failed, running);
  plot::Plot by_trial(c, top[0], title, xr.axis("trial", 0.03), ya, left);
  const std::vector<double> best = best_so_far(s);
  std::vector<double> bx, by;  // the best so far as steps
  for (size_t i = 0; i < s.trials.size(); ++i) {
    if (!std::isfinite(best[i])) continue;
    if (!by.empty()) bx.push_back(static_cast<double>(s.trials[i].number)), by.push_back(by.back());
    bx.push_back(static_cast<double>(s.trials[i].number)), by.push_back(best[i]);
  }
  by_trial.line(bx, by, plot::theme().actual, 1.5f);
  for (const auto& t : s.trials) {
    const TrialLook l = look_of(t);
    by_trial.marker(static_cast<double>(t.number), study_trial_y(t), l.color, l.marker, t.number == s.best ? 6.f : 3.5f);
  }
  if (s.trials.empty()) by_trial.note("no trials yet");
  const plot::LegendEntry legend[] = {{"complete", plot::theme().fan, plot::LegendEntry::marker},
                                      {"pruned (last report)", plot::theme().muted, plot::LegendEntry::marker},
                                      {"running (latest report)", plot::Color::hex(0x73d98a), plot::LegendEntry::marker},
                                      {"best so far", plot::theme().actual, plot::LegendEntry::line}};
  by_trial.legend(legend);
  frames.push_back(by_trial.frame());

  // Importance: a horizontal bar per dimension, the largest on top.
  const std::vector<double> share = main_effect_importance(s);
  std::vector<size_t> order(s.dims.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  sort_stably(order, [&](size_t a, size_t b) {
    const double x = std::isfinite(share[a]) ? share[a] : -1, y = std::isfinite(share[b]) ? share[b] : -1;
    return x > y;
  });
  plot::Axis dims_axis;
  dims_axis.lo = -0.5, dims_axis.hi = std::max<double>(0.5, static_cast<double>(order.size()) - 0.5);
  for (size_t i = 0; i < order.size(); ++i)
    dims_axis.fixed_ticks.push_back({static_cast<double>(order.size() - 1 - i), s.dims[order[i]].name});
  plot::Axis share_axis;
  share_axis.lo = 0, share_axis.hi = 1, share_axis.label = "share of the objective's variance";
  plot::Plot imp(c, top[1], "importance (main effect, complete trials)", share_axis, dims_axis);
  bool any = false;
  for (size_t i = 0; i < order.size(); ++i) {
    const double v = share[order[i]];
    if (!std::isfinite(v)) continue;
    any = true;
    const double y = static_cast<double>(order.size() - 1 - i);
    const plot::Vec2 a = imp.to_pixel(0, y + 0.32), b = imp.to_pixel(std::clamp(v, 0.0, 1.0), y - 0.32);
    c.fill_rect({a.x, a.y, std::max(b.x, a.x + 1), b.y}, plot::theme().fan.with_alpha(0.8f));
  }
  if (!any) imp.note("needs 4 complete trials");
  frames.push_back(imp.frame());

  // The objective against each dimension, small multiples in a grid.
  const size_t n = s.dims.size();
  if (n == 0) return frames;
  const size_t cols = std::min<size_t>(n, rows[1].w() > 900 ? 5 : 3), lines = (n + cols - 1) / cols;
  std::vector<float> line_weights(lines, 1.f);
  const auto grid_rows = split_rows(rows[1], line_weights, 10);
  for (size_t k = 0; k < n; ++k) {
    const auto cells = split_columns(grid_rows[k / cols], cols, 12);
    const StudyDimension& d = s.dims[k];
    plot::Axis xa;
    if (d.categorical) {
      xa.lo = -0.5, xa.hi = static_cast<double>(d.choices.size()) - 0.5;
      for (size_t i = 0; i < d.choices.size(); ++i) xa.fixed_ticks.push_back({static_cast<double>(i), d.choices[i]});
      xa.label = d.name;
    } else {
      plot::Range dr(d.log);
      dr.add(d.low), dr.add(d.high);
      for (const auto& t : s.trials) dr.add(t.values[k]);
      xa = dr.axis(d.name, 0.04);
    }
    plot::Plot p(c, cells[k % cols], "", xa, ya, left);
    for (const auto& t : s.trials) {
      double x = t.values[k];
      if (!std::isfinite(x)) continue;
      // Choices get a little spread by trial number, so equal points stay visible.
      if (d.categorical) x += 0.3 * (std::fmod(static_cast<double>(t.number) * 0.618034, 1.0) - 0.5);
      const TrialLook l = look_of(t);
      p.marker(x, study_trial_y(t), l.color, l.marker, t.number == s.best ? 6.f : 3.f);
    }
    frames.push_back(p.frame());
  }
  return frames;
}

}  // namespace orrery::ui
