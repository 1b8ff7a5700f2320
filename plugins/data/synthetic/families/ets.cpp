// The "ets" family: paths of exponential-smoothing state-space models (Hyndman, Koehler, Ord
// and Snyder 2008), the classical prior of low-frequency series. "Mix, Don't Pick" (2025) found
// an ETS generator the best single generator on yearly, quarterly and monthly data. Each series
// draws its own form (additive or multiplicative error and season, no, additive or damped
// trend), smoothing parameters, initial states and noise, and runs through a burn-in before it
// is recorded, so its states have moved away from their draws as a real series' have.
#include <algorithm>
#include <cmath>
#include <limits>

#include "state_space.h"

namespace orrery::synth {

int64_t draw_period(Rng& rng, const Settings& s, double none) {
  if (rng.chance(none)) return 1;
  std::vector<double> w;
  for (double p : s.periods) w.push_back(p <= 52 ? 2 : 1);
  return std::max<int64_t>(2, std::llround(s.periods[rng.pick(w)]));
}

EtsModel draw_ets_model(Rng& rng, const Settings& s, int64_t length) {
  EtsModel m;
  m.multiplicative_error = rng.chance(0.4);
  m.trend = rng.chance(0.6);
  m.damped = m.trend && rng.chance(0.5);
  m.period = draw_period(rng, s, 0.3);
  if (2 * m.period > length) m.period = 1;  // a season needs two cycles to be seen
  // A multiplicative season only with a multiplicative error: statsforecast's AutoETS allows no
  // other (additive error with multiplicative season is numerically unstable).
  if (m.period > 1) m.season = m.multiplicative_error && rng.chance(0.5) ? 2 : 1;
  // Smoothing inside the usual region: beta <= alpha, gamma <= 1 - alpha. Uniform draws put most
  // of their mass on fast-moving states; log-uniform ones spread it over orders of magnitude, as
  // a scale's uninformative prior does, down to states that barely move.
  const auto draw = [&](double lo, double hi) {
    return s.ets_log_smoothing ? rng.log_uniform(lo / 10, hi) : rng.uniform(lo, hi);
  };
  m.alpha = draw(0.05, 0.8);
  m.beta = m.trend ? m.alpha * draw(0.02, 0.5) : 0;
  m.gamma = m.season ? (1 - m.alpha) * draw(0.02, 0.5) : 0;
  m.phi = m.damped ? rng.uniform(0.8, 0.98) : 1;
  m.level = 10;
  const double noise = rng.log_uniform(0.005, 0.1);  // relative to the level
  m.sigma = m.multiplicative_error ? noise : noise * m.level;
  // Drift per step: over 100 steps anywhere from 0.5% of the level to 100 times the largest
  // drift (by default 100% of the level), either way.
  if (m.trend) m.slope = m.level * rng.log_uniform(5e-5, s.ets_max_drift) * (rng.chance(0.5) ? 1 : -1);
  if (m.season) {
    // A smooth cycle plus a ragged part, centred (additive) or of mean 1 (multiplicative).
    const double size = rng.log_uniform(0.02, 0.4), phase = rng.uniform(0, 2 * M_PI);
    const double ragged = rng.uniform(0, 0.5);
    m.seasonal.resize(static_cast<size_t>(m.period));
    double mean = 0;
    for (int64_t j = 0; j < m.period; ++j) {
      const double shape = std::sin(2 * M_PI * static_cast<double>(j) / static_cast<double>(m.period) + phase) +
                           ragged * rng.normal();
      m.seasonal[static_cast<size_t>(j)] = m.season == 2 ? std::exp(size * shape) : size * m.level * shape;
      mean += m.seasonal[static_cast<size_t>(j)] / static_cast<double>(m.period);
    }
    for (double& v : m.seasonal) v = m.season == 2 ? v / mean : v - mean;
  }
  return m;
}

void simulate_ets(const EtsModel& m, Rng& rng, std::span<double> y, int64_t burn_in) {
  const bool positive = m.multiplicative_error || m.season == 2;
  double level = m.level, slope = m.slope;
  std::vector<double> season = m.seasonal;
  const int64_t total = burn_in + static_cast<int64_t>(y.size());
  for (int64_t t = 0; t < total; ++t) {
    const double q = level + (m.trend ? m.phi * slope : 0);
    const size_t k = m.season ? static_cast<size_t>(t % m.period) : 0;
    const double s = m.season ? season[k] : 0;
    const double f = m.season == 2 ? q * s : q + s;
    if (positive && !(q > 0 && f > 0)) {  // the model is not defined here: redrawn
      std::fill(y.begin(), y.end(), std::numeric_limits<double>::quiet_NaN());
      return;
    }
    const double value = m.multiplicative_error ? f * (1 + std::max(-0.9, m.sigma * rng.normal()))
                                                : f + m.sigma * rng.normal();
    const double p = m.season == 2 ? value / s : value - s;
    const double next = q + m.alpha * (p - q);
    if (m.trend) slope = m.phi * slope + (m.beta / m.alpha) * (next - level - m.phi * slope);
    if (m.season) season[k] = s + m.gamma * ((m.season == 2 ? value / q : value - q) - s);
    level = next;
    if (t >= burn_in) y[static_cast<size_t>(t - burn_in)] = value;
  }
}

void ets(Rng& rng, std::span<double> y, const Settings& s) {
  const EtsModel m = draw_ets_model(rng, s, static_cast<int64_t>(y.size()));
  simulate_ets(m, rng, y, 2 * m.period + 20);
}

}  // namespace orrery::synth
