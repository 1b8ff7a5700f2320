// Naive and SeasonalNaive as statsforecast defines them, with its normal intervals:
//   naive:           y(T+h) = y(T),                sigma_h = sigma sqrt(h),
//                    sigma^2 = sum (y_t - y_{t-1})^2 / (n - 1);
//   seasonal naive:  y(T+h) = y(T+h-m k), k = floor((h-1)/m) + 1, sigma_h = sigma sqrt(k),
//                    sigma^2 = sum (y_t - y_{t-m})^2 / (n - m).
// Naive is seasonal naive with m = 1, so one function serves both.
#include <cmath>

#include "common.h"

namespace orrery::baselines {
namespace {

std::vector<std::vector<double>> seasonal_naive(const char* who, const std::vector<double>& history,
                                                int64_t season, int64_t horizon,
                                                const std::vector<double>& levels) {
  check_request(who, horizon, levels);
  const std::vector<double> y = fill_missing(history, who);
  const int64_t n = static_cast<int64_t>(y.size());
  const int64_t m = usable_season(season, y.size());
  double ss = 0;
  for (int64_t t = m; t < n; ++t) ss += (y[t] - y[t - m]) * (y[t] - y[t - m]);
  const double sigma = n > m ? std::sqrt(ss / static_cast<double>(n - m)) : 0.0;
  std::vector<double> point(horizon), sigma_h(horizon);
  for (int64_t h = 1; h <= horizon; ++h) {
    const int64_t k = (h - 1) / m + 1;  // whole seasons back
    point[h - 1] = y[n - 1 + h - m * k];
    sigma_h[h - 1] = sigma * std::sqrt(static_cast<double>(k));
  }
  return normal_quantiles(point, sigma_h, levels);
}

class Naive : public Baseline {
 public:
  std::string name() const override { return "naive"; }
  std::vector<std::vector<double>> forecast(const std::vector<double>& history, int64_t,
                                            int64_t horizon,
                                            const std::vector<double>& levels) const override {
    return seasonal_naive("naive", history, 1, horizon, levels);
  }
};

class SeasonalNaive : public Baseline {
 public:
  std::string name() const override { return "seasonal_naive"; }
  std::vector<std::vector<double>> forecast(const std::vector<double>& history, int64_t season,
                                            int64_t horizon,
                                            const std::vector<double>& levels) const override {
    return seasonal_naive("seasonal naive", history, season, horizon, levels);
  }
};

}  // namespace

std::unique_ptr<Baseline> make_naive() { return std::make_unique<Naive>(); }
std::unique_ptr<Baseline> make_seasonal_naive() { return std::make_unique<SeasonalNaive>(); }

}  // namespace orrery::baselines
