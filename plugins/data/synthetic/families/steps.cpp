// Change points and level shifts after TempoPFN's step generator: the series is a chain of
// segments, each drawn from a pattern (table below, TempoPFN's lengths, change-point counts,
// step sizes and weights), each starting at the level where the previous one ended. Then a
// base level U(5, 15), a daily (288-step) and a weekly (2016-step) sine, small noise, and a
// factor U(0.1, 10). TempoPFN's lengths are for 2048 steps; for other lengths they scale with
// max(T, 256) / 2048, so a short series still shows several segments.
#include <algorithm>
#include <cmath>

#include "../family.h"
#include "../noise.h"

namespace orrery::synth {

namespace {

enum class Pattern { stable, gradual_up, gradual_down, spike_up, spike_down, oscillating, random_walk };

struct PatternSpec {
  Pattern pattern;
  int64_t length_lo, length_hi, changes_lo, changes_hi;
  double weight;
};

constexpr PatternSpec kPatterns[] = {
    {Pattern::stable, 200, 600, 0, 3, 0.8},
    {Pattern::gradual_up, 300, 700, 5, 15, 0.6},
    {Pattern::gradual_down, 300, 700, 5, 15, 0.6},
    {Pattern::spike_up, 200, 500, 3, 8, 0.4},
    {Pattern::spike_down, 200, 500, 3, 8, 0.4},
    {Pattern::oscillating, 400, 800, 8, 20, 0.3},
    {Pattern::random_walk, 100, 400, 5, 20, 0.2},
};

// Writes one segment into y[0, n) starting from `level`; returns the level it ends at.
double segment(Rng& rng, const PatternSpec& p, std::span<double> y, double level) {
  const int64_t n = static_cast<int64_t>(y.size());
  std::vector<int64_t> at(static_cast<size_t>(rng.integer(p.changes_lo, p.changes_hi)));
  for (auto& a : at) a = rng.integer(0, n - 1);
  std::sort(at.begin(), at.end());
  const double drift = p.pattern == Pattern::gradual_up     ? rng.uniform(0, 0.1)
                       : p.pattern == Pattern::gradual_down ? -rng.uniform(0, 0.1)
                                                            : 0;
  double spike = 0;  // spike patterns: a jump that decays by 0.7 a step back to the level
  size_t next = 0;
  for (int64_t t = 0; t < n; ++t) {
    for (; next < at.size() && at[next] == t; ++next) {
      switch (p.pattern) {
        case Pattern::stable: level += rng.uniform(-1, 1); break;
        case Pattern::gradual_up: level += rng.uniform(1, 5); break;
        case Pattern::gradual_down: level -= rng.uniform(1, 5); break;
        case Pattern::spike_up: spike += rng.uniform(3, 10); break;
        case Pattern::spike_down: spike -= rng.uniform(3, 10); break;
        case Pattern::oscillating: level += (next % 2 ? -1 : 1) * std::fabs(rng.uniform(-4, 4)); break;
        case Pattern::random_walk: level += rng.uniform(-3, 3); break;
      }
    }
    level += drift;
    y[static_cast<size_t>(t)] = level + spike;
    spike *= 0.7;
  }
  return level;
}

}  // namespace

void steps(Rng& rng, std::span<double> y, const Settings&) {
  const size_t T = y.size();
  const double stretch = static_cast<double>(std::max<size_t>(T, 256)) / 2048;
  double weights[std::size(kPatterns)];
  for (size_t i = 0; i < std::size(kPatterns); ++i) weights[i] = kPatterns[i].weight;

  double level = 0;
  for (size_t start = 0; start < T;) {
    const PatternSpec& p = kPatterns[rng.pick(weights)];
    const auto length = std::max<int64_t>(
        2, std::llround(static_cast<double>(rng.integer(p.length_lo, p.length_hi)) * stretch));
    const size_t n = std::min(T - start, static_cast<size_t>(length));
    level = segment(rng, p, y.subspan(start, n), level);
    start += n;
  }

  const double base = rng.uniform(5, 15);
  const double daily = rng.uniform(0, 0.8), weekly = rng.uniform(0, 0.7);
  const double daily_phase = rng.uniform(0, 2 * M_PI), weekly_phase = rng.uniform(0, 2 * M_PI);
  for (size_t t = 0; t < T; ++t) {
    const double u = static_cast<double>(t);
    y[t] += base + daily * std::sin(2 * M_PI * u / 288 + daily_phase) +
            weekly * std::sin(2 * M_PI * u / 2016 + weekly_phase);
  }
  add_noise(rng, y, rng.uniform(0.001, 0.01));
  const double factor = rng.uniform(0.1, 10);
  for (double& v : y) v *= factor;
}

}  // namespace orrery::synth
