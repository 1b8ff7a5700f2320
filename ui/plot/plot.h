#pragma once
// A 2-D plot on a Canvas: frame, grid, ticks and labels, and data drawn through the axes —
// lines (decimated, broken at gaps), shaded bands, markers, vertical rules and a legend.
// Plots record where they were drawn (PlotFrame) so the dashboard can map the mouse back to
// data and tests can find the pixels of a data point.
#include <span>
#include <string>
#include <vector>

#include "axis.h"
#include "canvas.h"

namespace orrery::plot {

struct PlotFrame {
  std::string id;   // the plot's title, or a caller's name for it
  Rect area;        // the data area in pixels
  Axis x, y;
  Vec2 to_pixel(double x, double y) const;
  double x_at(float px) const;  // data x under a pixel column
};

enum class Marker { circle, ring, cross };

struct LegendEntry {
  std::string label;
  Color color;
  enum Kind { line, dashed, band, marker } kind = line;
};

class Plot {
 public:
  // Lays the plot out in `outer` (title on top, tick labels left and below) and draws the frame.
  // `left` fixes the room for the y tick labels (so stacked plots align); < 0 = as they need.
  Plot(Canvas& canvas, Rect outer, std::string title, Axis x, Axis y, float left = -1);
  // The room the y tick labels of `y` need.
  static float label_room(const Canvas& canvas, const Axis& y);

  const PlotFrame& frame() const { return frame_; }
  Canvas& canvas() { return canvas_; }
  Vec2 to_pixel(double x, double y) const { return frame_.to_pixel(x, y); }

  // y against x (x ascending for decimation to apply). Points an axis cannot show break the line.
  void line(std::span<const double> x, std::span<const double> y, Color c, float thickness = 1.5f,
            Stroke stroke = Stroke::solid);
  // The area between lo and hi over x.
  void band(std::span<const double> x, std::span<const double> lo, std::span<const double> hi, Color c);
  void marker(double x, double y, Color c, Marker m = Marker::circle, float radius = 3.5f);
  void vertical_rule(double x, Color c, Stroke stroke = Stroke::dashed, float thickness = 1.f);
  void horizontal_rule(double y, Color c, Stroke stroke = Stroke::dashed, float thickness = 1.f);
  // A legend box in the top-right corner of the data area (top-left when `left`).
  void legend(std::span<const LegendEntry> entries, bool left = false);
  // A line of grey text centred in the data area (for "no data" and the like).
  void note(const std::string& text);

 private:
  Canvas& canvas_;
  PlotFrame frame_;
};

// Frames of the plots this thread drew since the last clear, in order: read by `--layout` and
// by tests.
std::vector<PlotFrame>& drawn_frames();

}  // namespace orrery::plot
