// See arima_poly.h.
#include "arima_poly.h"

#include <cmath>

namespace orrery::baselines {
namespace {

// Step-down (Schur-Cohn): the reflection coefficients of ar, last first; empty when one is
// outside (-1, 1).
std::vector<double> reflections(std::vector<double> a) {
  std::vector<double> k(a.size());
  for (size_t j = a.size(); j-- > 0;) {
    const double r = a[j];
    if (!(std::fabs(r) < 1)) return {};
    k[j] = r;
    std::vector<double> prev(j);
    for (size_t i = 0; i < j; ++i) prev[i] = (a[i] + r * a[j - i - 1]) / (1 - r * r);
    a = prev;
  }
  return k;
}

}  // namespace

std::vector<double> from_pacf(const std::vector<double>& raw) {
  std::vector<double> a(raw.size()), work(raw.size());
  for (size_t j = 0; j < raw.size(); ++j) a[j] = work[j] = std::tanh(raw[j]);
  for (size_t j = 1; j < raw.size(); ++j) {
    for (size_t k = 0; k < j; ++k) work[k] -= a[j] * a[j - k - 1];
    for (size_t k = 0; k < j; ++k) a[k] = work[k];
  }
  return a;
}

std::vector<double> to_pacf(const std::vector<double>& ar) {
  if (ar.empty()) return {};
  std::vector<double> k = reflections(ar);
  for (double& v : k) v = std::atanh(v);
  return k;
}

bool is_stationary(const std::vector<double>& ar) { return ar.empty() || !reflections(ar).empty(); }

}  // namespace orrery::baselines
