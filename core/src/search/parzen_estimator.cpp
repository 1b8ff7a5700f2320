#include "orrery/host/search/parzen_estimator.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "orrery/host/search/truncnorm.h"
#include "orrery/sort_stably.h"

namespace orrery::search {

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

size_t Rng::choice(const std::vector<double>& p) {
  const double u = uniform() * std::accumulate(p.begin(), p.end(), 0.0);
  double cum = 0;
  for (size_t i = 0; i < p.size(); ++i)
    if ((cum += p[i]) > u) return i;
  return p.size() - 1;
}

std::vector<double> default_weights(size_t n) {
  if (n < 25) return std::vector<double>(n, 1.0);
  // numpy.linspace(1/n, 1, n - 25), then 25 ones
  std::vector<double> w;
  const size_t ramp = n - 25;
  const double start = 1.0 / static_cast<double>(n);
  for (size_t i = 0; i < ramp; ++i) {
    if (ramp == 1) { w.push_back(start); break; }
    const double step = (1.0 - start) / static_cast<double>(ramp - 1);
    w.push_back(i + 1 == ramp ? 1.0 : start + static_cast<double>(i) * step);
  }
  w.resize(n, 1.0);
  return w;
}

namespace {

bool is_log(const Distribution& d) { return d.kind != Distribution::Kind::categorical && d.log; }

// The bounds and step of a numeric dimension in the transformed space. A log integer becomes a
// continuous log range widened by half a step (Optuna 4.6's "log-int hack").
ParzenEstimator::Numeric transformed_range(const Distribution& d) {
  ParzenEstimator::Numeric n;
  n.low = d.log ? std::log(d.low) : d.low;
  n.high = d.log ? std::log(d.high) : d.high;
  n.step = d.step;
  if (d.step > 0 && d.log) {
    n.low = std::log(d.low - d.step / 2);
    n.high = std::log(d.high + d.step / 2);
    n.step = 0;
  }
  return n;
}

ParzenEstimator::Numeric numeric_kernels(const std::vector<double>& obs, ParzenEstimator::Numeric n,
                                         size_t dims, const ParzenSettings& s) {
  const double step = n.step, low = n.low, high = n.high, range = high - low + step;
  std::vector<double> sigma(obs.size());
  if (s.multivariate) {
    const double sigma0 = 0.2 * std::pow(static_cast<double>(std::max<size_t>(obs.size(), 1)),
                                         -1.0 / (static_cast<double>(dims) + 4)) * range;
    std::fill(sigma.begin(), sigma.end(), sigma0);
  } else {
    // Each mean's bandwidth is the larger gap to its neighbours among the means, the prior's
    // mean (the range's middle) and the range's ends (widened by half a step). Equal means are
    // kept in trial order (a stable sort; Optuna's numpy argsort leaves their order open).
    std::vector<double> mus = obs;
    mus.push_back(0.5 * (low + high));
    std::vector<size_t> order(mus.size());
    std::iota(order.begin(), order.end(), 0);
    sort_stably(order, [&](size_t a, size_t b) { return mus[a] < mus[b]; });
    std::vector<double> sorted(mus.size() + 2);
    sorted.front() = low - step / 2;
    sorted.back() = high + step / 2;
    for (size_t i = 0; i < order.size(); ++i) sorted[i + 1] = mus[order[i]];
    std::vector<double> sorted_sigma(mus.size());
    for (size_t i = 0; i < mus.size(); ++i)
      sorted_sigma[i] = std::max(sorted[i + 1] - sorted[i], sorted[i + 2] - sorted[i + 1]);
    if (!s.endpoints && sorted.size() >= 4) {
      sorted_sigma.front() = sorted[2] - sorted[1];
      sorted_sigma.back() = sorted[sorted.size() - 2] - sorted[sorted.size() - 3];
    }
    for (size_t i = 0; i < order.size(); ++i)
      if (order[i] < obs.size()) sigma[order[i]] = sorted_sigma[i];
  }
  // The kernels count the prior: with n observations the narrowest is range / min(100, n + 2).
  const double max_sigma = range;
  const double min_sigma = s.magic_clip ? range / std::min(100.0, 1.0 + static_cast<double>(obs.size() + 1)) : 1e-12;
  for (double& x : sigma) x = std::clamp(x, min_sigma, max_sigma);
  n.mu = obs;
  n.mu.push_back(0.5 * (low + high));
  n.sigma = std::move(sigma);
  n.sigma.push_back(range);
  return n;
}

ParzenEstimator::Categorical categorical_kernels(const std::vector<double>& obs, size_t choices,
                                                 const ParzenSettings& s) {
  ParzenEstimator::Categorical c;
  if (obs.empty()) {
    c.weights.assign(1, std::vector<double>(choices, 1.0 / static_cast<double>(choices)));
    return c;
  }
  const double kernels = static_cast<double>(obs.size() + 1);
  c.weights.assign(obs.size() + 1, std::vector<double>(choices, s.prior_weight / kernels));
  for (size_t i = 0; i < obs.size(); ++i) c.weights[i][static_cast<size_t>(obs[i])] += 1;
  for (auto& row : c.weights) {
    const double sum = std::accumulate(row.begin(), row.end(), 0.0);
    if (sum != 0)
      for (double& w : row) w /= sum;
  }
  return c;
}

double logsumexp(const std::vector<double>& v) {
  double m = *std::max_element(v.begin(), v.end());
  if (m == -INFINITY) m = 0;
  double sum = 0;
  for (double x : v) sum += std::exp(x - m);
  return std::log(sum) + m;
}

}  // namespace

ParzenEstimator::ParzenEstimator(std::vector<Distribution> space, const std::vector<std::vector<double>>& observations,
                                 const ParzenSettings& settings, std::vector<double> weights)
    : space_(std::move(space)) {
  if (settings.prior_weight < 0) throw std::invalid_argument("TPE's prior_weight must be non-negative");
  const size_t n = observations.size();
  weights_ = weights.empty() ? default_weights(n) : std::move(weights);
  weights_.resize(n);
  if (n == 0) weights_ = {1.0};
  else weights_.push_back(settings.prior_weight);
  const double total = std::accumulate(weights_.begin(), weights_.end(), 0.0);
  for (double& w : weights_) w /= total;

  for (size_t d = 0; d < space_.size(); ++d) {
    std::vector<double> column(n);
    for (size_t t = 0; t < n; ++t) column[t] = is_log(space_[d]) ? std::log(observations[t][d]) : observations[t][d];
    Dimension dim;
    if (space_[d].kind == Distribution::Kind::categorical) {
      dim.categorical = true;
      dim.cat = categorical_kernels(column, space_[d].choices.size(), settings);
    } else {
      dim.numeric = numeric_kernels(column, transformed_range(space_[d]), space_.size(), settings);
    }
    dims_.push_back(std::move(dim));
  }
}

std::vector<std::vector<double>> ParzenEstimator::sample(Rng& rng, size_t count) const {
  std::vector<std::vector<double>> out(count, std::vector<double>(space_.size()));
  for (size_t i = 0; i < count; ++i) {
    const size_t k = rng.choice(weights_);  // one kernel for every dimension of a candidate
    for (size_t d = 0; d < space_.size(); ++d) {
      const Dimension& dim = dims_[d];
      double x;
      if (dim.categorical) {
        const auto& row = dim.cat.weights[k];
        const double u = rng.uniform();
        double cum = 0;
        size_t index = 0;
        for (size_t c = 0; c + 1 < row.size(); ++c)
          if ((cum += row[c]) < u) index = c + 1;
        x = static_cast<double>(index);
      } else {
        const Numeric& n = dim.numeric;
        const double mu = n.mu[k], sigma = n.sigma[k];
        const double a = (n.low - n.step / 2 - mu) / sigma, b = (n.high + n.step / 2 - mu) / sigma;
        x = truncnorm::ppf(rng.uniform(), a, b) * sigma + mu;
        if (n.step > 0) x = std::clamp(n.low + std::nearbyint((x - n.low) / n.step) * n.step, n.low, n.high);
      }
      // Back to the value's own space; integers snap to their grid after exp (4.6's order).
      const Distribution& dist = space_[d];
      if (is_log(dist)) x = std::exp(x);
      if (dist.kind == Distribution::Kind::integer)
        x = std::clamp(dist.low + std::nearbyint((x - dist.low) / dist.step) * dist.step, dist.low, dist.high);
      out[i][d] = x;
    }
  }
  return out;
}

std::vector<double> ParzenEstimator::log_pdf(const std::vector<std::vector<double>>& points) const {
  std::vector<double> out;
  out.reserve(points.size());
  std::vector<double> terms(weights_.size());
  for (const auto& p : points) {
    for (size_t k = 0; k < weights_.size(); ++k) {
      double sum = 0;
      for (size_t d = 0; d < space_.size(); ++d) {
        const Dimension& dim = dims_[d];
        if (dim.categorical) {
          sum += std::log(dim.cat.weights[k][static_cast<size_t>(p[d])]);
          continue;
        }
        const Numeric& n = dim.numeric;
        const double x = is_log(space_[d]) ? std::log(p[d]) : p[d];
        const double mu = n.mu[k], sigma = n.sigma[k];
        if (n.step == 0) {
          sum += truncnorm::log_pdf(x, (n.low - mu) / sigma, (n.high - mu) / sigma, mu, sigma);
        } else {
          // The kernel's mass on the grid cell around x, over its mass on the widened range.
          sum += truncnorm::log_gauss_mass((x - n.step / 2 - mu) / sigma, (x + n.step / 2 - mu) / sigma);
          sum -= truncnorm::log_gauss_mass((n.low - n.step / 2 - mu) / sigma, (n.high + n.step / 2 - mu) / sigma);
        }
      }
      terms[k] = sum + std::log(weights_[k]);
    }
    out.push_back(logsumexp(terms));
  }
  return out;
}

}  // namespace orrery::search
