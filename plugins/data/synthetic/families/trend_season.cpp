// The "classic" family, the plugin's original generator with its distribution unchanged:
// level + trend (with an optional kink) + up to three seasonal components (harmonic shapes,
// amplitude that may grow with the level, as in airline data) + AR(1) noise + level shifts +
// rare spikes, on its own scale from 0.1 to 1e4.
#include <algorithm>
#include <cmath>

#include "../family.h"

namespace orrery::synth {

namespace {
struct Season {
  double period, phase, amp;
  double harmonic[3];  // weights of the 1st, 2nd and 3rd harmonic
};
}  // namespace

void classic(Rng& rng, std::span<double> y, const Settings& s) {
  const int64_t T = static_cast<int64_t>(y.size());
  const double unit = rng.log_uniform(0.1, 1e4);  // the series' natural scale
  const double level = rng.normal() * unit * rng.uniform(0, 5);
  const double slope = rng.normal() * rng.uniform(0, 3) * unit / T;
  const int64_t kink = static_cast<int64_t>(rng.uniform(0.2, 0.9) * T);
  const double slope2 = rng.uniform(0, 1) < 0.3 ? rng.normal() * rng.uniform(0, 3) * unit / T : slope;
  const bool growing = rng.uniform(0, 1) < 0.3;  // seasonal amplitude grows with the trend

  std::vector<Season> seasons;
  const int count = static_cast<int>(rng.uniform(0, 1) < 0.15 ? 0 : 1 + rng.uniform(0, 3));
  for (int k = 0; k < std::min(count, 3); ++k) {
    Season z;
    z.period = rng.uniform(0, 1) < 0.7
                   ? s.periods[static_cast<size_t>(rng.uniform(0, static_cast<double>(s.periods.size())))]
                   : rng.log_uniform(3, std::max(4.0, T / 3.0));
    z.phase = rng.uniform(0, 2 * M_PI);
    z.amp = unit * std::exp(0.7 * rng.normal());
    for (int h = 0; h < 3; ++h) z.harmonic[h] = rng.normal() / (1 + h);  // higher harmonics weaker
    seasons.push_back(z);
  }
  const double noise_sd = unit * rng.log_uniform(0.01, s.noise_max);
  const double phi = rng.uniform(0, 0.9);
  const double shift_p = s.shift_rate / T;
  double ar = 0, shift = 0;
  for (int64_t t = 0; t < T; ++t) {
    const double trend = t < kink ? slope * t : slope * kink + slope2 * (t - kink);
    const double grow =
        growing ? std::max(0.2, 1 + 2 * (trend + level) / (unit * 5 + std::fabs(level))) : 1.0;
    double season = 0;
    for (const auto& z : seasons)
      for (int h = 0; h < 3; ++h)
        season += z.amp * z.harmonic[h] * std::sin(2 * M_PI * (h + 1) * t / z.period + z.phase);
    ar = phi * ar + noise_sd * rng.normal();
    if (rng.uniform(0, 1) < shift_p) shift += rng.normal() * unit * 2;
    const double spike = rng.uniform(0, 1) < 0.002 ? rng.normal() * unit * 5 : 0;
    y[static_cast<size_t>(t)] = level + trend + season * grow + ar + shift + spike;
  }
}

}  // namespace orrery::synth
