// Utilisation in percent: CPU following the host's load (75%) or a disk filling up and being
// cleaned (25%). Both are clipped to [0, 100]: a saturated CPU reads 100 however much work
// waits, which is what makes these series flat-topped at peak hours.
#include <algorithm>
#include <cmath>

#include "../metric.h"

namespace orrery::obs {

namespace {

void cpu(Rng& rng, const Host& h, std::span<double> y) {
  const double beta = rng.uniform(0.6, 1.3);  // how steeply CPU follows load
  const double idle = rng.uniform(0.5, 10);
  const double peak = rng.uniform(15, 140);   // above 100: saturated at the busiest hours
  const double scale = (peak - idle) / std::pow(h.peak_load, beta);
  const double noise = rng.uniform(0.3, 4);
  for (size_t t = 0; t < y.size(); ++t) y[t] = idle + scale * std::pow(h.load[t], beta) + noise * rng.normal();
}

// A disk fills at a rate proportional to load (0-30 points a day at load 1) and is cleaned
// back to 5-50% when a cleanup runs (at a threshold, or at random), else it sits at 100%.
void disk(Rng& rng, const Host& h, std::span<double> y) {
  double level = rng.uniform(5, 80);
  const double fill = rng.uniform(0, 30) / h.steps_per_day;
  const double threshold = rng.chance(0.5) ? rng.uniform(70, 99) : 1e9;  // no automatic cleanup
  const double cleanup_p = rng.chance(0.5) ? rng.log_uniform(1e-4, 1e-2) : 0;
  for (size_t t = 0; t < y.size(); ++t) {
    level += fill * h.load[t] * std::exp(0.3 * rng.normal());
    if (level >= threshold || rng.chance(cleanup_p)) level = rng.uniform(5, 50);
    y[t] = level + 0.05 * rng.normal();
  }
}

}  // namespace

void utilisation(Rng& rng, const Host& h, std::span<double> y) {
  if (rng.chance(0.75)) cpu(rng, h, y);
  else disk(rng, h, y);
  const bool rounded = rng.chance(0.5);  // many agents report whole or tenth percents
  const double step = rng.chance(0.5) ? 1 : 0.1;
  for (double& v : y) {
    if (rounded) v = std::round(v / step) * step;
    v = std::clamp(v, 0.0, 100.0);
  }
}

}  // namespace orrery::obs
