// Errors counted per interval (a "count" metric): a small share of the host's requests fail
// (1e-5 to 1%), so most intervals hold none, until an incident (0-2 a series, 2 steps to 10%
// of the series) multiplies the share 10-1000 times, up to every request.
#include <algorithm>
#include <cmath>

#include "../metric.h"

namespace orrery::obs {

void errors(Rng& rng, const Host& h, std::span<double> y) {
  const double T = static_cast<double>(y.size());
  const double requests = rng.log_uniform(0.1, 1000);  // per second at load 1
  const double share = rng.log_uniform(1e-5, 1e-2);
  struct Incident { double from, to, factor; };
  std::vector<Incident> incidents;
  for (int64_t n = rng.integer(0, 2); n > 0; --n) {
    const double from = rng.uniform(0, T);
    incidents.push_back({from, from + rng.log_uniform(2, std::max(3.0, 0.1 * T)), rng.log_uniform(10, 1000)});
  }
  for (size_t i = 0; i < y.size(); ++i) {
    const double t = static_cast<double>(i);
    double p = share;
    for (const Incident& c : incidents)
      if (t >= c.from && t < c.to) p *= c.factor;
    y[i] = static_cast<double>(rng.poisson(std::min(1.0, p) * requests * h.load[i] * h.interval));
  }
}

}  // namespace orrery::obs
