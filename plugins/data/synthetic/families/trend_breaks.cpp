// The "trend_breaks" family: trends that do not go on as they were. Real yearly and quarterly
// series (population, production, prices) mostly trend, and their slopes change: growth fades,
// stops, turns. A prior whose trends always continue (a linear, quadratic or exponential mean
// across the whole series) teaches a model to carry the last years' slope as far as it
// forecasts; this family shows it slopes that fade (damped, as ETS's Ad trend: phi per step) and
// break at random times, to nothing, to their reverse or to a fifth to twice themselves, on low noise
// so the trend is what the series shows. Breaks fall anywhere, the forecast region included.
#include <cmath>

#include "state_space.h"

namespace orrery::synth {

void trend_breaks(Rng& rng, std::span<double> y, const Settings& s) {
  const int64_t T = static_cast<int64_t>(y.size());
  // Expected breaks per series (none for a third), and each segment's damping.
  const double breaks = rng.chance(1.0 / 3) ? 0 : rng.log_uniform(0.5, 4);
  const auto draw_phi = [&] { return rng.chance(0.4) ? 1.0 : rng.uniform(0.9, 0.995); };
  double slope = rng.chance(0.5) ? 1 : -1, phi = draw_phi();
  // Noise: AR(1) with a standard deviation of 0.1 to 4 steps' initial drift; a season on 40%.
  const double sd = rng.log_uniform(0.1, 4), ar = rng.uniform(0, 0.9);
  int64_t period = draw_period(rng, s, 0.6);
  if (2 * period > T) period = 1;  // a season needs two cycles to be seen
  const double amplitude = period > 1 ? rng.log_uniform(0.5, 10) : 0, phase = rng.uniform(0, 2 * M_PI);
  double level = 0, noise = 0;
  for (int64_t t = 0; t < T; ++t) {
    if (breaks > 0 && rng.chance(breaks / static_cast<double>(T))) {
      // From a flat stretch a trend starts again, at the first slope's size either way.
      const double from = std::fabs(slope) > 1e-3 ? slope : (rng.chance(0.5) ? 1 : -1);
      const double kind = rng.uniform();
      slope = kind < 0.25 ? 0 : kind < 0.45 ? -from * rng.uniform(0.2, 1) : from * rng.log_uniform(0.2, 2);
      phi = draw_phi();
    }
    level += slope;
    slope *= phi;
    noise = ar * noise + sd * std::sqrt(1 - ar * ar) * rng.normal();
    const double season = amplitude * std::sin(2 * M_PI * static_cast<double>(t) / static_cast<double>(period) + phase);
    y[static_cast<size_t>(t)] = level + season + noise;
  }
}

}  // namespace orrery::synth
