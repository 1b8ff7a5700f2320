// Request latency in milliseconds as a percentile of each interval's requests (p50, p90, p95
// or p99), from a heavy-tailed distribution: log-normal (60%) or Pareto (40%). It grows with
// load as a queue does (response time ~ 1 / (1 - utilisation)), its estimate is noisier
// when an interval holds few requests (and more so for high percentiles), and rare
// hiccups (GC pauses, timeouts) multiply it 2-20 times.
#include <algorithm>
#include <cmath>

#include "../metric.h"

namespace orrery::obs {

void latency(Rng& rng, const Host& h, std::span<double> y) {
  static constexpr double kQuantile[] = {0.5, 0.9, 0.95, 0.99};
  static constexpr double kZ[] = {0, 1.2816, 1.6449, 2.3263};      // standard normal quantiles
  static constexpr double kSpread[] = {0.3, 0.6, 0.8, 1.5};         // relative sampling error at 1 request
  static constexpr double kWeight[] = {0.35, 0.15, 0.15, 0.35};     // p50 and p99 are the usual panels
  const size_t q = rng.pick(kWeight);

  const double median = rng.log_uniform(0.5, 300);  // ms at light load
  double tail;  // percentile / median of the request-latency distribution
  if (rng.chance(0.6)) {
    tail = std::exp(rng.uniform(0.3, 1.2) * kZ[q]);  // log-normal, sigma 0.3-1.2
  } else {
    const double alpha = rng.uniform(1.2, 3);  // Pareto tail index: quantile ~ (1 - q)^(-1/alpha)
    tail = std::pow(2 * (1 - kQuantile[q]), -1 / alpha);
  }
  const double busiest = rng.uniform(0.3, 0.95);      // utilisation at the peak load
  const double requests = rng.log_uniform(0.1, 1000); // per second at load 1
  const double hiccup_p = rng.chance(0.5) ? rng.uniform(0, 0.005) : 0;
  for (size_t t = 0; t < y.size(); ++t) {
    const double rho = busiest * h.load[t] / h.peak_load;
    const double n = std::max(1.0, requests * h.load[t] * h.interval);
    const double error = std::min(1.0, kSpread[q] / std::sqrt(n));
    double v = median * tail / (1 - rho) * std::exp(error * rng.normal());
    if (rng.chance(hiccup_p)) v *= rng.log_uniform(2, 20);
    y[t] = v;
  }
}

}  // namespace orrery::obs
