#include <algorithm>
#include <cmath>

#include "../plot/theme.h"
#include "views.h"

namespace orrery::ui {

namespace {

using LayerValues = std::vector<std::vector<double>> CoordCheck::Layer::*;

// One panel per parametrisation: `values` (a layer's RMS or its change since step 0) at step t
// against width (or depth), one line per layer, a shared y range.
std::vector<plot::PlotFrame> draw_layer_panels(plot::Canvas& c, plot::Rect r, const CoordCheck& cc, int64_t t,
                                               LayerValues values, const char* what, const char* short_name) {
  std::vector<plot::PlotFrame> frames;
  // Widths or depths on a log2 scale with their own tick labels; every panel shares the y range.
  plot::Axis xa = [&] {
    plot::Range xr;
    for (auto w : cc.points) xr.add(std::log2(static_cast<double>(w)));
    plot::Axis a = xr.axis(cc.axis.c_str(), 0.08);
    for (auto w : cc.points) a.fixed_ticks.push_back({std::log2(static_cast<double>(w)), std::to_string(w)});
    return a;
  }();
  auto at_t = [&](const CoordCheck::Layer& l) -> const std::vector<double>* {
    const auto& v = l.*values;
    return static_cast<size_t>(t) < v.size() && v[t].size() == cc.points.size() ? &v[t] : nullptr;
  };
  plot::Range yr(true);
  for (const auto& [param, layers] : cc.params)
    for (const auto& l : layers)
      if (const auto* v = at_t(l)) yr.add_all(*v);
  const plot::Axis ya = yr.axis(what);
  const auto cells = split_columns(r, cc.params.size(), 16);
  size_t k = 0;
  for (const auto& [param, layers] : cc.params) {
    // The worst max/min ratio across the axis among the non-readout layers: flat rows mean the
    // parametrisation keeps activations (and their updates) width- (or depth-) independent.
    double worst = 1;
    for (const auto& l : layers) {
      const auto* v = at_t(l);
      if (l.readout || !v) continue;
      const auto [lo, hi] = std::minmax_element(v->begin(), v->end());
      if (lo != v->end() && *lo > 0) worst = std::max(worst, *hi / *lo);
    }
    char title[160];
    std::snprintf(title, sizeof title, "%s, step %lld: %s max/min %.2f", param.c_str(), static_cast<long long>(t),
                  short_name, worst);
    plot::Plot p(c, cells[k++], title, xa, ya);
    std::vector<plot::LegendEntry> legend;
    std::vector<double> xs;
    for (auto w : cc.points) xs.push_back(std::log2(static_cast<double>(w)));
    for (size_t i = 0; i < layers.size(); ++i) {
      const auto& l = layers[i];
      const auto* v = at_t(l);
      if (!v) continue;
      const plot::Color col = plot::run_color(i);
      p.line(xs, *v, col, 1.5f, l.readout ? plot::Stroke::dashed : plot::Stroke::solid);
      for (size_t j = 0; j < xs.size(); ++j) p.marker(xs[j], (*v)[j], col, plot::Marker::circle, 2.5f);
      if (layers.size() <= 14) legend.push_back({l.name, col, l.readout ? plot::LegendEntry::dashed : plot::LegendEntry::line});
    }
    p.legend(legend);
    frames.push_back(p.frame());
  }
  return frames;
}

}  // namespace

std::vector<plot::PlotFrame> draw_coord_check(plot::Canvas& c, plot::Rect r, const CoordCheck& cc, int64_t t) {
  if (cc.params.empty() || cc.points.empty()) {
    plot::Plot p(c, r, "coordinate check", plot::Range().axis("width"), plot::Range(true).axis("activation RMS"));
    p.note("no coordinate check results");
    return {p.frame()};
  }
  t = std::clamp<int64_t>(t, 0, cc.steps);
  // After step 0, and when the file has them, each layer's change since step 0 below its RMS.
  bool changes = false;
  for (const auto& [param, layers] : cc.params)
    for (const auto& l : layers)
      changes |= static_cast<size_t>(t) < l.change.size() && l.change[t].size() == cc.points.size();
  if (t == 0 || !changes) return draw_layer_panels(c, r, cc, t, &CoordCheck::Layer::rms, "activation RMS", "RMS");
  const float weights[] = {1.f, 1.f};
  const auto rows = split_rows(r, weights, 10);
  auto frames = draw_layer_panels(c, rows[0], cc, t, &CoordCheck::Layer::rms, "activation RMS", "RMS");
  for (auto& f : draw_layer_panels(c, rows[1], cc, t, &CoordCheck::Layer::change, "change since step 0", "change"))
    frames.push_back(f);
  return frames;
}

std::vector<plot::PlotFrame> draw_optimizer_view(plot::Canvas& c, plot::Rect r, std::span<const StyledRun> runs, bool log_y) {
  // Stacked, or side by side in a wide strip.
  const float weights[] = {1.f, 1.f};
  const auto rows = r.w() > 2.2f * r.h() ? split_columns(r, 2, 16) : split_rows(r, weights, 10);
  plot::Range xr, ur(log_y), gr(log_y);
  bool any = false;
  for (const auto& s : runs) {
    for (const auto& [group, curve] : s.run->update_rms) xr.add_all(curve.x), ur.add_all(curve.y), any = true;
    xr.add_all(s.run->grad_norm.x), gr.add_all(s.run->grad_norm.y);
  }
  const plot::Axis xa = xr.axis("step", 0.01), ua = ur.axis("RMS of the step's update"), ga = gr.axis("global L2 norm");
  const float left = std::max(plot::Plot::label_room(c, ua), plot::Plot::label_room(c, ga));  // aligned when stacked
  plot::Plot up(c, rows[0], "update RMS per optimizer group", xa, ua, left);
  std::vector<plot::LegendEntry> legend;
  const plot::Stroke strokes[] = {plot::Stroke::solid, plot::Stroke::dashed, plot::Stroke::dotted};
  for (const auto& s : runs) {
    size_t g = 0;
    for (const auto& [group, curve] : s.run->update_rms) {
      up.line(curve.x, curve.y, s.color, 1.5f, strokes[g % 3]);
      if (legend.size() < 12)
        legend.push_back({s.run->name + "  " + group, s.color, g % 3 ? plot::LegendEntry::dashed : plot::LegendEntry::line});
      ++g;
    }
  }
  if (!any) up.note(runs.empty() ? "no runs selected" : "the selected runs recorded no update RMS");
  up.legend(legend);
  plot::Plot gn(c, rows[1], "gradient norm (before clipping)", xa, ga, left);
  for (const auto& s : runs) gn.line(s.run->grad_norm.x, s.run->grad_norm.y, s.color, 1.5f);
  return {up.frame(), gn.frame()};
}

}  // namespace orrery::ui
