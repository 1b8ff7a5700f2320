#include <algorithm>
#include <cmath>
#include <cstdio>

#include "../plot/theme.h"
#include "views.h"

namespace orrery::ui {

std::vector<std::pair<size_t, size_t>> band_pairs(std::span<const double> levels) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < levels.size(); ++i)
    for (size_t j = levels.size(); j-- > i + 1;)
      if (std::fabs(levels[i] + levels[j] - 1) < 1e-6 && levels[i] < 0.5) out.emplace_back(i, j);
  std::sort(out.begin(), out.end(), [&](auto a, auto b) { return levels[a.first] < levels[b.first]; });
  return out;
}

namespace {

// The median row: the level closest to 0.5.
size_t median_row(std::span<const double> levels) {
  size_t best = 0;
  for (size_t i = 1; i < levels.size(); ++i)
    if (std::fabs(levels[i] - 0.5) < std::fabs(levels[best] - 0.5)) best = i;
  return best;
}

std::string percent(double level) { return std::to_string(static_cast<int>(std::lround(level * 100))); }

// At most this many covariate strips under a forecast; the rest are named in the last one's title.
constexpr size_t kCovariateStrips = 3;

// One covariate row as a strip under its target, on the target's time axis: its history, and for
// a known-future row the horizon values the forecast read (in the actual values' colour); a
// past-only row ends at the forecast start, where the model stops reading it.
plot::Axis covariate_axis(const CovariateRow& row) {
  plot::Range yr;
  yr.add_all(row.history), yr.add_all(row.future);
  return yr.axis("");
}

void draw_covariate(plot::Canvas& c, plot::Rect r, const CovariateRow& row, size_t number, size_t hidden,
                    const plot::Range& xr, float left) {
  const plot::Theme& t = plot::theme();
  std::vector<double> x_hist(row.history.size()), x_fut(row.future.size());
  for (size_t i = 0; i < x_hist.size(); ++i) x_hist[i] = static_cast<double>(i) - static_cast<double>(x_hist.size());
  for (size_t i = 0; i < x_fut.size(); ++i) x_fut[i] = static_cast<double>(i);
  std::string title = "covariate " + std::to_string(number) + (row.known_future ? ": known future" : ": past only");
  if (hidden > 0) title += " (+" + std::to_string(hidden) + " more not shown)";
  plot::Plot p(c, r, title, xr.axis("", 0.01), covariate_axis(row), left);
  p.line(x_hist, row.history, t.history, 1.2f);
  if (!row.future.empty()) p.line(x_fut, row.future, t.actual, 1.2f);
  p.vertical_rule(-0.5, t.muted, plot::Stroke::dotted);
}

}  // namespace

plot::Range forecast_y_range(const ForecastSnapshot& snap, size_t index) {
  plot::Range yr;
  if (index >= snap.series.size()) return yr;
  const ForecastSeries& s = snap.series[index];
  yr.add_all(s.history), yr.add_all(s.target);
  for (const auto& q : s.quantiles) yr.add_all(q);
  return yr;
}

