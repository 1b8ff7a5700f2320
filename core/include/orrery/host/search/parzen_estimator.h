#pragma once
// TPE's density model (Optuna 4.6's _ParzenEstimator): a mixture with one product kernel per
// observed trial plus a prior kernel, over the dimensions of a search space. Numeric dimensions
// are truncated normals in the transformed space (ln for log dimensions; a log integer's range is
// widened by half a step and treated as continuous), stepped ones discretised to their grid;
// categorical dimensions are smoothed histograms. TpeSampler builds one for the good trials (l)
// and one for the rest (g) and proposes the candidate maximising log l - log g.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "orrery/host/search/distribution.h"

namespace orrery::search {

// A small, fully specified random stream (splitmix64): the same proposals on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  double uniform();                // [0, 1)
  double uniform(double lo, double hi);
  size_t choice(const std::vector<double>& probabilities);  // an index drawn with these weights

 private:
  uint64_t state_;
};

struct ParzenSettings {
  double prior_weight = 1.0;
  bool magic_clip = true;         // bandwidths clipped to [range / min(100, kernels + 1), range]
  bool endpoints = false;         // the first and last kernel take the gap to the range's ends too
  bool multivariate = false;      // Scott-like shared bandwidth instead of the neighbour heuristic
};

// Optuna's default_weights(n): ones below 25 observations, else a ramp from 1/n for the oldest
// n - 25 and ones for the newest 25 (observations in trial order).
std::vector<double> default_weights(size_t n);

class ParzenEstimator {
 public:
  // One kernel of one numeric dimension, in the transformed space; step 0 = continuous.
  struct Numeric {
    std::vector<double> mu, sigma;
    double low = 0, high = 0, step = 0;
  };
  // A categorical dimension: one row of choice probabilities per kernel.
  struct Categorical {
    std::vector<std::vector<double>> weights;
  };
  struct Dimension {
    bool categorical = false;
    Numeric numeric;
    Categorical cat;
  };

  // `observations[t][d]`: trial t's internal value of dimension d (trials in trial order).
  // `weights`: the observations' mixture weights before the prior's (default_weights if empty).
  ParzenEstimator(std::vector<Distribution> space, const std::vector<std::vector<double>>& observations,
                  const ParzenSettings& settings, std::vector<double> weights = {});

  // n candidates, internal values (a row per candidate), on each dimension's grid.
  std::vector<std::vector<double>> sample(Rng& rng, size_t n) const;
  // log density of each row of internal values.
  std::vector<double> log_pdf(const std::vector<std::vector<double>>& points) const;

  const std::vector<double>& mixture_weights() const { return weights_; }
  const std::vector<Dimension>& dimensions() const { return dims_; }

 private:
  std::vector<Distribution> space_;
  std::vector<double> weights_;  // observations then the prior, normalised
  std::vector<Dimension> dims_;
};

}  // namespace orrery::search
