#pragma once
// Regression with seasonal ARIMA errors, fitted as R's arima() and statsforecast's port of it fit
// one: y_t = b'x_t + e_t, with (1 - phi(B))(1 - Phi(B^m)) (1-B)^d (1-B^m)^D e_t = (1 + theta(B))
// (1 + Theta(B^m)) a_t. The exact Gaussian likelihood comes from a Kalman filter on the state-space
// form with the differences in the state (their initial states diffuse, variance 1e6), the ARMA
// part starting from its stationary covariance; estimates are conditional sum of squares first,
// then maximum likelihood from there ("CSS-ML"), AR parts kept stationary by the PACF transform.
// Internal to liborrery_core; auto_arima.cpp chooses the order, arima.cpp is the baseline.
#include <cstdint>
#include <vector>

#include "orrery/interrupt.h"

namespace orrery::baselines {

struct ArimaOrder {
  int p = 0, d = 0, q = 0;  // non-seasonal AR, differences, MA
  int P = 0, D = 0, Q = 0;  // seasonal, at lag m
  int64_t m = 1;
  bool operator==(const ArimaOrder&) const = default;
};

enum class ArimaMethod { css, css_ml };

// Columns of regressors, each as long as the history (plus the horizon, for forecasting).
using Regressors = std::vector<std::vector<double>>;

struct ArimaFit {
  ArimaOrder order;
  bool constant = false;           // an intercept (no differences) or a drift (one difference)
  std::vector<double> ar, ma, sar, sma;
  std::vector<double> beta;        // the constant's coefficient first (if any), then the regressors'
  double variance = 0;             // the innovations' estimate: ssq / count of the likelihood or of CSS
  double sigma2 = 0, loglik = 0, aic = 0, aicc = 0, bic = 0;
  int64_t nobs = 0;                // the steps the likelihood counts: observed minus differences
  bool usable = false;             // false: the fit failed, or its roots sit on the unit circle
  std::vector<double> y;           // the history it was fitted to, NaN for gaps
  Regressors x;                    // the regressors in use, the constant's column included
  std::vector<size_t> columns;     // which of the caller's regressors those are, in order
};

// Fits `order` to y (NaN = missing) on the regressors x (may be empty). `constant` adds an
// intercept when d + D = 0, a drift (1, 2, ..., n) when d + D = 1, and nothing otherwise.
// Never throws for data it cannot fit: returns usable = false.
ArimaFit fit_arima(const std::vector<double>& y, const Regressors& x, const ArimaOrder& order, bool constant,
                   ArimaMethod method);

// The exact log-likelihood of fit's coefficients (ar ... beta) on its data and regressors: what
// fit.loglik holds after fit_arima, and a check that another fit's estimates score the same here.
double arima_loglik(const ArimaFit& fit);

struct ArimaForecast {
  std::vector<double> mean, sd;
};
// h steps on: `future` holds the caller's regressors over the horizon (h values each; fit.columns
// says which it reads).
ArimaForecast forecast_arima(const ArimaFit& fit, const Regressors& future, int64_t h);

// The automatic choice (statsforecast's AutoARIMA, Hyndman and Khandakar's stepwise search on
// AICc): d from repeated KPSS tests, D from the seasonal strength, then the stepwise walk over
// p, q, P, Q and the constant; with more than 150 steps or m > 12 the walk compares conditional
// sum-of-squares fits and the best that fits by maximum likelihood is kept. A constant regressor
// is left out (the constant term covers it); collinear regressors give an unusable fit.
ArimaFit auto_arima(const std::vector<double>& y, const Regressors& x, int64_t m,
                    const Interrupt* interrupt = nullptr);

}  // namespace orrery::baselines
