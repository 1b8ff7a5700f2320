#pragma once
// Covariate tasks: a target that follows some of its covariates, so that a model learns from the
// prior alone to read covariates (issue 29; reference/prior-and-covariates.md §4). In the spirit
// of CauKer's causal graphs and Chronos-2's multivariatizers: covariates are drawn from the
// prior's families (or are sparse events and regime switches), a share of them drive the target
// through one effect each, a share are pure noise the model must learn to ignore, and a covariate
// may be a noisy copy of another (correlated drivers).
#include <functional>
#include <span>
#include <vector>

#include "rng.h"

namespace orrery::synth {

// How an informative covariate x (standardised) moves the target, at a lag of L steps:
enum class Effect {
  lag,             // beta * x[t - L]
  threshold,       // beta * 1[x[t - L] > c]
  multiplicative,  // the base's deviation from its mean scaled by (1 + gamma * x[t - L])
  events,          // x: sparse 0/1 events (promotions, holidays); beta * x[t - L]
  regime,          // x: a 0/1 regime that switches a few times (a law in force); beta * x[t]
};
constexpr int kEffects = 5;
constexpr const char* kEffectNames[kEffects] = {"lag", "threshold", "multiplicative", "events", "regime"};

struct CovariateTaskSettings {
  int max_covariates = 3;       // covariates per task: 1 to this many
  double future_prob = 0.5;     // a covariate is known over the horizon (else past-only)
  double noise_prob = 0.25;     // a covariate has no effect on the target
  double max_effect = 3;        // effect sizes log-uniform from 0.3 to this many base spreads
  int max_lag = 12;             // lags L uniform from 0 to this many steps
  std::vector<double> effects;  // weights by Effect
};

// Rows of one task: rows[0] the target, rows[1..k] its covariates; roles[i] 0 target, 1
// past-only, 2 known-future. `draw` fills a series from the prior's families.
struct CovariateTask {
  std::vector<std::vector<double>> rows;
  std::vector<int64_t> roles;
};
CovariateTask covariate_task(Rng& rng, int64_t length, const CovariateTaskSettings& s,
                             const std::function<void(Rng&, std::span<double>)>& draw);

}  // namespace orrery::synth
