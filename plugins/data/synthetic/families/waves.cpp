// Periodic waveforms after TempoPFN's sine-wave and sawtooth generators, plus square waves:
// sine 40%, sawtooth 40%, square 20%. Periods come from TempoPFN's U(10, 200) 60% of the time
// and from the `periods` option (calendar periods) otherwise, so the family covers both
// arbitrary and calendar cycles.
#include <algorithm>
#include <cmath>
#include <vector>

#include "../family.h"
#include "../noise.h"

namespace orrery::synth {

namespace {

double draw_period(Rng& rng, const Settings& s) {
  if (rng.chance(0.6) || s.periods.empty()) return rng.uniform(10, 200);
  return s.periods[rng.index(s.periods.size())];
}

// 1-3 sines, each with amplitude modulation (+-10%, over 5-10 periods) and frequency
// modulation (+-5%, over 8-15 periods, its phase integrated step by step), on a level and a
// trend, with noise 70% of the time (sd 5-20% of the summed amplitudes).
void sine(Rng& rng, std::span<double> y, const Settings& s) {
  const double level = rng.uniform(0, 2), slope = rng.uniform(-0.01, 0.01);
  for (size_t t = 0; t < y.size(); ++t) y[t] = level + slope * static_cast<double>(t);
  const int64_t n = rng.integer(1, 3);
  double amp_total = 0;
  for (int64_t c = 0; c < n; ++c) {
    const double period = draw_period(rng, s), amp = rng.uniform(0.5, 3), phase = rng.uniform(0, 2 * M_PI);
    const double am_period = period * rng.uniform(5, 10), am_phase = rng.uniform(0, 2 * M_PI);
    const double fm_period = period * rng.uniform(8, 15), fm_phase = rng.uniform(0, 2 * M_PI);
    amp_total += amp;
    double angle = phase;
    for (size_t t = 0; t < y.size(); ++t) {
      const double u = static_cast<double>(t);
      const double envelope = 1 + 0.1 * std::sin(2 * M_PI * u / am_period + am_phase);
      y[t] += amp * envelope * std::sin(angle);
      angle += 2 * M_PI / period * (1 + 0.05 * std::sin(2 * M_PI * u / fm_period + fm_phase));
    }
  }
  if (rng.chance(0.7)) add_noise(rng, y, rng.uniform(0.05, 0.2) * amp_total);
}

// A ramp rising (or, half the time, falling) over each period, with a slight trend and a
// faint slow sine, as TempoPFN draws it; half the periods span the series 2-7 times.
void sawtooth(Rng& rng, std::span<double> y, const Settings& s) {
  const double T = static_cast<double>(y.size());
  const double period = rng.chance(0.5) ? T / rng.uniform(2, 7) : draw_period(rng, s);
  const double amp = rng.uniform(0.5, 3), phase = rng.uniform(0, 1), slope = rng.uniform(-0.001, 0.001);
  const bool falling = rng.chance(0.5);
  const double slow_period = T / rng.uniform(2, 4), slow_amp = rng.uniform(0, 0.02);
  for (size_t t = 0; t < y.size(); ++t) {
    const double u = static_cast<double>(t);
    const double cycle = u / period + phase, frac = cycle - std::floor(cycle);
    y[t] = amp * (falling ? 1 - frac : frac) + slope * u + slow_amp * std::sin(2 * M_PI * u / slow_period);
  }
  if (rng.chance(0.3)) add_noise(rng, y, rng.uniform(0.01, 0.1) * amp);
}

// On/off levels with a duty cycle of 20-80%, edges sharp or (half the time) ramped by a
// moving average over a few steps, as a thermostat, a batch job or a shift pattern looks.
void square(Rng& rng, std::span<double> y, const Settings& s) {
  const double period = draw_period(rng, s), duty = rng.uniform(0.2, 0.8);
  const double amp = rng.uniform(0.5, 3), level = rng.uniform(-1, 1), phase = rng.uniform(0, 1);
  for (size_t t = 0; t < y.size(); ++t) {
    const double cycle = static_cast<double>(t) / period + phase;
    y[t] = level + (cycle - std::floor(cycle) < duty ? amp : 0);
  }
  if (rng.chance(0.5)) {  // centred moving average of 2 half + 1 steps, by running sums
    const auto half = static_cast<int64_t>(rng.uniform(0.5, std::max(1.0, 0.1 * period)));
    const auto T = static_cast<int64_t>(y.size());
    std::vector<double> sum(y.size() + 1, 0.0);
    for (int64_t t = 0; t < T; ++t) sum[t + 1] = sum[t] + y[t];
    for (int64_t t = 0; t < T; ++t) {
      const int64_t lo = std::max<int64_t>(0, t - half), hi = std::min(T, t + half + 1);
      y[t] = (sum[hi] - sum[lo]) / static_cast<double>(hi - lo);
    }
  }
  if (rng.chance(0.7)) add_noise(rng, y, rng.uniform(0.02, 0.15) * amp);
}

}  // namespace

void waves(Rng& rng, std::span<double> y, const Settings& s) {
  const double u = rng.uniform();
  if (u < 0.4) sine(rng, y, s);
  else if (u < 0.8) sawtooth(rng, y, s);
  else square(rng, y, s);
}

}  // namespace orrery::synth
