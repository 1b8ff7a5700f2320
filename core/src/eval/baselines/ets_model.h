#pragma once
// The ETS state-space models of Hyndman, Koehler, Ord and Snyder (2008), "Forecasting with
// Exponential Smoothing", in statsforecast's parameterisation (the form R's forecast::ets uses):
// error A/M, trend N/A (optionally damped by phi), season N/A/M with period m.
//   q_t = l_{t-1} + phi b_{t-1}                     (l_{t-1} without a trend)
//   f_t = q_t (+ or *) s_{t-m}                      one-step forecast
//   e_t = y_t - f_t  or  (y_t - f_t) / f_t          additive / multiplicative error
//   l_t = q_t + alpha (p_t - q_t),  p_t = y_t (- or /) s_{t-m}
//   b_t = phi b_{t-1} + (beta / alpha) (l_t - l_{t-1} - phi b_{t-1})
//   s_t = s_{t-m} + gamma (y_t (- or /) q_t - s_{t-m})
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "orrery/interrupt.h"

namespace orrery::baselines {

enum class Component { none, additive, multiplicative };

struct EtsForm {
  Component error = Component::additive, trend = Component::none, season = Component::none;
  bool damped = false;
  std::string name() const;  // "MAdM" style: error, trend, "d" if damped, season
};

struct EtsState {
  double level = 0, slope = 0;
  // Seasonal states by when they are next used: season[0] for the next step, season[j] for
  // step j + 1 (cyclically). Empty without a season.
  std::vector<double> season;
};

struct EtsParams {
  double alpha = 0, beta = 0, gamma = 0, phi = 1;  // beta, gamma unused without trend/season
};

struct EtsRun {
  double neg2loglik;  // n log(sum e^2) (+ 2 sum log|f_t| for multiplicative errors), up to a constant
  double sse;         // sum of squared errors e_t (relative errors for a multiplicative error)
  EtsState last;      // the state after the last observation
};

// Runs the model through y from the initial state.
EtsRun ets_run(const std::vector<double>& y, const EtsForm& form, const EtsParams& p, EtsState state);

// Point forecasts for steps 1..horizon from a state.
std::vector<double> ets_point(const EtsForm& form, const EtsParams& p, const EtsState& state,
                              int64_t horizon);

// Forecast variances for steps 1..horizon given the innovation variance sigma2: the analytic
// formulas of Hyndman et al. (2008, ch. 6) for classes 1 and 2 and the exact moment recursion
// for class 3 (multiplicative error and season).
std::vector<double> ets_variance(const EtsForm& form, const EtsParams& p, const EtsState& state,
                                 double sigma2, const std::vector<double>& point);

struct EtsFit {
  EtsForm form;
  EtsParams params;
  EtsState last;       // after the last observation
  double sigma2 = 0;   // innovation variance: sum e^2 / (n - k - 1), k counting sigma too
  double aicc = 0;
};

// statsforecast's AutoETS: every allowed form fitted by likelihood and the lowest AICc kept;
// nullopt when the history is too short for any (statsforecast raises there). ets_fit.cpp.
std::optional<EtsFit> auto_ets(const std::vector<double>& y, int64_t m, const Interrupt* interrupt = nullptr);
// One form fitted by likelihood, as auto_ets fits each of its candidates (the same starting
// values and box); nullopt when it cannot be. ets_fit.cpp.
std::optional<EtsFit> fit_ets(const std::vector<double>& y, int64_t m, const EtsForm& form);

}  // namespace orrery::baselines
