#pragma once
// The random source every generator draws from. One Rng belongs to one series: it is seeded
// from (source seed, batch seed, sample, variate) by the sampler, never shared between
// threads, so a series depends only on its seed whatever else was drawn before or beside it.
// The synthetic and observability priors both draw from it (data/common: shared by the data plugins).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>

namespace orrery::synth {

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}

  double uniform() { return std::uniform_real_distribution<double>(0, 1)(gen_); }
  double uniform(double a, double b) { return a + (b - a) * uniform(); }
  double log_uniform(double a, double b) { return std::exp(uniform(std::log(a), std::log(b))); }
  bool chance(double p) { return uniform() < p; }
  // A whole number in [lo, hi], both included.
  int64_t integer(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen_); }
  // An index in [0, n), n > 0: a uniform choice from a list.
  size_t index(size_t n) { return static_cast<size_t>(integer(0, static_cast<int64_t>(n) - 1)); }

  // The member distribution keeps the second value of each Box-Muller pair instead of
  // throwing it away, which halves the cost of the noise loops.
  double normal() { return normal_(gen_); }
  double normal(double mean, double sd) { return mean + sd * normal(); }
  double log_normal(double log_median, double sigma) { return std::exp(log_median + sigma * normal()); }
  double exponential(double mean) { return mean * std::exponential_distribution<double>(1)(gen_); }
  double gamma(double shape, double scale) { return std::gamma_distribution<double>(shape, scale)(gen_); }
  // Student-t with `df` degrees of freedom (unit scale, variance df/(df-2) for df > 2).
  double student_t(double df) { return normal() / std::sqrt(gamma(df / 2, 2) / df); }

  // Above a mean of 1000 the normal approximation (skewness < 0.03) replaces the exact
  // draw, whose set-up per call costs more than the rest of a metric's step.
  int64_t poisson(double mean) {
    if (!(mean > 0)) return 0;
    if (mean > 1000) return static_cast<int64_t>(std::llround(std::max(0.0, normal(mean, std::sqrt(mean)))));
    return std::poisson_distribution<int64_t>(mean)(gen_);
  }
  // Negative binomial by its Poisson-gamma mixture: mean `mean`, variance mean + mean^2/r.
  int64_t negative_binomial(double r, double mean) { return poisson(gamma(r, mean / r)); }

  // An index drawn with probability proportional to weights[i] (non-negative, not all zero).
  size_t pick(std::span<const double> weights) {
    double total = 0;
    for (double w : weights) total += w;
    double u = uniform() * total;
    for (size_t i = 0; i < weights.size(); ++i) {
      if (u < weights[i]) return i;
      u -= weights[i];
    }
    for (size_t i = weights.size(); i-- > 0;)  // rounding left u at the very end
      if (weights[i] > 0) return i;
    return 0;
  }

 private:
  std::mt19937_64 gen_;
  std::normal_distribution<double> normal_{0, 1};
};

}  // namespace orrery::synth
