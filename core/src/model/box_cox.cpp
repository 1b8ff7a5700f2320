#include "orrery/host/box_cox.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace orrery {

double box_cox(double y, double lambda) {
  return lambda == 0 ? std::log(y) : (std::pow(y, lambda) - 1) / lambda;
}

double inverse_box_cox(double z, double lambda) {
  if (lambda == 0) return std::exp(z);
  const double base = lambda * z + 1;
  if (std::isnan(base)) return base;
  return base > 0 ? std::pow(base, 1 / lambda) : 0.0;
}

double guerrero_lambda(const std::vector<double>& y, int64_t period) {
  const size_t p = static_cast<size_t>(std::max<int64_t>(period, 2));
  for (double v : y)
    if (std::isfinite(v) && v <= 0) return 1;
  // Each whole block of p steps, counted back from the last: its mean and (sample) spread.
  struct Block {
    double mean, sd;
  };
  std::vector<Block> blocks;
  for (size_t end = y.size(); end >= p; end -= p) {
    double n = 0, sum = 0, squares = 0;
    for (size_t t = end - p; t < end; ++t)
      if (std::isfinite(y[t])) n += 1, sum += y[t];
    if (n < 2) continue;
    const double mean = sum / n;
    for (size_t t = end - p; t < end; ++t)
      if (std::isfinite(y[t])) squares += (y[t] - mean) * (y[t] - mean);
    blocks.push_back({mean, std::sqrt(squares / (n - 1))});
  }
  if (blocks.size() < 3) return 1;
  // The coefficient of variation of sd_i / mean_i^(1 - lambda): log-space ratios keep it finite
  // for any level, and the ratios are rescaled by their largest, which the coefficient ignores.
  auto variation = [&](double lambda) {
    std::vector<double> logs;
    for (const Block& b : blocks) logs.push_back(b.sd > 0 ? std::log(b.sd) - (1 - lambda) * std::log(b.mean)
                                                          : -std::numeric_limits<double>::infinity());
    const double top = *std::max_element(logs.begin(), logs.end());
    if (!std::isfinite(top)) return std::numeric_limits<double>::quiet_NaN();  // no block moves
    double sum = 0, squares = 0;
    for (double l : logs) sum += std::exp(l - top);
    const double mean = sum / static_cast<double>(logs.size());
    for (double l : logs) squares += (std::exp(l - top) - mean) * (std::exp(l - top) - mean);
    return std::sqrt(squares / static_cast<double>(logs.size() - 1)) / mean;
  };
  // A grid of hundredths from 1 down: of two exponents that fit alike, the milder transform.
  double best = 1, best_variation = variation(1);
  if (!std::isfinite(best_variation)) return 1;
  for (int k = 99; k >= 0; --k) {
    const double lambda = k / 100.0, v = variation(lambda);
    if (v < best_variation) best = lambda, best_variation = v;
  }
  return best;
}

}  // namespace orrery
