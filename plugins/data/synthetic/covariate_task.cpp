#include "covariate_task.h"

#include <algorithm>
#include <cmath>

namespace orrery::synth {

namespace {

struct Moments {
  double mean = 0, sd = 0;
};

Moments moments(std::span<const double> x) {
  Moments m;
  for (double v : x) m.mean += v;
  m.mean /= static_cast<double>(x.size());
  for (double v : x) m.sd += (v - m.mean) * (v - m.mean);
  m.sd = std::sqrt(m.sd / static_cast<double>(x.size()));
  return m;
}

// x standardised (a constant series becomes zeros).
std::vector<double> standardised(std::span<const double> x) {
  const Moments m = moments(x);
  std::vector<double> z(x.size(), 0.0);
  if (m.sd > 1e-12)
    for (size_t t = 0; t < x.size(); ++t) z[t] = (x[t] - m.mean) / m.sd;
  return z;
}

// Sparse 0/1 events: promotions at random (each lasting 1 to 5 steps), or a holiday that recurs
// with a period of 7, 12 or 52 steps, each occurrence kept with probability 0.8.
void events(Rng& rng, std::span<double> x) {
  const auto T = static_cast<int64_t>(x.size());
  std::fill(x.begin(), x.end(), 0.0);
  if (rng.chance(0.5)) {
    const double rate = 1 / rng.uniform(10, 60);
    for (int64_t t = 0; t < T; ++t)
      if (rng.chance(rate))
        for (int64_t d = rng.integer(1, 5); d > 0 && t < T; --d, ++t) x[static_cast<size_t>(t)] = 1;
  } else {
    constexpr int64_t kPeriods[] = {7, 12, 52};
    const int64_t period = kPeriods[rng.index(3)], phase = rng.integer(0, period - 1);
    for (int64_t t = phase; t < T; t += period)
      if (rng.chance(0.8)) x[static_cast<size_t>(t)] = 1;
  }
}

// A 0/1 regime that switches one to three times at random steps.
void regime(Rng& rng, std::span<double> x) {
  const auto T = static_cast<int64_t>(x.size());
  std::vector<int64_t> at(static_cast<size_t>(rng.integer(1, 3)));
  for (auto& a : at) a = rng.integer(1, std::max<int64_t>(1, T - 1));
  std::sort(at.begin(), at.end());
  double state = rng.chance(0.5) ? 1 : 0;
  size_t next = 0;
  for (int64_t t = 0; t < T; ++t) {
    while (next < at.size() && at[next] == t) state = 1 - state, ++next;
    x[static_cast<size_t>(t)] = state;
  }
}

}  // namespace

CovariateTask covariate_task(Rng& rng, int64_t length, const CovariateTaskSettings& s,
                             const std::function<void(Rng&, std::span<double>)>& draw) {
  const auto T = static_cast<size_t>(length);
  const int k = static_cast<int>(rng.integer(1, s.max_covariates));
  CovariateTask task;
  task.rows.assign(static_cast<size_t>(k) + 1, std::vector<double>(T, 0.0));
  task.roles.assign(static_cast<size_t>(k) + 1, 0);
  std::vector<double>& target = task.rows[0];
  draw(rng, target);  // the base: what the target would be without its covariates
  const std::vector<double> base = target;
  const Moments b = moments(base);
  const double unit = b.sd > 1e-12 ? b.sd : std::max(std::fabs(b.mean), 1.0) * 0.1;

  for (int j = 1; j <= k; ++j) {
    std::vector<double>& x = task.rows[static_cast<size_t>(j)];
    const bool informative = !rng.chance(s.noise_prob);
    const auto effect = static_cast<Effect>(rng.pick(s.effects));  // a noise covariate takes its shape only
    if (effect == Effect::events) {
      events(rng, x);
    } else if (effect == Effect::regime) {
      regime(rng, x);
    } else if (j > 1 && rng.chance(0.3)) {  // a noisy copy of an earlier covariate: correlated drivers
      const std::vector<double> z = standardised(task.rows[static_cast<size_t>(rng.integer(1, j - 1))]);
      const double level = rng.normal(0, 10), scale = rng.log_uniform(0.1, 100);
      for (size_t t = 0; t < T; ++t) x[t] = level + scale * (z[t] + rng.normal(0, 0.5));
    } else {
      draw(rng, x);
    }
    // Calendars and laws in force are usually known ahead; other covariates as future_prob says.
    const bool scheduled = effect == Effect::events || effect == Effect::regime;
    task.roles[static_cast<size_t>(j)] = rng.chance(scheduled ? (1 + s.future_prob) / 2 : s.future_prob) ? 2 : 1;
    if (!informative) continue;

    const std::vector<double> z = standardised(x);
    const auto lag = static_cast<size_t>(effect == Effect::regime ? 0 : rng.integer(0, s.max_lag));
    const double threshold = rng.normal(0, 0.5);
    std::vector<double> e(T);
    for (size_t t = 0; t < T; ++t) {
      const size_t from = t >= lag ? t - lag : 0;
      switch (effect) {
        case Effect::lag: e[t] = z[from]; break;
        case Effect::threshold: e[t] = z[from] > threshold ? 1 : 0; break;
        case Effect::multiplicative: e[t] = (base[t] - b.mean) / unit * z[from]; break;
        case Effect::events: e[t] = x[from]; break;
        case Effect::regime: e[t] = x[t]; break;
      }
    }
    // Each effect's size relative to the base's spread: from a nudge to the dominant signal.
    const Moments m = moments(e);
    if (m.sd < 1e-12) continue;
    const double size = (rng.chance(0.5) ? 1 : -1) * rng.log_uniform(0.3, s.max_effect) * unit;
    for (size_t t = 0; t < T; ++t) target[t] += size * (e[t] - m.mean) / m.sd;
  }
  return task;
}

}  // namespace orrery::synth
