// The Scaling tab: held-out loss against parameters with the fitted L(N) and its bootstrap band,
// the held-out largest size marked with the law fitted without it; and every budget against
// compute with the joint law L(N, D) along each size's budgets.
#include <algorithm>
#include <cmath>

#include "../plot/theme.h"
#include "views.h"

namespace orrery::ui {

namespace {

// n points spread evenly in log space over [lo, hi].
std::vector<double> log_grid(double lo, double hi, int n = 80) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(lo * std::pow(hi / lo, i / static_cast<double>(n - 1)));
  return out;
}

// The 5% and 95% of the bootstrap laws' predictions at each x.
void band_of(const ScalingLaw& law, const std::vector<double>& n, const std::vector<double>& d, std::vector<double>& lo,
             std::vector<double>& hi) {
  lo.assign(n.size(), kNaN), hi.assign(n.size(), kNaN);
  if (law.bootstrap.size() < 10) return;
  std::vector<double> at(law.bootstrap.size());
  for (size_t i = 0; i < n.size(); ++i) {
    for (size_t b = 0; b < law.bootstrap.size(); ++b) at[b] = ScalingLaw::predict(law.bootstrap[b], n[i], d[i]);
    std::sort(at.begin(), at.end());
    lo[i] = at[static_cast<size_t>(0.05 * static_cast<double>(at.size() - 1))];
    hi[i] = at[static_cast<size_t>(std::ceil(0.95 * static_cast<double>(at.size() - 1)))];
  }
}

}  // namespace

std::vector<plot::PlotFrame> draw_scaling_view(plot::Canvas& c, plot::Rect r, const ScalingStudy& s) {
  const auto cols = split_columns(r, 2, 18);
  // Each size's full budget: its largest.
  std::vector<const ScalingPoint*> full;
  for (const auto& size : s.sizes) {
    const ScalingPoint* top = nullptr;
    for (const auto& p : s.points)
      if (p.run == size && (!top || p.budget > top->budget)) top = &p;
    if (top) full.push_back(top);
  }
  plot::Range nr(true), lr(true), cr(true);
  for (const auto& p : s.points) nr.add(p.params), lr.add(p.loss), cr.add(6 * p.params * p.tokens);
  const plot::Axis ya = lr.axis("held-out loss", 0.08);
  const float left = plot::Plot::label_room(c, ya);
  auto size_color = [&](const std::string& run) {
    const auto it = std::find(s.sizes.begin(), s.sizes.end(), run);
    const double t = s.sizes.size() > 1 ? static_cast<double>(it - s.sizes.begin()) / (s.sizes.size() - 1) : 0.0;
    return plot::ramp_color(t);
  };

  char title[256];
  std::snprintf(title, sizeof title, "L(N) = %.3g + %.3g N^-%.3f, alpha in [%.3f, %.3f]", s.size.E, s.size.A,
                s.size.alpha, s.size.alpha_lo, s.size.alpha_hi);
  plot::Plot by_n(c, cols[0], title, nr.axis("parameters N", 0.1), ya, left);
  if (!full.empty()) {
    const std::vector<double> n = log_grid(by_n.frame().x.lo, by_n.frame().x.hi);
    const std::vector<double> no_d(n.size(), kNaN);
    std::vector<double> lo, hi, fit(n.size()), held(n.size(), kNaN);
    band_of(s.size, n, no_d, lo, hi);
    for (size_t i = 0; i < n.size(); ++i) {
      fit[i] = s.size.predict(n[i], kNaN);
      if (!s.size.holdout.empty()) held[i] = ScalingLaw::predict(s.size.holdout[0], n[i], kNaN);
    }
    by_n.band(n, lo, hi, plot::theme().fan.with_alpha(0.22f));
    by_n.line(n, fit, plot::theme().fan, 1.8f);
    by_n.line(n, held, plot::theme().muted, 1.2f, plot::Stroke::dashed);
  }
  for (const auto& p : s.points)
    if (std::none_of(full.begin(), full.end(), [&](const ScalingPoint* f) { return f == &p; }))
      by_n.marker(p.params, p.loss, size_color(p.run).with_alpha(0.45f), plot::Marker::circle, 2.5f);
  for (size_t i = 0; i < full.size(); ++i) {
    const bool held_out = i + 1 == full.size() && !s.size.holdout.empty();
    by_n.marker(full[i]->params, full[i]->loss, size_color(full[i]->run), held_out ? plot::Marker::ring : plot::Marker::circle,
                held_out ? 6.f : 4.f);
  }
  std::vector<plot::LegendEntry> legend = {{"full budget (shorter: faint)", plot::theme().text, plot::LegendEntry::marker},
                                           {"L(N) fit", plot::theme().fan, plot::LegendEntry::line},
                                           {"90% bootstrap band", plot::theme().fan.with_alpha(0.4f), plot::LegendEntry::band}};
  if (!s.size.holdout.empty()) {
    char held[160];
    std::snprintf(held, sizeof held, "fit without %s (ring): %.2f%% off", s.sizes.empty() ? "largest" : s.sizes.back().c_str(),
                  100 * s.size.holdout_error);
    legend.push_back({held, plot::theme().muted, plot::LegendEntry::dashed});
  }
  if (s.points.empty()) by_n.note("no points yet");
  by_n.legend(legend);

  std::snprintf(title, sizeof title, "L(N, D): alpha %.3f [%.3f, %.3f], beta %.3f [%.3f, %.3f]", s.joint.alpha,
                s.joint.alpha_lo, s.joint.alpha_hi, s.joint.beta, s.joint.beta_lo, s.joint.beta_hi);
  plot::Plot by_c(c, cols[1], title, cr.axis("compute 6 N D (D: training points)", 0.1), ya, left);
  std::vector<plot::LegendEntry> sizes;
  for (const auto& size : s.sizes) {
    double n = kNaN, dlo = kNaN, dhi = kNaN;
    for (const auto& p : s.points)
      if (p.run == size) {
        n = p.params;
        dlo = std::isfinite(dlo) ? std::min(dlo, p.tokens) : p.tokens;
        dhi = std::isfinite(dhi) ? std::max(dhi, p.tokens) : p.tokens;
        by_c.marker(6 * p.params * p.tokens, p.loss, size_color(size), plot::Marker::circle, 3.5f);
      }
    if (std::isfinite(s.joint.alpha) && std::isfinite(n) && dhi > dlo) {
      const std::vector<double> d = log_grid(dlo / 1.5, dhi * 1.5, 40);
      std::vector<double> x, y;
      for (double v : d) x.push_back(6 * n * v), y.push_back(s.joint.predict(n, v));
      by_c.line(x, y, size_color(size), 1.3f);
    }
    if (sizes.size() < 10) sizes.push_back({size, size_color(size), plot::LegendEntry::line});
  }
  by_c.legend(sizes);
  return {by_n.frame(), by_c.frame()};
}

}  // namespace orrery::ui
