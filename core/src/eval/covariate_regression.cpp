#include "orrery/host/covariate_regression.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "orrery/error.h"
#include "orrery/host/scoring.h"

namespace orrery {

namespace {

// A covariate is taken in when its t statistic is at least this large: a 1% two-sided test of
// its coefficient (normal quantile), each step of the forward selection on its own.
constexpr double kMinT = 2.58;

// Solves the symmetric positive definite system A b = r in place (Cholesky); false if A is not.
bool solve_spd(std::vector<std::vector<double>>& A, std::vector<double>& r) {
  const size_t k = r.size();
  for (size_t j = 0; j < k; ++j) {
    double d = A[j][j];
    for (size_t m = 0; m < j; ++m) d -= A[j][m] * A[j][m];
    if (!(d > 0)) return false;
    A[j][j] = std::sqrt(d);
    for (size_t i = j + 1; i < k; ++i) {
      double s = A[i][j];
      for (size_t m = 0; m < j; ++m) s -= A[i][m] * A[j][m];
      A[i][j] = s / A[j][j];
    }
  }
  for (size_t i = 0; i < k; ++i) {  // L z = r
    for (size_t m = 0; m < i; ++m) r[i] -= A[i][m] * r[m];
    r[i] /= A[i][i];
  }
  for (size_t i = k; i-- > 0;) {  // L^T b = z
    for (size_t m = i + 1; m < k; ++m) r[i] -= A[m][i] * r[m];
    r[i] /= A[i][i];
  }
  return true;
}

// The regression's data: the target and covariates at the complete steps (rho = 0, levels), or
// their quasi-differences v_t - rho v_{t-1} between consecutive complete steps (rho = 1: the
// changes), each covariate standardised.
struct Design {
  std::vector<double> y;
  std::vector<std::vector<double>> x;  // by covariate
  std::vector<double> mean, sd, peak;  // of each covariate over the design; peak: its largest |level|
  double ybar = 0, yvar = 0;

  Design(const std::vector<double>& ys, const std::vector<std::vector<double>>& xs, const std::vector<size_t>& rows,
         double rho)
      : x(xs.size()), mean(xs.size(), 0.0), sd(xs.size(), 0.0), peak(xs.size(), 0.0) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const size_t t = rows[i];
      for (size_t j = 0; j < xs.size(); ++j) peak[j] = std::max(peak[j], std::fabs(xs[j][t]));
      if (rho > 0 && (i == 0 || rows[i - 1] != t - 1)) continue;
      y.push_back(rho > 0 ? ys[t] - rho * ys[t - 1] : ys[t]);
      for (size_t j = 0; j < xs.size(); ++j) x[j].push_back(rho > 0 ? xs[j][t] - rho * xs[j][t - 1] : xs[j][t]);
    }
    const double n = static_cast<double>(std::max<size_t>(y.size(), 1));
    for (double v : y) ybar += v / n;
    for (double v : y) yvar += (v - ybar) * (v - ybar) / n;
    for (size_t j = 0; j < xs.size(); ++j) {
      for (double v : x[j]) mean[j] += v / n;
      for (double v : x[j]) sd[j] += (v - mean[j]) * (v - mean[j]) / n;
      sd[j] = std::sqrt(sd[j]);
    }
  }
  // Whether covariate j moves here beyond rounding of its levels (a straight line's changes do
  // not: they are constant).
  bool varies(size_t j) const { return sd[j] > 1e-9 * peak[j]; }
  double z(size_t j, size_t i) const { return (x[j][i] - mean[j]) / sd[j]; }

