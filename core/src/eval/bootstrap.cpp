#include "orrery/host/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace orrery::bootstrap {

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return NAN;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t i = static_cast<size_t>(pos);
  return i + 1 < sorted.size() ? sorted[i] + (pos - static_cast<double>(i)) * (sorted[i + 1] - sorted[i]) : sorted[i];
}

Draws resample(size_t n, const Statistic& statistic, size_t resamples, uint64_t seed, double level) {
  if (n == 0) throw std::invalid_argument("bootstrap: nothing to resample (n = 0)");
  // The generator's draws carry 15 bits: more units would leave some never drawn.
  if (n > kMaxUnits)
    throw std::invalid_argument("bootstrap: at most " + std::to_string(kMaxUnits) + " units, got " + std::to_string(n));
  if (!(level > 0 && level < 1)) throw std::invalid_argument("bootstrap: level must be in (0, 1)");
  Draws d;
  uint64_t state = seed % 2147483648u;
  std::vector<size_t> picks(n);
  for (size_t b = 0; b < resamples; ++b) {
    for (size_t& p : picks) {
      state = (1103515245 * state + 12345) % 2147483648u;
      p = static_cast<size_t>((state >> 16) % n);  // the high bits: an LCG's low bits cycle fast
    }
    // A resample whose statistic is undefined (nullopt, NaN or infinite) says nothing: skipped.
    if (const auto v = statistic(picks); v && std::isfinite(*v)) d.values.push_back(*v);
    else ++d.skipped;
  }
  std::sort(d.values.begin(), d.values.end());
  // The tails as written (0.05, not the 0.04999999999999999 that (1 - 0.9) / 2 rounds to).
  const auto tail = [](double q) { return std::nearbyint(q * 1e12) / 1e12; };
  d.lo = quantile(d.values, tail((1 - level) / 2));
  d.hi = quantile(d.values, tail((1 + level) / 2));
  return d;
}

}  // namespace orrery::bootstrap
