// Count-like intermittent demand (spare parts, retail items, rare events): most steps are
// exactly zero. A step has demand with probability p (log-uniform 2-50%, zero inflation),
// and its size is Poisson (half the series) or negative binomial (overdispersed, r
// log-uniform 0.5-5) with mean log-uniform 1-50, so a demand can itself be zero. Half the
// series modulate the demand probability with a cycle (weekly, or half the time a period from
// the `periods` option), a third drift in size.
// Values are whole counts in their own units: the sampler does not rescale this family.
#include <algorithm>
#include <cmath>

#include "../family.h"

namespace orrery::synth {

void intermittent(Rng& rng, std::span<double> y, const Settings& s) {
  const double T = static_cast<double>(y.size());
  const double p = rng.log_uniform(0.02, 0.5), mean = rng.log_uniform(1, 50);
  const bool overdispersed = rng.chance(0.5);
  const double r = rng.log_uniform(0.5, 5);
  const bool seasonal = rng.chance(0.5);
  const double period = s.periods.empty() || rng.chance(0.5) ? 7 : s.periods[rng.index(s.periods.size())];
  const double season_amp = rng.uniform(0.3, 1.5), phase = rng.uniform(0, 2 * M_PI);
  const double growth = rng.chance(1.0 / 3) ? rng.uniform(-1.5, 1.5) : 0;  // log size change over the series
  for (size_t i = 0; i < y.size(); ++i) {
    const double t = static_cast<double>(i);
    double p_t = p;
    if (seasonal) p_t = std::min(0.9, p * std::exp(season_amp * std::sin(2 * M_PI * t / period + phase)));
    if (!rng.chance(p_t)) {
      y[i] = 0;
      continue;
    }
    const double m = mean * std::exp(growth * t / T);
    y[i] = static_cast<double>(overdispersed ? rng.negative_binomial(r, m) : rng.poisson(m));
  }
}

}  // namespace orrery::synth
