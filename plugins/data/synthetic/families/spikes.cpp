// Spikes and anomalies on a flat baseline, half each, after TempoPFN's spike and anomaly
// generators: what a model must learn to forecast as "flat, with rare excursions" rather
// than chase.
#include <algorithm>
#include <cmath>

#include "../family.h"

namespace orrery::synth {

namespace {

// Adds brown noise (a random walk: the 1/f^(alpha/2) filter with alpha = 2, amplitude
// falling as 1/f), its linear drift removed, rescaled to standard deviation `sd`.
void add_brown_noise(Rng& rng, std::span<double> y, double sd) {
  const size_t T = y.size();
  if (T < 3) return;
  std::vector<double> walk(T);
  double w = 0;
  for (double& v : walk) v = (w += rng.normal());
  const double slope = (walk.back() - walk.front()) / static_cast<double>(T - 1);
  double mean = 0, var = 0;
  for (size_t t = 0; t < T; ++t) mean += (walk[t] -= slope * static_cast<double>(t)) / static_cast<double>(T);
  for (double v : walk) var += (v - mean) * (v - mean) / static_cast<double>(T);
  const double k = var > 0 ? sd / std::sqrt(var) : 0;
  for (size_t t = 0; t < T; ++t) y[t] += k * (walk[t] - mean);
}

// Spikes shaped like a V (or inverted V: up), with slopes of 70-85 degrees (rise =
// amplitude / tan(angle), kept to 15-50 steps), or "chopped": the same ramps around a
// plateau of 30-50 steps. Spread over the series (4-6) or, 5% of the time, a burst of 2-3
// within 10-25% of it; half the series carry brown noise of sd 2. TempoPFN's widths in steps
// are for 2048 steps; they scale with max(T, 256) / 2048 so spikes stay excursions in a
// shorter series instead of covering it.
void shaped_spikes(Rng& rng, std::span<double> y) {
  const auto T = static_cast<int64_t>(y.size());
  const double stretch = static_cast<double>(std::max<int64_t>(T, 256)) / 2048;
  const double baseline = rng.uniform(-200, 200);
  std::fill(y.begin(), y.end(), baseline);
  const double kind = rng.uniform();  // V only 40%, chopped only 30%, mixed 30%
  const double direction = rng.chance(0.5) ? 1 : -1;
  std::vector<int64_t> centres;
  if (rng.chance(0.05)) {  // burst
    const int64_t span = std::max<int64_t>(1, std::llround(rng.uniform(0.1, 0.25) * T));
    const int64_t start = rng.integer(0, std::max<int64_t>(0, T - span));
    for (int64_t i = rng.integer(2, 3); i > 0; --i) centres.push_back(start + rng.integer(0, span - 1));
  } else {  // spread: evenly, each jittered within its share of the series
    const int64_t n = rng.integer(4, 6);
    for (int64_t i = 0; i < n; ++i)
      centres.push_back(static_cast<int64_t>((static_cast<double>(i) + rng.uniform(0.2, 0.8)) * T / n));
  }
  for (int64_t c : centres) {
    const double amp = rng.uniform(50, 300) * (kind >= 0.7 && rng.chance(0.5) ? -direction : direction);
    const double angle = rng.uniform(70, 85) * M_PI / 180;
    const double rise = stretch * std::clamp(std::fabs(amp) / std::tan(angle), 15.0, 50.0);
    const bool chopped = kind >= 0.4 && (kind < 0.7 || rng.chance(0.5));
    const double plateau = chopped ? stretch * rng.uniform(30, 50) : 0;
    const double lo = static_cast<double>(c) - plateau / 2 - rise;
    const double hi = static_cast<double>(c) + plateau / 2 + rise;
    const int64_t first = std::max<int64_t>(0, static_cast<int64_t>(lo));
    const int64_t last = std::min<int64_t>(T - 1, static_cast<int64_t>(hi));
    for (int64_t t = first; t <= last; ++t) {
      const double u = static_cast<double>(t);
      const double up = std::min({(u - lo) / rise, (hi - u) / rise, 1.0});  // ramp, plateau, ramp
      if (up > 0) y[static_cast<size_t>(t)] += amp * up;
    }
  }
  if (rng.chance(0.5)) add_brown_noise(rng, y, 2);
}

// A constant baseline U(-100, 100) with spikes all in one direction every U{100..300} steps.
// Their size is U(10, 50) varied by an AR(1) (correlation 0.7, innovations 0.2 x base) and 10%
// noise; a quarter of the series cluster 1-3 extra spikes within 10 steps around 30% of the
// events, a quarter add random spikes (30% of the periodic count).
void anomalies(Rng& rng, std::span<double> y) {
  const auto T = static_cast<int64_t>(y.size());
  std::fill(y.begin(), y.end(), rng.uniform(-100, 100));
  const int64_t period = rng.integer(100, 300);
  const double direction = rng.chance(0.5) ? 1 : -1;
  const double base = rng.uniform(10, 50);
  const bool clusters = rng.chance(0.25), random = rng.chance(0.25);
  double deviation = 0;
  auto magnitude = [&] {
    deviation = 0.7 * deviation + rng.normal(0, 0.2 * base);
    return std::max(0.1 * base, (base + deviation) * (1 + 0.1 * rng.normal()));
  };
  auto spike = [&](int64_t t) {
    if (t >= 0 && t < T) y[static_cast<size_t>(t)] += direction * magnitude();
  };
  int64_t events = 0;
  for (int64_t t = rng.integer(0, period - 1); t < T; t += period, ++events) {
    spike(t);
    if (clusters && rng.chance(0.3))
      for (int64_t k = rng.integer(1, 3); k > 0; --k) spike(t + rng.integer(-10, 10));
  }
  if (random)
    for (int64_t k = std::llround(0.3 * static_cast<double>(events)); k > 0; --k) spike(rng.integer(0, T - 1));
}

}  // namespace

void spikes(Rng& rng, std::span<double> y, const Settings&) {
  if (rng.chance(0.5)) shaped_spikes(rng, y);
  else anomalies(rng, y);
}

}  // namespace orrery::synth
