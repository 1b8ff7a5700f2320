#pragma once
// One axis of a plot: its data range, linear or log10 scale, and the ticks a reader needs.
#include <string>
#include <vector>

namespace orrery::plot {

struct Tick {
  double value;
  std::string label;
  bool major = true;  // minor ticks get a grid line but no label
};

struct Axis {
  double lo = 0, hi = 1;  // data units; on a log axis both are > 0
  bool log = false;
  std::string label;
  std::vector<Tick> fixed_ticks;  // when given, these instead of computed ones

  // Position of v along the axis in [0, 1] (outside for values out of range; NaN for values a
  // log axis cannot show).
  double fraction(double v) const;
  double value_at(double fraction) const;
  bool shows(double v) const;  // finite, and positive on a log axis
};

// About `target` well-spaced ticks: 1-2-5 steps on a linear axis; decades (with 2 and 5 when
// the range is short) on a log axis, falling back to linear steps inside a single decade.
std::vector<Tick> ticks(const Axis& a, int target = 6);

// A compact label: 3 significant digits, exponent form only for very large or small values.
std::string format_number(double v);

// The range of the data an axis must show, with a margin; grows as values are added.
class Range {
 public:
  explicit Range(bool log = false) : log_(log) {}
  void add(double v);
  template <class C> void add_all(const C& values) { for (double v : values) add(v); }
  void add(const Range& other) { if (!other.empty()) add(other.lo_), add(other.hi_); }
  bool empty() const { return !(lo_ <= hi_); }
  // The axis over the range plus `pad` of its span on each side (in log space on a log axis);
  // a default span around a single value, and [0, 1] (or [1, 10]) when empty.
  Axis axis(std::string label, double pad = 0.04) const;
 private:
  bool log_;
  double lo_ = 1, hi_ = 0;
};

}  // namespace orrery::plot
