#pragma once
// In-context regression on known-future covariates (TimesFM 2.5's "xreg + timesfm" mode, and the
// classical regression with correlated errors): fit y_t = a + sum_j b_j x_jt over a window's
// history, let any forecaster forecast the residual y - fit, and add the fit over the horizon,
// where the covariates are known. Past-only covariates have no horizon values, so it does not use
// them. One mechanism for every forecaster: a foundation model, ETS, a naive forecast.
#include <cstddef>
#include <vector>

namespace orrery {

struct CovariateRegression {
  double intercept = 0;
  std::vector<double> coef;  // one per covariate; 0 for one that is constant over the fit
  bool fitted = false;       // too few complete steps: the fit is 0 everywhere
  size_t steps = 0;          // the steps it was fitted on (target and every covariate observed)

  // Least squares over the steps t < y.size() where y_t and every x_jt are finite (NaN marks a
  // gap), on standardised covariates with a ridge of 1e-6 per step (numerical only). It needs
  // two more complete steps than covariates in use; with fewer it stays unfitted. Each x_j must
  // be at least as long as y.
  static CovariateRegression fit(const std::vector<double>& y, const std::vector<std::vector<double>>& x);

  // a + sum_j b_j x_j[t]: NaN where a covariate in use is, 0 when unfitted.
  double at(const std::vector<std::vector<double>>& x, size_t t) const;
  // y - fit over y's steps: the residual a forecaster forecasts (NaN where either is).
  std::vector<double> residual(const std::vector<double>& y, const std::vector<std::vector<double>>& x) const;
};

}  // namespace orrery
