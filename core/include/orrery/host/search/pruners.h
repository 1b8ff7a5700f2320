#pragma once
// Pruners decide, after a trial reports an intermediate value, whether to stop it: Optuna 4.6's
// PercentilePruner (MedianPruner = the 50th percentile) and SuccessiveHalvingPruner (asynchronous
// successive halving), as functions of the study's trials, so that every worker process reading
// the same journal decides the same way.
//
// Under a warmup-stable-decay schedule, a stable-phase loss carries a noise term that grows with
// the learning rate and that the decay removes; intermediate values from the stable phase rank
// trials partly by learning rate, so both pruners kill high-rate trials that would have gained
// most from the decay. Prune on decayed probes instead (docs/search.md).
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "orrery/host/search/trial.h"

namespace orrery::search {

struct PercentilePruner {
  double percentile = 50;        // keep the trials better than this percentile at the same step
  size_t n_startup_trials = 5;   // complete trials before any pruning
  int64_t n_warmup_steps = 0;    // no pruning before this step
  int64_t interval_steps = 1;    // check the first report of each interval (after the warmup)
  size_t n_min_trials = 1;       // complete trials that reported this very step

  // Prune `trial` (its last report just made) given every trial of the study?
  bool prune(const std::vector<Trial>& trials, const Trial& trial, Direction direction) const;
};

struct SuccessiveHalvingPruner {
  std::optional<int64_t> min_resource;  // empty: max last step of the complete trials // 100, at least 1
  int64_t reduction_factor = 4;
  int64_t min_early_stopping_rate = 0;
  size_t bootstrap_count = 0;

  // The trial's value at its last step enters each rung it reaches (`trial.rungs`), where it is
  // promoted when among the best 1/reduction_factor of the values recorded at that rung.
  // Returns true to prune. `min_resource` is estimated on first need when not given.
  bool prune(const std::vector<Trial>& trials, Trial& trial, Direction direction);
};

}  // namespace orrery::search
