#pragma once
// The Tree-structured Parzen Estimator as Optuna 4.6's TPESampler runs it (Watanabe 2023 lists
// the components): random proposals for the first n_startup_trials finished trials, then each
// proposal is the best of n_ei_candidates draws from l (a density of the best gamma(n) trials)
// by log l - log g (a density of the rest). Pruned trials rank after complete ones, those that
// ran further first; failed trials are ignored; with the constant liar, running trials of other
// workers count as bad, so parallel workers spread out. Univariate (each parameter on its own)
// or multivariate (the parameters every finished trial shares, jointly).
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "orrery/host/search/parzen_estimator.h"
#include "orrery/host/search/trial.h"

namespace orrery::search {

// Optuna's default_gamma: min(ceil(0.1 n), 25) trials make the good set.
int default_gamma(size_t n);

// The trials' numbers split into the good set (n_below of them) and the rest, each in trial
// order: complete trials by value (stable), then pruned ones by (-last step, last value; NaN
// last; none reported after all), the rest and every running trial above. Failed trials are
// not expected here.
std::pair<std::vector<int64_t>, std::vector<int64_t>> split_trials(const std::vector<const Trial*>& trials,
                                                                   size_t n_below, Direction direction);

// A uniform draw in the transformed space (ln for log dimensions, widened by half a step for
// stepped ones), snapped to the grid: Optuna's RandomSampler. Returns the internal value.
double sample_random(const Distribution& d, Rng& rng);

struct TpeSettings {
  ParzenSettings parzen;
  size_t n_startup_trials = 10;
  size_t n_ei_candidates = 24;
  bool constant_liar = false;
  std::function<int(size_t)> gamma = default_gamma;
};

// An ordered search space: (name, distribution) pairs.
using Space = std::vector<std::pair<std::string, Distribution>>;

class TpeSampler {
 public:
  TpeSampler(TpeSettings settings, uint64_t seed) : s_(std::move(settings)), rng_(seed) {}

  const TpeSettings& settings() const { return s_; }

  // The joint space of a multivariate proposal: the distributions every complete or pruned
  // trial holds with the same definition, by name, leaving out single-valued ones.
  static Space intersection_space(const std::vector<Trial>& trials);

  // Values for `space` for trial `current` given every trial of the study: random while fewer
  // than n_startup_trials are complete or pruned, else TPE over `space` jointly (multivariate)
  // or each dimension alone (call it once per dimension with a one-element space).
  std::map<std::string, double> sample(const std::vector<Trial>& trials, int64_t current, const Space& space,
                                       Direction direction);

 private:
  TpeSettings s_;
  Rng rng_;
};

}  // namespace orrery::search