  struct Solution {
    std::vector<double> coef, se, t;  // per covariate of `use`; coef and se per unit of it
  };
  // Least squares of y on the covariates `use` (standardised, a ridge of 1e-6 per row for
  // conditioning). Needs two rows more than covariates.
  std::optional<Solution> solve(const std::vector<size_t>& use) const {
    const size_t k = use.size();
    const double n = static_cast<double>(y.size());
    if (y.size() < k + 2) return std::nullopt;
    std::vector<std::vector<double>> A(k, std::vector<double>(k, 0.0));
    std::vector<double> beta(k, 0.0);
    for (size_t i = 0; i < y.size(); ++i)
      for (size_t a = 0; a < k; ++a) {
        beta[a] += z(use[a], i) * (y[i] - ybar);
        for (size_t b = 0; b <= a; ++b) A[a][b] += z(use[a], i) * z(use[b], i);
      }
    for (size_t a = 0; a < k; ++a) {
      A[a][a] += 1e-6 * n;
      for (size_t b = 0; b < a; ++b) A[b][a] = A[a][b];
    }
    std::vector<std::vector<double>> L = A;
    if (!solve_spd(L, beta)) return std::nullopt;
    double sse = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      double e = y[i] - ybar;
      for (size_t a = 0; a < k; ++a) e -= beta[a] * z(use[a], i);
      sse += e * e;
    }
    // The residual variance, floored relative to the target's: an exact fit keeps finite t.
    const double s2 = std::max(sse / (n - static_cast<double>(k) - 1), std::max(1e-20 * yvar, 1e-300));
    Solution s;
    for (size_t a = 0; a < k; ++a) {  // (A^-1)_aa from a unit right-hand side
      std::vector<std::vector<double>> La = A;
      std::vector<double> unit(k, 0.0);
      unit[a] = 1;
      solve_spd(La, unit);
      const double se = std::sqrt(s2 * unit[a]);
      s.coef.push_back(beta[a] / sd[use[a]]);
      s.se.push_back(se / sd[use[a]]);
      s.t.push_back(beta[a] / se);
    }
    return s;
  }
};

}  // namespace

