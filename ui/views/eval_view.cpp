// The evaluation view: a metric per data set for several models side by side, as ratios to
// seasonal naive on a log axis (a model twice as good and one twice as bad sit equally far
// from the rule at 1).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "../plot/theme.h"
#include "views.h"

namespace orrery::ui {

namespace {

constexpr double kGap = 0.4;          // extra rows of space before the geometric-mean row
constexpr double kMargin = 0.6;       // rows of space above the first row and below the last
constexpr float kMaxPitch = 30;       // pixels a row at most: a short table stays compact
constexpr double kClampLo = 0.01, kClampHi = 100;  // a broken model must not squash the rest

double row_y(const EvalTable& t, size_t row) {
  return row < t.rows.size() ? -static_cast<double>(row) : -(static_cast<double>(t.rows.size()) + kGap);
}

// The model's ratio in a row (the geometric mean for the last row).
double ratio_at(const EvalTable& t, size_t row, size_t model, EvalMetric m) {
  if (row < t.rows.size()) return eval_ratio(t.rows[row].cells[model], m);
  const EvalModelSummary& s = t.models[model].summary;
  return m == EvalMetric::crps ? s.crps : s.mase;
}

const char* metric_name(EvalMetric m) { return m == EvalMetric::crps ? "CRPS" : "MASE"; }

plot::Axis x_axis(const EvalTable& t, EvalMetric m) {
  plot::Range r(true);
  r.add(1.0);  // the rule at 1 is always in view
  for (size_t row = 0; row <= t.rows.size(); ++row)
    for (size_t k = 0; k < t.models.size(); ++k)
      if (const double v = ratio_at(t, row, k, m); v >= kClampLo && v <= kClampHi) r.add(v);
      else if (v > 0) r.add(std::clamp(v, kClampLo, kClampHi));
  char label[96];
  std::snprintf(label, sizeof label, "%s / seasonal naive's %s, log scale (left of 1 is better)", metric_name(m),
                metric_name(m));
  return r.axis(label, 0.06);
}

plot::Axis y_axis(const EvalTable& t) {
  const double n = static_cast<double>(t.rows.size());
  plot::Axis a;
  a.lo = -(n + kGap) - kMargin, a.hi = kMargin;
  for (size_t row = 0; row < t.rows.size(); ++row) a.fixed_ticks.push_back({row_y(t, row), t.rows[row].label});
  a.fixed_ticks.push_back({row_y(t, t.rows.size()), "geometric mean"});
  return a;
}

void draw_marker(plot::Canvas& c, plot::Vec2 p, plot::Color col, plot::Marker m, float radius) {
  switch (m) {
    case plot::Marker::circle: c.circle(p, radius, col, true); break;
    case plot::Marker::ring: c.circle(p, radius, col, false); break;
    case plot::Marker::cross:
      c.line({p.x - radius, p.y - radius}, {p.x + radius, p.y + radius}, col, 1.5f);
      c.line({p.x - radius, p.y + radius}, {p.x + radius, p.y - radius}, col, 1.5f);
      break;
  }
}

std::string format_ratio(double v) {
  if (!std::isfinite(v)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", v);
  return text;
}

// Beside the plot rather than over it: every model with its geometric mean, then the rule.
struct Legend {
  float width = 0;
  static constexpr float kSwatch = 16, kPad = 8;
  Legend(const plot::Canvas& c, const EvalTable& t) {
    float label_w = c.text_size("seasonal naive = 1").x;
    for (const auto& m : t.models) label_w = std::max(label_w, c.text_size(m.label).x);
    width = kPad + kSwatch + kPad + label_w + 2 * kPad + c.text_size("00.000").x + kPad;
  }
  void draw(plot::Canvas& c, const EvalTable& t, EvalMetric metric, float x0, float y0, plot::Color rule) const {
    const plot::Theme& th = plot::theme();
    const float line_h = c.text_size("0").y + 5;
    const float h = line_h * (t.models.size() + 2) + kPad * 1.5f;
    c.fill_rect({x0, y0, x0 + width, y0 + h}, th.legend_background);
    c.rect({x0, y0, x0 + width, y0 + h}, th.grid, 1);
    char head[64];
    std::snprintf(head, sizeof head, "geometric mean of %s ratios", metric_name(metric));
    c.text({x0 + kPad, y0 + kPad / 2 + line_h / 2}, head, th.muted, plot::Align::start, plot::Align::centre);
    for (size_t k = 0; k <= t.models.size(); ++k) {
      const float cy = y0 + kPad / 2 + line_h * (k + 1.5f), sx = x0 + kPad;
      if (k == t.models.size()) {
        c.line({sx, cy}, {sx + kSwatch, cy}, rule, 1.5f, plot::Stroke::dashed);
        c.text({sx + kSwatch + kPad, cy}, "seasonal naive = 1", th.text, plot::Align::start, plot::Align::centre);
        break;
      }
      const EvalModel& m = t.models[k];
      draw_marker(c, {sx + kSwatch / 2, cy}, m.color, m.marker, 4.5f);
      c.text({sx + kSwatch + kPad, cy}, m.label, m.baseline ? th.muted : th.text, plot::Align::start, plot::Align::centre);
      const double v = metric == EvalMetric::crps ? m.summary.crps : m.summary.mase;
      c.text({x0 + width - kPad, cy}, format_ratio(v), th.text, plot::Align::end, plot::Align::centre);
    }
  }
};

}  // namespace

double eval_dot_y(const EvalTable& t, size_t row, size_t model) {
  const size_t m = t.models.size();
  const double step = m > 1 ? std::min(0.5 / static_cast<double>(m - 1), 0.16) : 0.0;
  return row_y(t, row) + ((static_cast<double>(m) - 1) / 2 - static_cast<double>(model)) * step;
}

float eval_view_height(const plot::Canvas& c, const EvalTable& t, float pitch) {
  const float line_h = c.text_size("0").y;
  const float units = static_cast<float>(t.rows.size() + kGap + 2 * kMargin);
  return units * pitch + line_h * 4.4f + 2;  // the plot's title and x axis (plot.cpp)
}

std::optional<plot::Vec2> eval_dot(const EvalTable& t, const plot::PlotFrame& f, size_t row, size_t model, EvalMetric m) {
  const double v = ratio_at(t, row, model, m);
  if (!(v > 0) || !std::isfinite(v)) return std::nullopt;
  return f.to_pixel(std::clamp(v, f.x.lo, f.x.hi), eval_dot_y(t, row, model));
}

std::optional<EvalHit> eval_hit(const EvalTable& t, const plot::PlotFrame& f, plot::Vec2 mouse, EvalMetric m) {
  std::optional<EvalHit> best;
  float best_d = 8;
  for (size_t row = 0; row <= t.rows.size(); ++row)
    for (size_t k = 0; k < t.models.size(); ++k)
      if (const auto p = eval_dot(t, f, row, k, m))
        if (const float d = std::hypot(p->x - mouse.x, p->y - mouse.y); d < best_d) best_d = d, best = EvalHit{row, k};
  return best;
}

std::vector<plot::PlotFrame> draw_eval_view(plot::Canvas& c, plot::Rect r, const EvalTable& t,
                                            const EvalViewOptions& o) {
  const plot::Theme& th = plot::theme();
  char title[160];
  std::snprintf(title, sizeof title, "%s ratio to seasonal naive per data set%s%s%s", metric_name(o.metric),
                t.title.empty() ? "" : " (", t.title.c_str(), t.title.empty() ? "" : ")");
  if (t.models.empty()) {
    plot::Plot p(c, r, title, plot::Range(true).axis("ratio to seasonal naive"), plot::Axis{});
    p.note("no eval.json yet: `orrery eval --model RUN_DIR` writes one into runs/eval");
    return {p.frame()};
  }
  r.y1 = std::min(r.y1, r.y0 + eval_view_height(c, t, kMaxPitch));
  const Legend legend(c, t);
  const plot::Rect area{r.x0, r.y0, std::max(r.x0 + 200, r.x1 - legend.width - 12), r.y1};
  plot::Plot p(c, area, title, x_axis(t, o.metric), y_axis(t));
  const plot::PlotFrame& f = p.frame();
  const size_t n = t.rows.size();

  // The geometric-mean row set apart: a rule above it and a faint band behind it.
  const float pitch = f.area.h() / static_cast<float>(n + kGap + 2 * kMargin);
  const float gy = f.to_pixel(1.0, row_y(t, n)).y;
  c.fill_rect({f.area.x0 + 1, gy - pitch / 2, f.area.x1 - 1, gy + pitch / 2}, th.text.with_alpha(0.07f));
  p.horizontal_rule(row_y(t, n) + (1 + kGap) / 2, th.axis, plot::Stroke::solid);
  const plot::Color rule = th.text.with_alpha(0.75f);
  p.vertical_rule(1.0, rule, plot::Stroke::dashed, 1.5f);

  // Baselines first, so the Orrery models' dots lie on top where they meet.
  const float radius = std::clamp(pitch * 0.2f, 2.5f, 4.5f);
  for (bool baselines : {true, false})
    for (size_t k = 0; k < t.models.size(); ++k) {
      const EvalModel& m = t.models[k];
      if (m.baseline != baselines) continue;
      for (size_t row = 0; row <= n; ++row) {
        const auto dot = eval_dot(t, f, row, k, o.metric);
        if (!dot) continue;
        const plot::Vec2 px = *dot;
        const double v = ratio_at(t, row, k, o.metric);
        // The baselines a size smaller: they are the background the models are read against.
        const float size = (m.baseline ? radius - 1 : radius) + (row == n ? 1 : 0);
        draw_marker(c, px, m.color, m.marker, size);
        // Beyond the axis: a tick pointing off the edge says the dot is not where it sits.
        if (v < f.x.lo) c.line({px.x - radius - 5, px.y}, {px.x - radius, px.y}, m.color, 1.5f);
        if (v > f.x.hi) c.line({px.x + radius, px.y}, {px.x + radius + 5, px.y}, m.color, 1.5f);
      }
    }
  legend.draw(c, t, o.metric, area.x1 + 12, f.area.y0, rule);
  return {f};
}

}  // namespace orrery::ui
