#include "axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace orrery::plot {

namespace {
double to_space(const Axis& a, double v) { return a.log ? std::log10(v) : v; }
}  // namespace

bool Axis::shows(double v) const { return std::isfinite(v) && (!log || v > 0); }

double Axis::fraction(double v) const {
  if (!shows(v)) return std::numeric_limits<double>::quiet_NaN();
  const double lo_s = to_space(*this, lo), hi_s = to_space(*this, hi);
  return hi_s == lo_s ? 0.5 : (to_space(*this, v) - lo_s) / (hi_s - lo_s);
}

double Axis::value_at(double f) const {
  const double lo_s = to_space(*this, lo), hi_s = to_space(*this, hi);
  const double s = lo_s + f * (hi_s - lo_s);
  return log ? std::pow(10.0, s) : s;
}

std::string format_number(double v) {
  if (v == 0) return "0";
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
  char buf[32];
  const double m = std::fabs(v);
  if (m >= 1e5 || m < 1e-3) {
    const int e = static_cast<int>(std::floor(std::log10(m)));
    const double mant = v / std::pow(10.0, e);
    if (std::fabs(std::fabs(mant) - 1) < 1e-9) std::snprintf(buf, sizeof buf, "%s1e%d", v < 0 ? "-" : "", e);
    else std::snprintf(buf, sizeof buf, "%.3ge%d", mant, e);
  } else if (m >= 1e4 && std::fmod(m, 1000) == 0) {
    std::snprintf(buf, sizeof buf, "%.0fk", v / 1000);  // 10k, 250k: steps read well this way
  } else if (m >= 1000) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  }
  return buf;
}

namespace {

// The 1-2-5 step closest to span / target.
double nice_step(double span, int target) {
  const double raw = span / std::max(target, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

std::vector<Tick> linear_ticks(double lo, double hi, int target) {
  std::vector<Tick> out;
  if (!(hi > lo)) return {{lo, format_number(lo)}};
  const double step = nice_step(hi - lo, target);
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1) {
    const double v = std::fabs(k * step) < step * 1e-9 ? 0.0 : k * step;
    out.push_back({v, format_number(v)});
  }
  return out;
}

}  // namespace

std::vector<Tick> ticks(const Axis& a, int target) {
  if (!a.fixed_ticks.empty()) return a.fixed_ticks;
  if (!a.log) return linear_ticks(a.lo, a.hi, target);
  const double e_lo = std::log10(a.lo), e_hi = std::log10(a.hi);
  const int first = static_cast<int>(std::ceil(e_lo - 1e-9)), last = static_cast<int>(std::floor(e_hi + 1e-9));
  const int decades = last - first + 1;
  if (decades < 1 || (decades == 1 && e_hi - e_lo < 0.7)) {
    // Inside one decade: plain steps read better than a single decade mark.
    auto out = linear_ticks(a.lo, a.hi, target);
    std::erase_if(out, [](const Tick& t) { return t.value <= 0; });
    return out;
  }
  std::vector<Tick> out;
  const int every = std::max(1, (decades + target - 1) / target);
  for (int e = first - 1; e <= last; ++e) {
    const double base = std::pow(10.0, e);
    for (int m = 1; m <= 9; ++m) {
      const double v = m * base;
      if (v < a.lo * (1 - 1e-9) || v > a.hi * (1 + 1e-9)) continue;
      const bool labelled = (m == 1 && e % every == 0) || (decades <= 2 && (m == 2 || m == 5));
      out.push_back({v, labelled ? format_number(v) : std::string(), labelled});
    }
  }
  return out;
}

void Range::add(double v) {
  if (!std::isfinite(v) || (log_ && v <= 0)) return;
  if (empty()) lo_ = hi_ = v;
  else lo_ = std::min(lo_, v), hi_ = std::max(hi_, v);
}

Axis Range::axis(std::string label, double pad) const {
  Axis a;
  a.log = log_;
  a.label = std::move(label);
  if (empty()) {
    a.lo = log_ ? 1 : 0, a.hi = log_ ? 10 : 1;
    return a;
  }
  // Within +-kReach, so that hi - lo (which every mapping to pixels takes) stays finite: values
  // beyond it (1e308) are drawn clipped at the edge rather than as NaN.
  constexpr double kReach = 4e307;
  double lo = log_ ? std::log10(lo_) : std::clamp(lo_, -kReach, kReach),
         hi = log_ ? std::log10(hi_) : std::clamp(hi_, -kReach, kReach);
  // One value, or values that differ only in their last digits: a span around it, as wide as the
  // value's own magnitude says (so 1e-40s are not flattened against a span of 1e-3).
  const double size = std::max(std::fabs(lo), std::fabs(hi));
  if (hi - lo <= 1e-12 * size || hi == lo) {
    const double half = log_ ? 0.5 : size > 0 ? size * 0.1 : 1e-3;
    lo -= half, hi += half;
  } else {
    const double m = (hi - lo) * pad;
    lo -= m, hi += m;
  }
  if (!log_) lo = std::max(lo, -kReach * 1.25), hi = std::min(hi, kReach * 1.25);
  a.lo = log_ ? std::pow(10.0, lo) : lo;
  a.hi = log_ ? std::pow(10.0, hi) : hi;
  return a;
}

}  // namespace orrery::plot
