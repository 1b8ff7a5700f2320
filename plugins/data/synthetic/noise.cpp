#include "noise.h"

#include <algorithm>
#include <cmath>

namespace orrery::synth {

void add_gaussian_noise(Rng& rng, std::span<double> y, double sd) {
  for (double& v : y) v += sd * rng.normal();
}

void add_student_t_noise(Rng& rng, std::span<double> y, double sd) {
  const double df = rng.uniform(2.2, 6);
  const double unit = sd * std::sqrt((df - 2) / df);  // a t(df) has variance df/(df-2)
  for (double& v : y) v += std::clamp(unit * rng.student_t(df), -100 * sd, 100 * sd);
}

void add_heteroscedastic_noise(Rng& rng, std::span<double> y, double sd) {
  const double phi = rng.uniform(0.95, 0.995);   // volatility persists for 20-200 steps
  const double spread = rng.uniform(0.3, 1.0);   // stationary sd of the log-sd
  const double step = spread * std::sqrt(1 - phi * phi);
  // Centred so the noise keeps roughly sd on average: E[exp(2h)] = exp(2 spread^2).
  const double centre = -spread * spread;
  double h = spread * rng.normal();
  for (double& v : y) {
    h = phi * h + step * rng.normal();
    v += sd * std::exp(centre + h) * rng.normal();
  }
}

void add_noise(Rng& rng, std::span<double> y, double sd) {
  const double u = rng.uniform();
  if (u < 0.5) add_gaussian_noise(rng, y, sd);
  else if (u < 0.75) add_student_t_noise(rng, y, sd);
  else add_heteroscedastic_noise(rng, y, sd);
}

}  // namespace orrery::synth
