#include "orrery/host/scoring.h"

#include <cmath>
#include <limits>

#include "orrery/host/baselines.h"
#include "orrery/error.h"

namespace orrery {

double seasonal_error(const std::vector<double>& history, int64_t m) {
  const int64_t L = static_cast<int64_t>(history.size());
  if (m > L) m = 1;
  double sum = 0;
  int64_t n = 0;
  for (int64_t t = m; t < L; ++t) {
    double d = history[t] - history[t - m];
    if (std::isfinite(d)) sum += std::fabs(d), ++n;
  }
  return n ? sum / n : std::numeric_limits<double>::quiet_NaN();
}

double normal_quantile(double p) {
  // Acklam's rational approximation, refined by one Halley step (|error| < 1e-12).
  if (p <= 0) return -std::numeric_limits<double>::infinity();
  if (p >= 1) return std::numeric_limits<double>::infinity();
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p > 1 - 0.02425) {
    double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

std::vector<std::vector<double>> seasonal_naive_quantiles(const std::vector<double>& history,
                                                          int64_t m, int64_t horizon,
                                                          const std::vector<double>& levels) {
  // Kept for existing callers; the implementation is the "seasonal_naive" baseline.
  static const std::unique_ptr<Baseline> baseline = make_baseline("seasonal_naive");
  return baseline->forecast(history, m, horizon, levels);
}

ScoreAccumulator::ScoreAccumulator(std::vector<double> levels)
    : levels_(std::move(levels)), ql_sum_(levels_.size(), 0.0), below_(levels_.size(), 0), strictly_below_(levels_.size(), 0) {}

void ScoreAccumulator::add(const std::vector<double>& history, int64_t season,
                           const std::vector<double>& target,
                           const std::vector<std::vector<double>>& quantiles) {
  if (quantiles.size() != levels_.size()) throw Error("quantile count does not match the levels");
  const double scale = seasonal_error(history, season);
  // The median is the point forecast; with no 0.5 level, the middle one.
  size_t mid = levels_.size() / 2;
  for (size_t i = 0; i < levels_.size(); ++i)
    if (std::fabs(levels_[i] - 0.5) < 1e-9) mid = i;
  for (size_t t = 0; t < target.size(); ++t) {
    const double y = target[t];
    if (!std::isfinite(y)) continue;
    scaled_abs_sum_ += std::fabs(y - quantiles[mid][t]) / scale;
    abs_target_sum_ += std::fabs(y);
    for (size_t i = 0; i < levels_.size(); ++i) {
      const double f = quantiles[i][t];
      ql_sum_[i] += 2 * std::fabs(y - f) * std::fabs((f >= y ? 1.0 : 0.0) - levels_[i]);
      below_[i] += y <= f;
      strictly_below_[i] += y < f;
    }
    ++count_;
  }
}

double ScoreAccumulator::mase() const {
  return count_ ? scaled_abs_sum_ / count_ : std::numeric_limits<double>::quiet_NaN();
}

double ScoreAccumulator::weighted_quantile_loss(size_t level) const { return ql_sum_.at(level) / abs_target_sum_; }

double ScoreAccumulator::coverage(size_t level) const {
  return count_ ? static_cast<double>(below_.at(level)) / static_cast<double>(count_)
                : std::numeric_limits<double>::quiet_NaN();
}

double ScoreAccumulator::mae_coverage() const {
  double s = 0;
  for (size_t i = 0; i < levels_.size(); ++i) s += std::fabs(coverage(i) - levels_[i]);
  return s / static_cast<double>(levels_.size());
}

double ScoreAccumulator::band_coverage(double lo, double hi) const {
  auto index = [&](double q) {
    for (size_t i = 0; i < levels_.size(); ++i)
      if (std::fabs(levels_[i] - q) < 1e-9) return i;
    throw Error("no quantile level " + std::to_string(q) + " among the scored levels");
  };
  if (!count_) return std::numeric_limits<double>::quiet_NaN();
  // Quantiles rise with the level, so q_lo <= y <= q_hi counts y <= q_hi less y < q_lo.
  return static_cast<double>(below_[index(hi)] - strictly_below_[index(lo)]) / static_cast<double>(count_);
}

double ScoreAccumulator::crps() const {
  double s = 0;
  for (double q : ql_sum_) s += q / abs_target_sum_;
  return s / levels_.size();
}

}  // namespace orrery
