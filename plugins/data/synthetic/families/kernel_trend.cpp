// The "kernel_trend" family: a KernelSynth path on a non-zero mean function, as CauKer (2025)
// draws its root nodes: linear, quadratic, exponential, logistic or a random walk, with an
// amplitude (its rise over the series) from one to ten times the path's spread. KernelSynth's zero-mean paths
// rarely trend across a whole series; real yearly and quarterly series mostly do.
#include <cmath>

#include "../family.h"

namespace orrery::synth {

void kernel_trend(Rng& rng, std::span<double> y, const Settings& s) {
  kernel_synth(rng, y, s);
  const size_t T = y.size();
  double mean = 0, sq = 0;
  for (double v : y) mean += v / static_cast<double>(T), sq += v * v / static_cast<double>(T);
  const double spread = std::sqrt(std::max(sq - mean * mean, 1e-12));
  const double amplitude = spread * rng.log_uniform(1, 10) * (rng.chance(0.5) ? 1 : -1);
  const int kind = static_cast<int>(rng.integer(0, 4));
  const double rate = rng.uniform(-3, 3), centre = rng.uniform(0.2, 0.8), steep = rng.log_uniform(4, 30);
  const double curve = rng.uniform(-1, 1);
  double walk = 0;
  const double step_sd = 1 / std::sqrt(static_cast<double>(std::max<size_t>(T, 1)));
  for (size_t t = 0; t < T; ++t) {
    const double x = T > 1 ? static_cast<double>(t) / static_cast<double>(T - 1) : 0;  // in [0, 1]
    double m = 0;
    switch (kind) {
      case 0: m = x; break;                                                        // linear
      case 1: m = curve * x * x + (1 - curve) * x; break;                          // quadratic, m(1) = 1
      case 2: m = std::fabs(rate) < 1e-3 ? x : std::expm1(rate * x) / std::expm1(rate); break;  // exponential, m(1) = 1
      case 3: m = 1 / (1 + std::exp(-steep * (x - centre))); break;                // logistic
      default: m = walk += step_sd * rng.normal(); break;                           // random walk
    }
    y[t] += amplitude * m;
  }
}

}  // namespace orrery::synth
