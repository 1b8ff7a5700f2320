// The "arima" family: integrated processes as Box and Jenkins model real series. A third are
// random walks with drift, a third ARIMA(1,1,1), a third the airline model (0,1,1)(0,1,1)_m
// (Box and Jenkins' model of monthly airline passengers, a good fit to many seasonal series);
// some have trend breaks, where the drift changes at random times.
#include <cmath>
#include <deque>

#include "state_space.h"

namespace orrery::synth {

ArimaModel draw_arima_model(Rng& rng, const Settings& s) {
  ArimaModel m;
  const double kind = rng.uniform();
  if (kind < 1.0 / 3) {  // random walk with drift
    m.drift = rng.normal() * rng.uniform(0, 0.5);
  } else if (kind < 2.0 / 3) {  // ARIMA(1,1,1)
    m.ar = rng.uniform(-0.5, 0.8);
    m.theta = rng.uniform(-0.8, 0.5);
    m.drift = rng.normal() * rng.uniform(0, 0.2);
  } else {  // the airline model: no drift, which twice differenced would be a quadratic trend
    m.D = 1;
    m.period = draw_period(rng, s, 0);
    m.theta = rng.uniform(-0.9, -0.1);
    m.seasonal_theta = rng.uniform(-0.9, -0.1);
  }
  if (m.D == 0 && rng.chance(0.3)) m.break_rate = rng.uniform(0.5, 2);
  return m;
}

void simulate_arima(const ArimaModel& m, Rng& rng, std::span<double> y, int64_t burn_in) {
  const int64_t T = static_cast<int64_t>(y.size()), total = burn_in + T, mp = m.period;
  // Past shocks a_{t-1} .. a_{t-m-1}, newest first; the seasonal integrator's last cycle starts
  // as a seasonal shape (what the airline model's (1 - B^m)^-1 carries from before the data).
  std::deque<double> shocks(static_cast<size_t>(mp + 1), 0.0);
  std::vector<double> cycle(static_cast<size_t>(mp), 0.0);
  if (m.D) {
    const double size = rng.uniform(2, 10) * m.sigma, phase = rng.uniform(0, 2 * M_PI);
    for (int64_t j = 0; j < mp; ++j)
      cycle[static_cast<size_t>(j)] = size * (std::sin(2 * M_PI * static_cast<double>(j) / static_cast<double>(mp) + phase) +
                                              0.3 * rng.normal());
    double mean = 0;  // centred, or the cycle would add a drift to y
    for (double c : cycle) mean += c / static_cast<double>(mp);
    for (double& c : cycle) c -= mean;
  }
  double drift = m.drift, w_prev = 0, level = 0;
  for (int64_t t = 0; t < total; ++t) {
    if (m.break_rate > 0 && rng.chance(m.break_rate / static_cast<double>(total)))
      drift = rng.normal() * rng.uniform(0, 0.5);
    const double a = m.sigma * rng.normal();
    double w = drift + m.ar * w_prev + a + m.theta * shocks[0];
    if (m.D) w += m.seasonal_theta * shocks[static_cast<size_t>(mp - 1)] + m.theta * m.seasonal_theta * shocks[static_cast<size_t>(mp)];
    shocks.push_front(a);
    shocks.pop_back();
    w_prev = w;
    double z = w;
    if (m.D) {  // (1 - B^m) z = w
      double& last = cycle[static_cast<size_t>(t % mp)];
      z = last + w;
      last = z;
    }
    level += z;  // (1 - B) y = z
    if (t >= burn_in) y[static_cast<size_t>(t - burn_in)] = level;
  }
}

void arima(Rng& rng, std::span<double> y, const Settings& s) {
  const ArimaModel m = draw_arima_model(rng, s);
  simulate_arima(m, rng, y, 2 * m.period + 20);
}

}  // namespace orrery::synth
