#include <algorithm>
#include <cmath>
#include <map>
#include <set>

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

bool is_sweep(const SweepPanel& panel) {
  return std::any_of(panel.curves.begin(), panel.curves.end(), [](const SweepCurve& c) { return c.points.size() >= 2; });
}

std::vector<SweepPanel> group_sweep(std::span<const std::shared_ptr<const Run>> runs) {
  // param|optimizer -> width -> log2 lr -> point
  std::map<std::pair<std::string, std::string>, std::map<int64_t, std::map<double, SweepPoint>>> groups;
  for (const auto& rp : runs) {
    const Run& run = *rp;
    if (!(run.lr > 0) || run.width <= 0 || run.param.empty()) continue;
    const double x = std::round(std::log2(run.lr) * 1000) / 1000;  // runs at "the same" rate meet
    SweepPoint& p = groups[{run.param, run.optimizer}][run.width][x];
    p.log2_lr = x;
    const double l = run.latest_loss();
    if (!run.error.empty() || (run.finished && !std::isfinite(l))) ++p.diverged;
    else if (!run.finished) ++p.running, p.losses.push_back(l);
    else p.losses.push_back(l);
  }
  std::vector<SweepPanel> panels, sweeps;
  for (auto& [key, widths] : groups) {
    SweepPanel panel{key.first, key.second, {}};
    for (auto& [width, points] : widths) {
      SweepCurve curve;
      curve.width = width;
      for (auto& [x, p] : points) {
        double sum = 0;
        int n = 0;
        for (double l : p.losses) if (std::isfinite(l)) sum += l, ++n;
        p.loss = n ? sum / n : kNaN;
        curve.points.push_back(p);
        if (std::isfinite(p.loss) && !(p.loss >= curve.best_loss)) curve.best_loss = p.loss, curve.best_log2_lr = x;
      }
      if (std::isfinite(curve.best_loss)) {
        std::vector<double> xs, ys;
        for (const auto& p : curve.points)
          if (std::isfinite(p.loss) && std::fabs(p.log2_lr - curve.best_log2_lr) <= 1) xs.push_back(p.log2_lr), ys.push_back(p.loss);
        curve.fitted_log2_lr = parabola_vertex(xs, ys, curve.best_log2_lr);
      }
      panel.curves.push_back(std::move(curve));
    }
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
  std::set<int64_t> widths;
  double lowest = kNaN;
  for (const auto& panel : panels)
    for (const auto& curve : panel.curves) {
      widths.insert(curve.width);
      for (const auto& p : curve.points) lowest = std::fmin(lowest, p.loss);
    }
  const double cap = lowest > 0 ? 2.5 * lowest : lowest + 1;
  plot::Range yr;
  for (const auto& panel : panels)
    for (const auto& curve : panel.curves)
      for (const auto& p : curve.points)
        if (p.loss <= cap) yr.add(p.loss);
  const plot::Axis ya = yr.axis("final loss");
  auto width_color = [&](int64_t w) {
    const auto it = widths.find(w);
    const double i = static_cast<double>(std::distance(widths.begin(), it));
    return plot::ramp_color(widths.size() > 1 ? i / (widths.size() - 1) : 0.0);
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
      const plot::Color col = width_color(curve.width);
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
      }
      char label[64];
      std::snprintf(label, sizeof label, "width %lld  optimum 2^%.2f", static_cast<long long>(curve.width), curve.fitted_log2_lr);
      legend.push_back({label, col});
    }
    p.legend(legend);
    frames.push_back(p.frame());
  }
  return frames;
}

}  // namespace orrery::ui
