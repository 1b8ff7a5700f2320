#include "decompose.h"

#include <cmath>

namespace orrery::baselines {

std::vector<double> seasonal_component(const std::vector<double>& y, int64_t m, bool multiplicative) {
  const int64_t n = static_cast<int64_t>(y.size());
  // Centred weights: m terms of 1/m for odd m; m + 1 terms, the two ends halved, for even m.
  std::vector<double> w(m % 2 ? m : m + 1, 1.0 / static_cast<double>(m));
  if (m % 2 == 0) w.front() = w.back() = 0.5 / static_cast<double>(m);
  const int64_t half = static_cast<int64_t>(w.size()) / 2;
  std::vector<double> sum(m, 0.0);
  std::vector<int64_t> count(m, 0);
  for (int64_t t = half; t < n - half; ++t) {
    double trend = 0;
    for (int64_t k = 0; k < static_cast<int64_t>(w.size()); ++k) trend += w[k] * y[t - half + k];
    const double d = multiplicative ? y[t] / trend : y[t] - trend;
    if (std::isnan(d)) continue;
    sum[t % m] += d;
    ++count[t % m];
  }
  std::vector<double> phase(m);
  double mean = 0;
  for (int64_t i = 0; i < m; ++i) mean += phase[i] = sum[i] / static_cast<double>(count[i]);
  mean /= static_cast<double>(m);
  for (double& p : phase) p = multiplicative ? p / mean : p - mean;
  std::vector<double> s(n);
  for (int64_t t = 0; t < n; ++t) s[t] = phase[t % m];
  return s;
}

bool seasonality_test(const std::vector<double>& y, int64_t m) {
  const int64_t n = static_cast<int64_t>(y.size());
  if (m < 4 || n < 2 * m) return false;
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(n);
  auto acov = [&](int64_t k) {
    double s = 0;
    for (int64_t t = 0; t + k < n; ++t) s += (y[t] - mean) * (y[t + k] - mean);
    return s;
  };
  const double c0 = acov(0);
  if (!(c0 > 0)) return false;  // a constant series has no seasonality
  double sum_sq = 0;
  for (int64_t k = 1; k < m; ++k) sum_sq += std::pow(acov(k) / c0, 2);
  const double stat = std::sqrt((1 + 2 * sum_sq) / static_cast<double>(n));
  return std::fabs(acov(m) / c0) / stat > 1.6448536269514722;  // Phi^-1(0.95)
}

}  // namespace orrery::baselines