CovariateRegression CovariateRegression::fit(const std::vector<double>& y, const std::vector<std::vector<double>>& given,
                                             size_t max_lag) {
  CovariateRegression f;
  // A lag past the history leaves no step with every candidate known: nothing to try there (and
  // a huge max_lag allocates nothing).
  max_lag = std::min(max_lag, y.size());
  f.lags = max_lag;
  for (size_t j = 0; j < given.size(); ++j)
    if (given[j].size() < y.size())
      throw Error("covariate regression: covariate " + std::to_string(j + 1) + " has " + std::to_string(given[j].size()) +
                  " steps, the target " + std::to_string(y.size()));
  // The candidates: each covariate at each lag k in [0, max_lag], moved k steps on (step t holds
  // its step t - k, the first k unknown), so that a driver whose effect arrives k steps later
  // lines up with it. Without lags they are the covariates as given.
  std::vector<std::vector<double>> x;
  x.reserve(given.size() * (max_lag + 1));
  for (const auto& g : given)
    for (size_t k = 0; k <= max_lag; ++k) {
      std::vector<double> moved(g.size(), std::numeric_limits<double>::quiet_NaN());
      std::copy(g.begin(), g.end() - static_cast<std::ptrdiff_t>(std::min(k, g.size())),
                moved.begin() + static_cast<std::ptrdiff_t>(std::min(k, g.size())));
      x.push_back(std::move(moved));
    }
  // Each covariate's test is at 1% over its lags (Bonferroni): |t| >= the normal quantile of
  // 1 - 0.005 / (max_lag + 1), 2.58 for one lag, 3.36 for 13; a noise covariate is as rarely
  // taken in at every max_lag.
  const double min_t = max_lag == 0 ? kMinT : normal_quantile(1 - 0.005 / static_cast<double>(max_lag + 1));
  f.coef.assign(x.size(), 0.0);
  std::vector<size_t> rows;
  for (size_t t = 0; t < y.size(); ++t) {
    bool complete = std::isfinite(y[t]);
    for (size_t j = 0; complete && j < x.size(); ++j) complete = std::isfinite(x[j][t]);
    if (complete) rows.push_back(t);
  }
  f.steps = rows.size();

  // Which covariates the target follows, chosen on changes by forward selection: take in the one
  // whose coefficient has the largest |t| beside those already in, while it is at least kMinT.
  // Two trending series that have nothing to do with each other correlate in levels (a spurious
  // regression) but not in their steps; a covariate the target does not follow must leave its
  // forecast alone; and of two that move together (x and 1 - x, a driver and its copy) the
  // second adds nothing once the first is in.
  const Design changes(y, x, rows, 1.0);
  std::vector<size_t> kept;
  std::optional<Design::Solution> on_changes;
  for (;;) {
    size_t best = x.size();
    double best_t = min_t;
    std::optional<Design::Solution> best_fit;
    for (size_t j = 0; j < x.size(); ++j) {
      if (!changes.varies(j) || std::find(kept.begin(), kept.end(), j) != kept.end()) continue;
      std::vector<size_t> with = kept;
      with.push_back(j);
      auto s = changes.solve(with);
      if (s && std::fabs(s->t.back()) >= best_t) best = j, best_t = std::fabs(s->t.back()), best_fit = std::move(s);
    }
    if (best == x.size()) break;
    kept.push_back(best);
    on_changes = std::move(best_fit);
  }
  if (kept.empty()) return f;  // nothing the target clearly follows: its forecast is left alone

  // How much: a regression with AR(1) errors (Cochrane-Orcutt), so that the estimate is the
  // levels one when the target's deviations from the fit are stationary (where a lagged or
  // smoothed effect shows fully) and moves to the changes one as they wander (where a levels fit
  // would itself be spurious): fit on quasi-differences v_t - rho v_{t-1}, rho the lag-one
  // autocorrelation of the deviations, from 0 (levels), until rho settles.
  std::vector<double> coef = on_changes->coef;
  double rho = 0;
  for (int iteration = 0; iteration < 50; ++iteration) {
    const Design quasi(y, x, rows, rho);
    if (!std::all_of(kept.begin(), kept.end(), [&](size_t j) { return quasi.varies(j); })) break;
    const auto s = quasi.solve(kept);
    if (!s) break;
    coef = s->coef;
    // The deviations' lag-one autocorrelation over consecutive complete steps, in [0, 1].
    std::vector<double> u(y.size(), 0.0);
    double level = 0;
    for (size_t t : rows) {
      u[t] = y[t];
      for (size_t a = 0; a < kept.size(); ++a) u[t] -= coef[a] * x[kept[a]][t];
      level += u[t] / static_cast<double>(rows.size());
    }
    double num = 0, den = 0;
    for (size_t i = 1; i < rows.size(); ++i)
      if (rows[i - 1] == rows[i] - 1)
        num += (u[rows[i]] - level) * (u[rows[i - 1]] - level), den += std::pow(u[rows[i - 1]] - level, 2);
    const double next = den > 0 ? std::clamp(num / den, 0.0, 1.0) : 0.0;
    if (std::fabs(next - rho) < 1e-6) break;
    rho = next;
  }
  for (size_t a = 0; a < kept.size(); ++a) f.coef[kept[a]] = coef[a];
  // The level: the mean of what the covariates leave of the target over the complete steps.
  for (size_t t : rows) {
    double v = y[t];
    for (size_t j = 0; j < x.size(); ++j) v -= f.coef[j] * x[j][t];
    f.intercept += v / static_cast<double>(rows.size());
  }
  f.fitted = true;
  return f;
}

double CovariateRegression::at(const std::vector<std::vector<double>>& x, size_t t) const {
  if (!fitted) return 0;
  double v = intercept;
  for (size_t c = 0; c < coef.size(); ++c) {
    if (coef[c] == 0) continue;
    const size_t j = c / (lags + 1), k = c % (lags + 1);
    if (t < k) return std::numeric_limits<double>::quiet_NaN();
    v += coef[c] * x[j][t - k];
  }
  return v;
}

std::vector<double> CovariateRegression::residual(const std::vector<double>& y,
                                                  const std::vector<std::vector<double>>& x) const {
  std::vector<double> out(y.size());
  for (size_t t = 0; t < y.size(); ++t) {
    const double v = at(x, t);
    out[t] = std::isfinite(v) ? y[t] - v : std::numeric_limits<double>::quiet_NaN();
  }
  return out;
}

void check_regression_lags(int64_t lags, const std::string& what) {
  if (lags < 0) throw Error(what + " must be 0 or the largest lag in steps, got " + std::to_string(lags));
  // Each lag is a candidate column of the whole history; past this many, a covariate's 1% test
  // over its lags asks |t| >= 4.4, and the columns of a long history would fill memory.
  if (lags > kMaxRegressionLags)
    throw Error(what + " must be at most " + std::to_string(kMaxRegressionLags) + " steps, got " + std::to_string(lags));
}

}  // namespace orrery