plot::PlotFrame draw_forecast(plot::Canvas& c, plot::Rect r, const ForecastSnapshot& snap, size_t index,
                              const std::string& name, bool show_legend, const plot::Range* y_range) {
  const plot::Theme& t = plot::theme();
  // A series' static covariates follow its name: "val/0 (size 400, urban 1)"; a categorical
  // one's 0/1 values ("format=mall" 1, "format=street" 0) as its category, "format=mall".
  std::string title = name;
  if (index < snap.series.size() && !snap.series[index].statics.empty()) {
    std::string values;
    for (const auto& [key, value] : snap.series[index].statics) {
      const bool category = key.find('=') != std::string::npos && (value == 0 || value == 1);
      if (category && value == 0) continue;
      char number[32];
      std::snprintf(number, sizeof number, "%g", value);
      values += (values.empty() ? "" : ", ") + key + (category ? "" : std::string(" ") + number);
    }
    if (!values.empty()) title += " (" + values + ")";
  }
  if (index >= snap.series.size()) {
    plot::Plot p(c, r, title, plot::Range().axis("step"), plot::Range().axis(""));
    p.note("no forecast");
    return p.frame();
  }
  const ForecastSeries& s = snap.series[index];
  // Covariate rows get strips under the target's plot, a third of its height each, as many as
  // leave each strip room for a plot (title, axis and a few lines of data): none in a small cell.
  const float strip_least = 5 * c.text_size("0").y;
  size_t strips = std::min(s.covariates.size(), kCovariateStrips);
  while (strips > 0 && r.h() / static_cast<float>(strips + 3) < strip_least) --strips;
  std::vector<plot::Rect> parts{r};
  if (strips > 0) {
    std::vector<float> weights(strips + 1, 1.f);
    weights[0] = 3.f;
    parts = split_rows(r, weights, 4);
  }
  r = parts[0];
  const double n_hist = static_cast<double>(s.history.size());
  size_t horizon = s.target.size();
  for (const auto& q : s.quantiles) horizon = std::max(horizon, q.size());
  // Time runs from -len(history) to horizon - 1: 0 is the first forecast step.
  std::vector<double> x_hist(s.history.size()), x_fut(horizon);
  for (size_t i = 0; i < x_hist.size(); ++i) x_hist[i] = static_cast<double>(i) - n_hist;
  for (size_t i = 0; i < horizon; ++i) x_fut[i] = static_cast<double>(i);
  plot::Range xr;
  xr.add(x_hist.empty() ? 0.0 : x_hist.front());
  xr.add(static_cast<double>(horizon) - 1);
  const plot::Range yr = y_range ? *y_range : forecast_y_range(snap, index);
  // One room for the y tick labels of the target and its strips, so that they share the time axis.
  const plot::Axis y_axis = yr.axis("value");
  float left = strips > 0 ? plot::Plot::label_room(c, y_axis) : -1.f;
  for (size_t k = 0; k < strips; ++k) left = std::max(left, plot::Plot::label_room(c, covariate_axis(s.covariates[k])));
  plot::Plot p(c, r, title, xr.axis("steps from the forecast start", 0.01), y_axis, left);

  const auto pairs = band_pairs(snap.levels);
  std::vector<plot::LegendEntry> legend;
  // Nested bands, outermost first: each drawn over the last, so the centre is the densest.
  for (const auto& [lo, hi] : pairs) {
    if (hi >= s.quantiles.size()) continue;
    p.band(x_fut, s.quantiles[lo], s.quantiles[hi], t.fan.with_alpha(0.22f));
  }
  if (!pairs.empty() && pairs.front().second < s.quantiles.size())
    legend.push_back({percent(snap.levels[pairs.front().first]) + "-" + percent(snap.levels[pairs.front().second]) +
                          (pairs.size() > 1 ? " ... " + percent(snap.levels[pairs.back().first]) + "-" +
                                                  percent(snap.levels[pairs.back().second])
                                            : ""),
                      t.fan.with_alpha(0.5f), plot::LegendEntry::band});
  p.line(x_hist, s.history, t.history, 1.5f);
  const size_t m = median_row(snap.levels);
  if (m < s.quantiles.size()) {
    p.line(x_fut, s.quantiles[m], t.fan, 2.f);
    legend.push_back({"median", t.fan});
  }
  if (!s.target.empty()) {
    std::vector<double> xt(x_fut.begin(), x_fut.begin() + std::min(s.target.size(), x_fut.size()));
    p.line(xt, s.target, t.actual, 1.5f);
    for (size_t i = 0; i < xt.size() && xt.size() <= 128; ++i) p.marker(xt[i], s.target[i], t.actual, plot::Marker::circle, 2.f);
    legend.push_back({"actual", t.actual});
  }
  p.vertical_rule(-0.5, t.muted, plot::Stroke::dotted);
  if (show_legend) p.legend(legend, /*left=*/true);
  for (size_t k = 0; k < strips; ++k)
    draw_covariate(c, parts[k + 1], s.covariates[k], k + 1, k + 1 == strips ? s.covariates.size() - strips : 0, xr,
                   left);
  return p.frame();
}

std::pair<plot::PlotFrame, plot::PlotFrame> draw_forecast_pair(plot::Canvas& c, plot::Rect r,
                                                               const ForecastSnapshot& left, const ForecastSnapshot& right,
                                                               const std::string& left_title,
                                                               const std::string& right_title, bool legend) {
  plot::Range y = forecast_y_range(left, 0);
  y.add(forecast_y_range(right, 0));
  const auto cells = split_columns(r, 2);
  return {draw_forecast(c, cells[0], left, 0, left_title, legend, &y),
          draw_forecast(c, cells[1], right, 0, right_title, false, &y)};
}

void draw_forecast_grid(plot::Canvas& c, plot::Rect r, const ForecastSnapshot& snap, const std::string& title) {
  const size_t n = std::max<size_t>(snap.series.size(), 1);
  const size_t cols = n <= 1 ? 1 : n <= 4 ? 2 : 3, rows_n = (n + cols - 1) / cols;
  const plot::Vec2 th = c.text_size(title);
  c.text({r.x0, r.y0}, title, plot::theme().text);
  const plot::Rect body{r.x0, r.y0 + th.y + 6, r.x1, r.y1};
  std::vector<float> weights(rows_n, 1.f);
  const auto rows = split_rows(body, weights, 12);
  for (size_t i = 0; i < n; ++i) {
    const auto cells = split_columns(rows[i / cols], cols);
    draw_forecast(c, cells[i % cols], snap, i, i < snap.series.size() ? snap.series[i].name : "", i == 0);
  }
}

}  // namespace orrery::ui
