#pragma once
// In-context regression on known-future covariates (TimesFM 2.5's "xreg + timesfm" mode, and the
// classical regression with autocorrelated errors): fit y_t = a + sum_j b_j x_jt over a window's
// history, let any forecaster forecast the residual y - fit, and add the fit over the horizon,
// where the covariates are known. Past-only covariates have no horizon values, so it does not use
// them. One mechanism for every forecaster: a foundation model, ETS, a naive forecast.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace orrery {

struct CovariateRegression {
  double intercept = 0;
  // One per covariate and lag, covariate by covariate: coef[j * (lags + 1) + k] multiplies
  // x_j[t - k]; 0 for one not taken in. Without lags, one per covariate.
  std::vector<double> coef;
  size_t lags = 0;           // the largest lag it tried (max_lag, at most the history's length)
  bool fitted = false;       // no covariate taken in (or too few steps): the fit is 0 everywhere
  size_t steps = 0;          // the steps it was fitted on (target and every covariate observed)

  // Fits over the steps t < y.size() where y_t and every x_jt are finite (NaN marks a gap; a
  // step where any covariate is missing is left out for all). Which covariates: forward
  // selection on the changes between consecutive complete steps, taking in the covariate whose
  // coefficient has the largest |t| beside those already in while it is at least 2.58 (a 1%
  // test of each step): two trending series that have nothing to do with each other correlate
  // in levels but not in their steps, a covariate the target does not follow leaves its
  // forecast alone, and of two that move together the second adds nothing. A covariate whose
  // changes are constant (a constant, or a straight line) is never taken in. How much: a
  // regression with AR(1) errors (Cochrane-Orcutt iterations on quasi-differences v_t - rho
  // v_{t-1}, rho in [0, 1] the deviations' lag-one autocorrelation): the levels estimate when the
  // target's deviations from the fit are stationary, moving to the changes estimate as they
  // wander, where a levels fit would be spurious; the intercept is the mean of what the kept
  // covariates leave of the target. Testing a covariate needs two more pairs of consecutive
  // complete steps than covariates in the test (three for the first): with fewer, or none taken
  // in, it stays unfitted. Each x_j must be at least as long as y.
  //
  // With max_lag = K > 0 the candidates are each covariate at every lag k in [0, K], x_j[t - k]
  // (a leading indicator, an effect that takes k steps to arrive, or spreads over several): the
  // same selection over them, each covariate's test at 1% over its K + 1 lags (Bonferroni), and
  // the first K steps left out of the fit (their lagged values are unknown). A known-future
  // covariate's lagged values over the horizon are known too.
  static CovariateRegression fit(const std::vector<double>& y, const std::vector<std::vector<double>>& x,
                                 size_t max_lag = 0);

  // a + sum_jk b_jk x_j[t - k]: NaN where a covariate in use is (or t < k), 0 when unfitted.
  double at(const std::vector<std::vector<double>>& x, size_t t) const;
  // y - fit over y's steps: the residual a forecaster forecasts (NaN where either is).
  std::vector<double> residual(const std::vector<double>& y, const std::vector<std::vector<double>>& x) const;
};

// The largest lag a caller asks the regression for: 0 (the covariates as given) to
// kMaxRegressionLags, else an Error "<what> must be 0 or the largest lag in steps, got K" (or
// "at most ..."). `what` names the option or flag.
inline constexpr int64_t kMaxRegressionLags = 1024;
void check_regression_lags(int64_t lags, const std::string& what);

}  // namespace orrery
