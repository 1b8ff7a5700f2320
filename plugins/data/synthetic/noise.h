#pragma once
// Observation noise shared by the families whose clean signal needs some (waves, steps, ou).
// Real series rarely have constant Gaussian noise: the sd drifts with a volatility that
// clusters in time, and outliers come from heavy tails. `sd` is the typical standard deviation.
#include <span>

#include "rng.h"

namespace orrery::synth {

void add_gaussian_noise(Rng&, std::span<double> y, double sd);
// Student-t with df ~ U(2.2, 6), rescaled to standard deviation `sd`; draws beyond 100 sd are
// clipped there (a t with df near 2 could otherwise throw a 1e4-sd outlier into a batch).
void add_student_t_noise(Rng&, std::span<double> y, double sd);
// Gaussian noise whose log-sd follows a slow AR(1) (volatility clustering), as in returns or
// in load-dependent measurement error; the stationary sd of log-sd is U(0.3, 1).
void add_heteroscedastic_noise(Rng&, std::span<double> y, double sd);
// One of the three above: Gaussian 50%, Student-t 25%, heteroscedastic 25%.
void add_noise(Rng&, std::span<double> y, double sd);

}  // namespace orrery::synth
