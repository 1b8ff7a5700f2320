// See least_squares.h.
#include "least_squares.h"

#include <cmath>

namespace orrery::baselines {

std::vector<double> least_squares(const std::vector<double>& y, const std::vector<std::vector<double>>& x) {
  const size_t k = x.size();
  std::vector<double> scale(k, 0.0), A(k * k, 0.0), b(k, 0.0);
  const auto row_ok = [&](size_t t) {
    if (!std::isfinite(y[t])) return false;
    for (const auto& c : x)
      if (!std::isfinite(c[t])) return false;
    return true;
  };
  for (size_t j = 0; j < k; ++j) {
    for (size_t t = 0; t < y.size(); ++t)
      if (row_ok(t)) scale[j] += x[j][t] * x[j][t];
    scale[j] = std::sqrt(scale[j]);
    if (!(scale[j] > 0)) return {};
  }
  for (size_t t = 0; t < y.size(); ++t) {
    if (!row_ok(t)) continue;
    for (size_t i = 0; i < k; ++i) {
      b[i] += x[i][t] / scale[i] * y[t];
      for (size_t j = 0; j < k; ++j) A[i * k + j] += x[i][t] / scale[i] * x[j][t] / scale[j];
    }
  }
  // Gaussian elimination with partial pivoting.
  std::vector<size_t> perm(k);
  for (size_t c = 0; c < k; ++c) {
    size_t best = c;
    for (size_t i = c + 1; i < k; ++i)
      if (std::fabs(A[i * k + c]) > std::fabs(A[best * k + c])) best = i;
    if (std::fabs(A[best * k + c]) < 1e-12) return {};
    for (size_t j = 0; j < k; ++j) std::swap(A[c * k + j], A[best * k + j]);
    std::swap(b[c], b[best]);
    for (size_t i = c + 1; i < k; ++i) {
      const double f = A[i * k + c] / A[c * k + c];
      for (size_t j = c; j < k; ++j) A[i * k + j] -= f * A[c * k + j];
      b[i] -= f * b[c];
    }
  }
  std::vector<double> beta(k);
  for (size_t c = k; c-- > 0;) {
    double v = b[c];
    for (size_t j = c + 1; j < k; ++j) v -= A[c * k + j] * beta[j];
    beta[c] = v / A[c * k + c];
  }
  for (size_t j = 0; j < k; ++j) beta[j] /= scale[j];
  return beta;
}

}  // namespace orrery::baselines
