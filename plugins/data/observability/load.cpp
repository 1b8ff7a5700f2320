// The latent load of a host: a daily cycle (a peak at a busy hour, or at night for batch
// work), a weekend dip, slow growth, short-term noise and bursts. Time is in steps of the
// host's interval, so a day is 8640 steps at 10 s, 1440 at 60 s and 288 at 5 min, and a
// 2048-step series at 10 s sees under six hours of the cycle.
#include <algorithm>
#include <cmath>

#include "metric.h"

namespace orrery::obs {

namespace {

// A von Mises bump over the day: 1 at `peak` (fraction of the day), exp(-2 kappa) opposite.
double bump(double day_fraction, double peak, double kappa) {
  return std::exp(kappa * (std::cos(2 * M_PI * (day_fraction - peak)) - 1));
}

// 1 on Saturday and Sunday (days 5 and 6 of a week starting on Monday), 0 on weekdays,
// ramped linearly over 0.1 day (2.4 hours) around midnight so the dip has no jump.
double weekend(double day_of_week) {
  const double x = day_of_week;
  if (x >= 6.95) return 1 - (x - 6.95) / 0.1;
  if (x < 0.05) return 0.5 - x / 0.1;
  return std::clamp((x - 4.95) / 0.1, 0.0, 1.0);
}

}  // namespace

Host make_host(Rng& rng, double interval, size_t T) {
  Host h;
  h.interval = interval;
  h.steps_per_day = 86400 / interval;
  const double day = h.steps_per_day;
  const double start = rng.uniform(0, 7 * day);  // where in the week the series begins

  const bool nightly = rng.chance(0.15);  // batch work peaks at night
  const double peak = (nightly ? rng.uniform(0, 5) : rng.uniform(9, 20)) / 24;
  const double kappa = rng.uniform(0.5, 3), depth = rng.uniform(0.2, 0.9);
  const bool second = rng.chance(0.3);  // e.g. a morning and an evening peak
  const double peak2 = peak + rng.uniform(0.2, 0.5), kappa2 = rng.uniform(0.5, 3), height2 = rng.uniform(0.3, 1);
  const double weekend_factor = rng.chance(0.6) ? rng.uniform(0.3, 0.9) : 1;
  const double growth_per_day = rng.normal(0, 0.02);

  // Short-term fluctuation: log-AR(1) with a correlation time of 2-30 steps.
  const double phi = std::exp(-1 / rng.uniform(2, 30)), wobble = rng.uniform(0.02, 0.15);
  const double innovation = wobble * std::sqrt(1 - phi * phi);

  // Bursts (traffic spikes, cron storms, retries): a jump that decays, or a plateau.
  struct Burst { double at, height, length; bool plateau; };
  std::vector<Burst> bursts;
  for (int64_t n = rng.poisson(rng.uniform(0, 4)); n > 0; --n)
    bursts.push_back({rng.uniform(0, static_cast<double>(T)), rng.log_uniform(0.3, 4),
                      rng.log_uniform(2, std::max(3.0, 0.05 * static_cast<double>(T))), rng.chance(0.4)});

  h.load.resize(T);
  double noise = wobble * rng.normal();
  for (size_t i = 0; i < T; ++i) {
    const double t = start + static_cast<double>(i);
    const double days = t / day, fraction = days - std::floor(days);
    double cycle = bump(fraction, peak, kappa) + (second ? height2 * bump(fraction, peak2, kappa2) : 0);
    cycle = (1 - depth) + depth * cycle / (second ? 1 + height2 : 1);
    const double week = 1 - (1 - weekend_factor) * weekend(std::fmod(days, 7.0));
    double extra = 0;
    for (const Burst& b : bursts) {
      const double d = static_cast<double>(i) - b.at;
      if (d < 0) continue;
      extra += b.plateau ? (d < b.length ? b.height : 0) : b.height * std::exp(-d / b.length);
    }
    noise = phi * noise + innovation * rng.normal();
    h.load[i] = cycle * week * std::exp(growth_per_day * (days - start / day) + noise) * (1 + extra);
  }
  if (T > 0) h.peak_load = *std::max_element(h.load.begin(), h.load.end());
  return h;
}

}  // namespace orrery::obs
