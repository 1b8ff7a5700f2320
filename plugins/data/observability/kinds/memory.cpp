// Memory in use, in bytes: a resident base, a part that follows load, and often a leak that
// grows until the process restarts (at 95% of the limit, as an OOM kill would, or at a
// deploy), or a garbage collector's sawtooth. Kept between 1% and 100% of the limit.
#include <algorithm>
#include <cmath>

#include "../metric.h"

namespace orrery::obs {

void memory(Rng& rng, const Host& h, std::span<double> y) {
  const double limit = rng.log_uniform(1e8, 6.4e10);  // 100 MB to 64 GB
  const double base = limit * rng.uniform(0.1, 0.5);
  const double with_load = limit * rng.uniform(0.02, 0.3) / h.peak_load;
  const double T = static_cast<double>(y.size());
  const double leak = rng.chance(0.4) ? limit * rng.uniform(0.05, 1.0) / T : 0;  // bytes a step
  const double deploy_p = rng.chance(0.5) ? rng.integer(1, 2) / T : 0;
  const bool gc = rng.chance(0.4);
  const double gc_period = rng.log_uniform(5, 200), gc_amp = limit * rng.uniform(0.01, 0.1);
  const double noise = limit * rng.uniform(0.001, 0.01);
  double leaked = 0;
  for (size_t t = 0; t < y.size(); ++t) {
    double v = base + with_load * h.load[t] + leaked + noise * rng.normal();
    if (gc) {  // heap grows until a collection frees it
      const double cycle = static_cast<double>(t) / gc_period;
      v += gc_amp * (cycle - std::floor(cycle));
    }
    leaked += leak;
    if (v > 0.95 * limit || rng.chance(deploy_p)) leaked = 0;  // the process restarts
    y[t] = std::clamp(v, 0.01 * limit, limit);
  }
}

}  // namespace orrery::obs
