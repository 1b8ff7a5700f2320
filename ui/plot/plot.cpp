#include "plot.h"

#include <algorithm>
#include <cmath>

#include "theme.h"

namespace orrery::plot {

Vec2 PlotFrame::to_pixel(double xv, double yv) const {
  return {static_cast<float>(area.x0 + x.fraction(xv) * area.w()),
          static_cast<float>(area.y1 - y.fraction(yv) * area.h())};
}

double PlotFrame::x_at(float px) const { return x.value_at((px - area.x0) / std::max(area.w(), 1.f)); }

std::vector<PlotFrame>& drawn_frames() {
  thread_local std::vector<PlotFrame> frames;  // per thread: orrery.plot may run beside the window
  return frames;
}

float Plot::label_room(const Canvas& canvas, const Axis& y) {
  float w = 0;
  for (const auto& tk : ticks(y)) w = std::max(w, canvas.text_size(tk.label).x);
  return w + 10;
}

Plot::Plot(Canvas& canvas, Rect outer, std::string title, Axis x, Axis y, float left) : canvas_(canvas) {
  const Theme& t = theme();
  const float line_h = canvas.text_size("0").y;
  auto y_ticks = ticks(y), x_ticks = ticks(x, std::max(3, static_cast<int>(outer.w() / 90)));
  if (left < 0) left = label_room(canvas, y);
  // Title line (with the y label on the left of it), tick labels left, x ticks and label below.
  const float top = line_h * 1.6f, bottom = line_h * (x.label.empty() ? 1.6f : 2.8f);
  frame_ = {title, outer.inset(left, top, 8, bottom), std::move(x), std::move(y)};
  const Rect& a = frame_.area;

  canvas.fill_rect(a, t.plot_area);
  // The y label at the top left, the title centred over the data area; when they would
  // collide the title moves right, and in a very narrow plot the y label gives way.
  const float label_end = outer.x0 + 2 + canvas.text_size(frame_.y.label).x + 12;
  const float title_w = canvas.text_size(title).x;
  float title_x = (a.x0 + a.x1) / 2 - title_w / 2;
  if (title_x < label_end) title_x = std::max(label_end, a.x1 - title_w);
  if (title_x + title_w <= a.x1 + 4 || title.empty()) canvas.text({outer.x0 + 2, outer.y0 + 2}, frame_.y.label, t.muted);
  else title_x = std::max(outer.x0 + 2, (a.x0 + a.x1) / 2 - title_w / 2);
  canvas.text({title_x, outer.y0 + 2}, title, t.text);
  for (const auto& tk : y_ticks) {
    const float py = to_pixel(frame_.x.lo, tk.value).y;
    if (!(py >= a.y0 - 0.5f && py <= a.y1 + 0.5f)) continue;
    canvas.line({a.x0, py}, {a.x1, py}, tk.major ? t.grid : t.grid.with_alpha(0.04f));
    if (!tk.label.empty()) canvas.text({a.x0 - 5, py}, tk.label, t.muted, Align::end, Align::centre);
  }
  for (const auto& tk : x_ticks) {
    const float px = to_pixel(tk.value, frame_.y.lo).x;
    if (!(px >= a.x0 - 0.5f && px <= a.x1 + 0.5f)) continue;
    canvas.line({px, a.y0}, {px, a.y1}, tk.major ? t.grid : t.grid.with_alpha(0.04f));
    if (!tk.label.empty()) canvas.text({px, a.y1 + 4}, tk.label, t.muted, Align::centre);
  }
  if (!frame_.x.label.empty())
    canvas.text({(a.x0 + a.x1) / 2, a.y1 + 4 + line_h * 1.2f}, frame_.x.label, t.muted, Align::centre);
  canvas.rect(a, t.axis.with_alpha(0.5f), 1);
  drawn_frames().push_back(frame_);
}

void Plot::line(std::span<const double> x, std::span<const double> y, Color c, float thickness,
                Stroke stroke) {
  const size_t n = std::min(x.size(), y.size());
  const Rect& a = frame_.area;
  // More points than pixel columns: keep each column's first, lowest, highest and last point,
  // in order, so spikes survive and the shape is exact at the pixel level.
  const bool decimate = stroke == Stroke::solid && n > 2 * static_cast<size_t>(std::max(a.w(), 1.f));
  std::vector<Vec2> run;
  canvas_.push_clip(a);
  auto flush = [&] {
    if (run.size() >= 2) canvas_.polyline(run, c, thickness, stroke);
    else if (run.size() == 1) canvas_.circle(run[0], thickness, c, true);
    run.clear();
  };
  int column = -1;
  Vec2 first{}, lowest{}, highest{}, last{};
  auto emit_column = [&] {
    if (column < 0) return;
    const Vec2 mid[2] = {lowest.y > highest.y ? highest : lowest, lowest.y > highest.y ? lowest : highest};
    // keep time order of the extremes roughly: first, extremes, last
    run.push_back(first);
    for (const Vec2& p : mid) if (p.x != first.x || p.y != first.y) run.push_back(p);
    if (last.x != run.back().x || last.y != run.back().y) run.push_back(last);
    column = -1;
  };
  for (size_t i = 0; i < n; ++i) {
    if (!frame_.x.shows(x[i]) || !frame_.y.shows(y[i])) {
      emit_column();
      flush();
      continue;
    }
    const Vec2 p = to_pixel(x[i], y[i]);
    if (!decimate) {
      run.push_back(p);
      continue;
    }
    const int col = static_cast<int>(std::floor(p.x));
    if (col != column) {
      emit_column();
      column = col, first = lowest = highest = last = p;
    } else {
      last = p;
      if (p.y > lowest.y) lowest = p;
      if (p.y < highest.y) highest = p;
    }
  }
  emit_column();
  flush();
  canvas_.pop_clip();
}

void Plot::band(std::span<const double> x, std::span<const double> lo, std::span<const double> hi, Color c) {
  const size_t n = std::min({x.size(), lo.size(), hi.size()});
  std::vector<Vec2> upper, lower;
  canvas_.push_clip(frame_.area);
  auto flush = [&] {
    if (upper.size() >= 2) canvas_.band(upper, lower, c);
    upper.clear(), lower.clear();
  };
  for (size_t i = 0; i < n; ++i) {
    if (!frame_.x.shows(x[i]) || !frame_.y.shows(lo[i]) || !frame_.y.shows(hi[i])) {
      flush();
      continue;
    }
    Vec2 a = to_pixel(x[i], lo[i]), b = to_pixel(x[i], hi[i]);
    if (a.y < b.y) std::swap(a, b);  // a crossing pair still shades the space between them
    upper.push_back(b), lower.push_back(a);
  }
  flush();
  canvas_.pop_clip();
}

void Plot::marker(double x, double y, Color c, Marker m, float radius) {
  if (!frame_.x.shows(x) || !frame_.y.shows(y)) return;
  const Vec2 p = to_pixel(x, y);
  if (!frame_.area.inset(-radius, -radius, -radius, -radius).contains(p)) return;
  switch (m) {
    case Marker::circle: canvas_.circle(p, radius, c, true); break;
    case Marker::ring: canvas_.circle(p, radius, c, false); break;
    case Marker::cross:
      canvas_.line({p.x - radius, p.y - radius}, {p.x + radius, p.y + radius}, c, 1.5f);
      canvas_.line({p.x - radius, p.y + radius}, {p.x + radius, p.y - radius}, c, 1.5f);
      break;
  }
}

void Plot::vertical_rule(double x, Color c, Stroke stroke, float thickness) {
  if (!frame_.x.shows(x)) return;
  const float px = to_pixel(x, frame_.y.lo).x;
  if (px < frame_.area.x0 || px > frame_.area.x1) return;
  canvas_.line({px, frame_.area.y0}, {px, frame_.area.y1}, c, thickness, stroke);
}

void Plot::horizontal_rule(double y, Color c, Stroke stroke, float thickness) {
  if (!frame_.y.shows(y)) return;
  const float py = to_pixel(frame_.x.lo, y).y;
  if (py < frame_.area.y0 || py > frame_.area.y1) return;
  canvas_.line({frame_.area.x0, py}, {frame_.area.x1, py}, c, thickness, stroke);
}

void Plot::legend(std::span<const LegendEntry> entries, bool left) {
  if (entries.empty()) return;
  const Theme& t = theme();
  const float line_h = canvas_.text_size("0").y + 3, swatch = 18, pad = 6;
  float w = 0;
  for (const auto& e : entries) w = std::max(w, canvas_.text_size(e.label).x);
  w += swatch + 3 * pad;
  const float h = line_h * entries.size() + pad * 1.5f;
  const Rect& a = frame_.area;
  const float x0 = left ? a.x0 + 8 : a.x1 - 8 - w, y0 = a.y0 + 8;
  const Rect box{x0, y0, x0 + w, y0 + h};
  canvas_.fill_rect(box, t.legend_background);
  canvas_.rect(box, t.grid, 1);
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    const float cy = y0 + pad + line_h * (i + 0.5f), sx = x0 + pad;
    switch (e.kind) {
      case LegendEntry::line: canvas_.line({sx, cy}, {sx + swatch, cy}, e.color, 2); break;
      case LegendEntry::dashed: canvas_.line({sx, cy}, {sx + swatch, cy}, e.color, 2, Stroke::dashed); break;
      case LegendEntry::band: canvas_.fill_rect({sx, cy - 5, sx + swatch, cy + 5}, e.color); break;
      case LegendEntry::marker: canvas_.circle({sx + swatch / 2, cy}, 3.5f, e.color, true); break;
    }
    canvas_.text({sx + swatch + pad, cy}, e.label, t.text, Align::start, Align::centre);
  }
}

void Plot::note(const std::string& text) {
  const Rect& a = frame_.area;
  canvas_.text({(a.x0 + a.x1) / 2, (a.y0 + a.y1) / 2}, text, theme().muted, Align::centre, Align::centre);
}

}  // namespace orrery::plot
