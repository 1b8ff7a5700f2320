#include "orrery/host/covariate_regression.h"

#include <cmath>
#include <limits>

#include "orrery/error.h"

namespace orrery {

namespace {

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

}  // namespace

CovariateRegression CovariateRegression::fit(const std::vector<double>& y, const std::vector<std::vector<double>>& x) {
  CovariateRegression f;
  f.coef.assign(x.size(), 0.0);
  for (size_t j = 0; j < x.size(); ++j)
    if (x[j].size() < y.size())
      throw Error("covariate regression: covariate " + std::to_string(j + 1) + " has " + std::to_string(x[j].size()) +
                  " steps, the target " + std::to_string(y.size()));
  std::vector<size_t> rows;
  for (size_t t = 0; t < y.size(); ++t) {
    bool complete = std::isfinite(y[t]);
    for (size_t j = 0; complete && j < x.size(); ++j) complete = std::isfinite(x[j][t]);
    if (complete) rows.push_back(t);
  }
  f.steps = rows.size();
  if (rows.empty()) return f;
  const double n = static_cast<double>(rows.size());

  // Standardise each covariate over the complete steps; a constant one is the intercept's.
  std::vector<size_t> used;
  std::vector<double> mean(x.size(), 0.0), sd(x.size(), 0.0);
  for (size_t j = 0; j < x.size(); ++j) {
    for (size_t t : rows) mean[j] += x[j][t];
    mean[j] /= n;
    for (size_t t : rows) sd[j] += (x[j][t] - mean[j]) * (x[j][t] - mean[j]);
    sd[j] = std::sqrt(sd[j] / n);
    if (sd[j] > 1e-12 * (1 + std::fabs(mean[j]))) used.push_back(j);
  }
  double ybar = 0;
  for (size_t t : rows) ybar += y[t];
  ybar /= n;
  if (rows.size() < used.size() + 2) return f;

  const size_t k = used.size();
  std::vector<std::vector<double>> A(k, std::vector<double>(k, 0.0));
  std::vector<double> r(k, 0.0);
  for (size_t t : rows)
    for (size_t a = 0; a < k; ++a) {
      const double za = (x[used[a]][t] - mean[used[a]]) / sd[used[a]];
      r[a] += za * (y[t] - ybar);
      for (size_t b = 0; b <= a; ++b) A[a][b] += za * (x[used[b]][t] - mean[used[b]]) / sd[used[b]];
    }
  for (size_t a = 0; a < k; ++a) {
    A[a][a] += 1e-6 * n;
    for (size_t b = 0; b < a; ++b) A[b][a] = A[a][b];
  }
  if (!solve_spd(A, r)) return f;
  f.intercept = ybar;
  for (size_t a = 0; a < k; ++a) {
    f.coef[used[a]] = r[a] / sd[used[a]];
    f.intercept -= f.coef[used[a]] * mean[used[a]];
  }
  f.fitted = true;
  return f;
}

double CovariateRegression::at(const std::vector<std::vector<double>>& x, size_t t) const {
  if (!fitted) return 0;
  double v = intercept;
  for (size_t j = 0; j < coef.size(); ++j)
    if (coef[j] != 0) v += coef[j] * x[j][t];
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

}  // namespace orrery
