#pragma once
// The classical state-space families, exposed so that tests can draw a model, simulate it, and
// check that a fit recovers what was drawn (families/ets.cpp, families/arima.cpp).
#include <cstdint>
#include <span>
#include <vector>

#include "../family.h"

namespace orrery::synth {

// One ETS model in the parameterisation of Hyndman et al. (2008) that statsforecast and
// core/src/eval/baselines/ets_model.h use (beta <= alpha, gamma <= 1 - alpha):
//   q_t = l_{t-1} + phi b_{t-1};  f_t = q_t (+ or *) s_{t-m};  y_t = f_t + e_t  or  f_t (1 + e_t)
//   l_t = q_t + alpha (p_t - q_t),  p_t = y_t (- or /) s_{t-m}
//   b_t = phi b_{t-1} + (beta / alpha) (l_t - l_{t-1} - phi b_{t-1})
//   s_t = s_{t-m} + gamma (y_t (- or /) q_t - s_{t-m})
struct EtsModel {
  bool multiplicative_error = false;
  bool trend = false, damped = false;
  int season = 0;   // 0 none, 1 additive, 2 multiplicative
  int64_t period = 1;
  double alpha = 0.3, beta = 0, gamma = 0, phi = 1;
  double sigma = 0.05;  // innovation sd: absolute (additive error) or relative (multiplicative)
  double level = 10, slope = 0;
  std::vector<double> seasonal;  // s_{1-m} .. s_0, the state used next first
};

EtsModel draw_ets_model(Rng& rng, const Settings& s, int64_t length);
// Fills y with the model's path after `burn_in` unrecorded steps; NaN if the path leaves the
// region where the model is defined (a multiplicative level or mean at or below zero), which
// the sampler redraws.
void simulate_ets(const EtsModel& m, Rng& rng, std::span<double> y, int64_t burn_in);

// A seasonal ARIMA path: (1 - B)^d (1 - B^m)^D y_t = drift + (1 + theta B)(1 + Theta B^m) a_t
// with AR(1) phi on top, and trend breaks (the drift changes at random times).
struct ArimaModel {
  int d = 1, D = 0;
  int64_t period = 1;
  double ar = 0, theta = 0, seasonal_theta = 0;
  double drift = 0, sigma = 1;
  double break_rate = 0;  // expected drift changes per series (burn-in included)
};

ArimaModel draw_arima_model(Rng& rng, const Settings& s);
void simulate_arima(const ArimaModel& m, Rng& rng, std::span<double> y, int64_t burn_in);

// A seasonal period from the settings, the classical ones (<= 52 steps) twice as likely;
// 1 (none) with probability `none`.
int64_t draw_period(Rng& rng, const Settings& s, double none);

}  // namespace orrery::synth
