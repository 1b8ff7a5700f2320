#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "../plot/theme.h"
#include "views.h"

namespace orrery::ui {

double parabola_vertex(std::span<const double> x, std::span<const double> y, double fallback) {
  // Least squares y = a x^2 + b x + c by the normal equations (Cramer's rule), centred on the
  // fallback for conditioning. Only a convex fit whose vertex lies within an octave counts.
  double s[5] = {0, 0, 0, 0, 0}, sy[3] = {0, 0, 0};
  for (size_t i = 0; i < x.size(); ++i) {
    const double u = x[i] - fallback;
    double p = 1;
    for (int k = 0; k < 5; ++k) {
      if (k < 3) sy[k] += p * y[i];
      s[k] += p, p *= u;
    }
  }
  auto det = [](double m[3][3]) {
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  };
  double A[3][3] = {{s[4], s[3], s[2]}, {s[3], s[2], s[1]}, {s[2], s[1], s[0]}};
  const double D = det(A);
  if (x.size() < 3 || std::fabs(D) < 1e-12) return fallback;
  double Aa[3][3] = {{sy[2], s[3], s[2]}, {sy[1], s[2], s[1]}, {sy[0], s[1], s[0]}};
  double Ab[3][3] = {{s[4], sy[2], s[2]}, {s[3], sy[1], s[1]}, {s[2], sy[0], s[0]}};
  const double a = det(Aa) / D, b = det(Ab) / D;
  if (!(a > 0)) return fallback;
  const double v = -b / (2 * a);
  return std::fabs(v) <= 1 ? fallback + v : fallback;
}

CurveOptimum curve_optimum(std::span<const double> x, std::span<const double> y) {
  CurveOptimum o;
  for (size_t i = 0; i < x.size(); ++i)
    if (std::isfinite(y[i]) && !(y[i] >= o.best_y)) o.best_x = x[i], o.best_y = y[i];
  if (!std::isfinite(o.best_y)) return o;
  std::vector<double> xs, ys;
  for (size_t i = 0; i < x.size(); ++i)
    if (std::isfinite(y[i]) && std::fabs(x[i] - o.best_x) <= 1) xs.push_back(x[i]), ys.push_back(y[i]);
  o.fitted = parabola_vertex(xs, ys, o.best_x);
  return o;
}

namespace {

// The move of the optimum from the first curve to the last, along the axis that varies.
SweepShift shift_of(const std::vector<SweepCurve>& curves) {
  SweepShift s;
  if (curves.size() < 2) return s;
  const SweepCurve &first = curves.front(), &last = curves.back();
  s.along_depth = first.width == last.width && first.depth != last.depth;
  s.from = s.along_depth ? first.depth : first.width;
  s.to = s.along_depth ? last.depth : last.width;
  s.octaves = last.fitted_log2_lr - first.fitted_log2_lr;
  for (const auto& [seed, x] : first.seed_optima) {
    const auto it = last.seed_optima.find(seed);
    if (it == last.seed_optima.end()) continue;
    const double d = it->second - x;
    s.seeds_lo = std::fmin(s.seeds_lo, d), s.seeds_hi = std::fmax(s.seeds_hi, d);
  }
  return s;
}

}  // namespace

bool is_sweep(const SweepPanel& panel) {
  return std::any_of(panel.curves.begin(), panel.curves.end(), [](const SweepCurve& c) { return c.points.size() >= 2; });
}

std::vector<SweepPanel> group_sweep(std::span<const std::shared_ptr<const Run>> runs) {
  // param|optimizer -> (width, depth) -> log2 lr -> point
  std::map<std::pair<std::string, std::string>, std::map<std::pair<int64_t, int64_t>, std::map<double, SweepPoint>>> groups;
  for (const auto& rp : runs) {
    const Run& run = *rp;
    if (!(run.lr > 0) || run.width <= 0 || run.param.empty()) continue;
    const double x = std::round(std::log2(run.lr) * 1000) / 1000;  // runs at "the same" rate meet
    SweepPoint& p = groups[{run.param, run.optimizer}][{run.width, run.depth}][x];
    p.log2_lr = x;
    const double l = run.sweep_loss();
    if (!run.error.empty() || (run.finished && !std::isfinite(l))) ++p.diverged;
    else if (!run.finished) ++p.running, p.losses.push_back(l), p.seeds.push_back(run.seed);
    else p.losses.push_back(l), p.seeds.push_back(run.seed);
  }
  std::vector<SweepPanel> panels, sweeps;
  for (auto& [key, widths] : groups) {
    SweepPanel panel{key.first, key.second, {}, {}};
    for (auto& [shape, points] : widths) {
      SweepCurve curve;
      std::tie(curve.width, curve.depth) = shape;
      std::vector<double> xs, ys;
      std::map<uint64_t, std::pair<std::vector<double>, std::vector<double>>> by_seed;
      for (auto& [x, p] : points) {
        double sum = 0;
        int n = 0;
        for (size_t i = 0; i < p.losses.size(); ++i) {
          const double l = p.losses[i];
          if (std::isfinite(l)) sum += l, ++n;
          by_seed[p.seeds[i]].first.push_back(x), by_seed[p.seeds[i]].second.push_back(std::isfinite(l) ? l : kNaN);
        }
        p.loss = n ? sum / n : kNaN;
        curve.points.push_back(p);
        xs.push_back(x), ys.push_back(p.loss);
      }
      const CurveOptimum o = curve_optimum(xs, ys);
      curve.best_log2_lr = o.best_x, curve.best_loss = o.best_y, curve.fitted_log2_lr = o.fitted;
      for (const auto& [seed, xy] : by_seed)
        if (const CurveOptimum s = curve_optimum(xy.first, xy.second); std::isfinite(s.fitted))
          curve.seed_optima[seed] = s.fitted;
      panel.curves.push_back(std::move(curve));
    }
    panel.shift = shift_of(panel.curves);
    (is_sweep(panel) ? sweeps : panels).push_back(std::move(panel));
  }
  // Groups that span learning rates are the sweeps; lone runs (a quickstart beside a sweep)
  // only show when there is no sweep at all.
  return sweeps.empty() ? panels : sweeps;
}

std::vector<plot::PlotFrame> draw_lr_transfer(plot::Canvas& c, plot::Rect r, std::span<const SweepPanel> panels) {
  std::vector<plot::PlotFrame> frames;
  if (panels.empty()) {
    plot::Plot p(c, r, "learning-rate transfer", plot::Range().axis("log2 learning rate"), plot::Range().axis("final loss"));
    p.note("no runs with a parametrisation, a width and a learning rate yet");
    return {p.frame()};
  }
  // One y range for all panels, so parametrisations compare at a glance; each panel its own
  // x range, as their rates live on different scales (u-muP's are near 1). The y range leaves
  // out losses far above the best (diverging rates): those sit on the top edge.
  std::set<std::pair<int64_t, int64_t>> shapes;  // (width, depth) of every curve
  std::set<int64_t> widths, depths;
  double lowest = kNaN;
  for (const auto& panel : panels)
    for (const auto& curve : panel.curves) {
      shapes.insert({curve.width, curve.depth}), widths.insert(curve.width), depths.insert(curve.depth);
      for (const auto& p : curve.points) lowest = std::fmin(lowest, p.loss);
    }
  const double cap = lowest > 0 ? 2.5 * lowest : lowest + 1;
  plot::Range yr;
  for (const auto& panel : panels)
    for (const auto& curve : panel.curves)
      for (const auto& p : curve.points)
        if (p.loss <= cap) yr.add(p.loss);
  const plot::Axis ya = yr.axis("final loss");
  auto shape_color = [&](const SweepCurve& c) {
    const auto it = shapes.find({c.width, c.depth});
    const double i = static_cast<double>(std::distance(shapes.begin(), it));
    return plot::ramp_color(shapes.size() > 1 ? i / (shapes.size() - 1) : 0.0);
  };
  // Name a curve by what varies across the sweep: its width, its depth, or both.
  auto shape_label = [&](const SweepCurve& c) {
    char text[64];
    if (widths.size() == 1 && depths.size() > 1) std::snprintf(text, sizeof text, "depth %lld", static_cast<long long>(c.depth));
    else if (depths.size() > 1) std::snprintf(text, sizeof text, "width %lld depth %lld", static_cast<long long>(c.width), static_cast<long long>(c.depth));
    else std::snprintf(text, sizeof text, "width %lld", static_cast<long long>(c.width));
    return std::string(text);
  };
  const auto cells = split_columns(r, panels.size(), 16);
  for (size_t k = 0; k < panels.size(); ++k) {
    const SweepPanel& panel = panels[k];
    plot::Range xr;
    for (const auto& curve : panel.curves)
      for (const auto& pt : curve.points) xr.add(pt.log2_lr);
    plot::Plot p(c, cells[k], panel.param + "  (" + panel.optimizer + ")", xr.axis("log2 learning rate", 0.08), ya);
    std::vector<plot::LegendEntry> legend;
    for (const auto& curve : panel.curves) {
      const plot::Color col = shape_color(curve);
      std::vector<double> xs, ys;
      for (const auto& pt : curve.points) {
        if (std::isfinite(pt.loss)) xs.push_back(pt.log2_lr), ys.push_back(std::min(pt.loss, ya.hi));
        if (pt.diverged && !std::isfinite(pt.loss)) p.marker(pt.log2_lr, ya.hi, col, plot::Marker::cross, 4);
      }
      p.line(xs, ys, col, 2.f);
      for (const auto& pt : curve.points)
        if (std::isfinite(pt.loss))
          p.marker(pt.log2_lr, std::min(pt.loss, ya.hi), col, pt.running ? plot::Marker::ring : plot::Marker::circle, 3.f);
      if (std::isfinite(curve.best_loss)) {
        p.marker(curve.best_log2_lr, curve.best_loss, col, plot::Marker::ring, 7.f);
        p.vertical_rule(curve.fitted_log2_lr, col.with_alpha(0.6f), plot::Stroke::dotted);
        // Each seed's own optimum, as small crosses at the curve's best loss: the spread.
        for (const auto& [seed, x] : curve.seed_optima) p.marker(x, curve.best_loss, col, plot::Marker::cross, 3.f);
      }
      char label[96];
      std::snprintf(label, sizeof label, "%s  optimum 2^%.2f", shape_label(curve).c_str(), curve.fitted_log2_lr);
      legend.push_back({label, col});
    }
    if (std::isfinite(panel.shift.octaves)) {
      char text[128];
      const int n = std::snprintf(text, sizeof text, "moves %+.2f octave, %s %lld to %lld", panel.shift.octaves,
                                  panel.shift.along_depth ? "depth" : "width", static_cast<long long>(panel.shift.from),
                                  static_cast<long long>(panel.shift.to));
      if (std::isfinite(panel.shift.seeds_lo) && n > 0 && n < static_cast<int>(sizeof text))
        std::snprintf(text + n, sizeof text - n, " (seeds %+.2f..%+.2f)", panel.shift.seeds_lo, panel.shift.seeds_hi);
      legend.push_back({text, plot::theme().muted, plot::LegendEntry::marker});
    }
    p.legend(legend);
    frames.push_back(p.frame());
  }
  return frames;
}

}  // namespace orrery::ui
