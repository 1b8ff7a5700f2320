#pragma once
// Forecast scores as GIFT-Eval computes them (gluonts ev, axis=None): MASE of the median,
// pooled over all windows and steps, and CRPS as the mean weighted quantile loss.
#include <cstdint>
#include <vector>

namespace orrery {

// Mean absolute seasonal difference of the history (NaN entries skipped); m > length -> m = 1.
double seasonal_error(const std::vector<double>& history, int64_t m);

// Inverse of the standard normal CDF.
double normal_quantile(double p);

// statsforecast SeasonalNaive(m) with its normal intervals: quantiles[q][h]. The same as
// make_baseline("seasonal_naive") (baselines.h), kept for existing callers.
std::vector<std::vector<double>> seasonal_naive_quantiles(const std::vector<double>& history,
                                                          int64_t m, int64_t horizon,
                                                          const std::vector<double>& levels);

class ScoreAccumulator {
 public:
  explicit ScoreAccumulator(std::vector<double> levels);
  // quantiles[q][h] at this accumulator's levels; NaN targets are skipped.
  void add(const std::vector<double>& history, int64_t season, const std::vector<double>& target,
           const std::vector<std::vector<double>>& quantiles);
  double mase() const;  // pooled over items and steps
  double crps() const;  // mean over levels of sum QL_q / sum |y|
  double weighted_quantile_loss(size_t level) const;  // sum QL_q / sum |y| at levels[level]
  double coverage(size_t level) const;                // share of targets at or below the quantile
  double mae_coverage() const;                        // mean over levels of |coverage - level|
  // Share of targets with q_lo <= y <= q_hi, e.g. the 10-90 band.
  double band_coverage(double lo, double hi) const;
  int64_t count() const { return count_; }
 private:
  std::vector<double> levels_, ql_sum_;
  std::vector<int64_t> below_, strictly_below_;
  double scaled_abs_sum_ = 0, abs_target_sum_ = 0;
  int64_t count_ = 0;
};

}  // namespace orrery
