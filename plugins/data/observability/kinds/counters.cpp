// Monotone counters (requests_total, bytes_sent) and the rates derived from them. A counter
// adds each interval's events (Poisson at the host's load, events or bytes) and restarts from
// zero when its process does (0-3 resets a series). Between resets it never decreases.
#include <algorithm>
#include <cmath>

#include "../metric.h"

namespace orrery::obs {

namespace {

struct Counted {
  std::vector<double> increment;  // what each interval added
  std::vector<bool> reset;        // the process restarted during this interval
};

Counted count(Rng& rng, const Host& h, size_t T) {
  const double per_second = rng.log_uniform(0.01, 1000);               // events at load 1
  const double size = rng.chance(0.3) ? rng.log_uniform(100, 1e4) : 1; // bytes per event, or 1
  Counted c{std::vector<double>(T), std::vector<bool>(T, false)};
  for (size_t t = 0; t < T; ++t)
    c.increment[t] = size * static_cast<double>(rng.poisson(per_second * h.load[t] * h.interval));
  if (T > 1 && rng.chance(0.5))
    for (int64_t n = rng.integer(1, 3); n > 0; --n) c.reset[1 + rng.index(T - 1)] = true;
  return c;
}

}  // namespace

// The counter itself, from a start value (70%: it has been running for a while).
void counter(Rng& rng, const Host& h, std::span<double> y) {
  const Counted c = count(rng, h, y.size());
  double total = rng.chance(0.7) ? std::floor(rng.log_uniform(1, 1e6)) : 0;
  for (size_t t = 0; t < y.size(); ++t) {
    total = (c.reset[t] ? 0 : total) + c.increment[t];
    y[t] = total;
  }
}

// Per-second rate of a counter. Reset-aware, as Prometheus' rate() computes it (70%): after a
// reset the counter's value is the increase, so the rate stays non-negative. Otherwise the
// naive derivative (value - previous) / interval that some agents report, which dips below
// zero at each reset by the counter's total before it.
void rate(Rng& rng, const Host& h, std::span<double> y) {
  const Counted c = count(rng, h, y.size());
  const bool reset_aware = rng.chance(0.7);
  double total = std::floor(rng.log_uniform(1, 1e6));
  for (size_t t = 0; t < y.size(); ++t) {
    const double before = total;
    total = (c.reset[t] ? 0 : total) + c.increment[t];
    y[t] = (reset_aware || !c.reset[t] ? c.increment[t] : total - before) / h.interval;
  }
}

}  // namespace orrery::obs
