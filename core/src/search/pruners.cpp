#include "orrery/host/search/pruners.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace orrery::search {
namespace {

// numpy.nanpercentile with the default (linear) method, NaN when no value is a number.
double nan_percentile(std::vector<double> v, double percentile) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const double q = percentile / 100, n = static_cast<double>(v.size());
  const double index = n * q + (1 + q * (1 - 1 - 1)) - 1;  // numpy's virtual index, alpha = beta = 1
  const double lo = std::floor(index);
  const size_t below = static_cast<size_t>(std::clamp(lo, 0.0, n - 1));
  const size_t above = static_cast<size_t>(std::clamp(lo + 1, 0.0, n - 1));
  const double t = index - lo, a = v[below], b = v[above], diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;  // numpy's _lerp
}

}  // namespace

bool PercentilePruner::prune(const std::vector<Trial>& trials, const Trial& trial, Direction direction) const {
  if (percentile < 0 || percentile > 100 || interval_steps < 1 || n_warmup_steps < 0 || n_min_trials < 1)
    throw std::invalid_argument("PercentilePruner: percentile in [0, 100], interval_steps >= 1, n_min_trials >= 1");
  std::vector<const Trial*> complete;
  for (const Trial& t : trials)
    if (t.state == TrialState::complete) complete.push_back(&t);
  if (complete.empty() || complete.size() < n_startup_trials) return false;
  const int64_t step = trial.last_step();
  if (step < 0 || step < n_warmup_steps) return false;
  // Only the first report inside each interval (counted from the end of the warmup) is judged.
  const int64_t interval_start = (step - n_warmup_steps) / interval_steps * interval_steps + n_warmup_steps;
  int64_t previous = -1;
  for (const auto& entry : trial.intermediate)
    if (entry.first != step) previous = std::max(previous, entry.first);
  if (previous >= interval_start) return false;

  const bool minimize = direction == Direction::minimize;
  double best = NAN;
  for (const auto& entry : trial.intermediate) {
    const double v = entry.second;
    if (!std::isnan(v) && (std::isnan(best) || (minimize ? v < best : v > best))) best = v;
  }
  if (std::isnan(best)) return true;  // only NaN reported: diverged

  std::vector<double> at_step;
  for (const Trial* t : complete)
    if (auto it = t->intermediate.find(step); it != t->intermediate.end()) at_step.push_back(it->second);
  if (at_step.size() < n_min_trials) return false;
  const double p = nan_percentile(at_step, minimize ? percentile : 100 - percentile);
  if (std::isnan(p)) return false;
  return minimize ? best > p : best < p;
}

bool SuccessiveHalvingPruner::prune(const std::vector<Trial>& trials, Trial& trial, Direction direction) {
  if (reduction_factor < 2 || min_early_stopping_rate < 0 || (min_resource && *min_resource < 1))
    throw std::invalid_argument("SuccessiveHalvingPruner: reduction_factor >= 2, min_resource >= 1");
  const int64_t step = trial.last_step();
  if (step < 0) return false;
  int64_t rung = 0;
  while (trial.rungs.count(rung)) ++rung;
  const double value = trial.intermediate.at(step);
  for (;; ++rung) {
    if (!min_resource) {
      int64_t last = -1;
      for (const Trial& t : trials)
        if (t.state == TrialState::complete) last = std::max(last, t.last_step());
      if (last < 0) return false;  // nothing completed yet: no scale for the rungs
      min_resource = std::max<int64_t>(last / 100, 1);
    }
    int64_t promotion_step = *min_resource;
    for (int64_t i = 0; i < min_early_stopping_rate + rung; ++i) promotion_step *= reduction_factor;
    if (step < promotion_step) return false;
    if (std::isnan(value)) return true;
    trial.rungs[rung] = value;
    std::vector<double> competing;
    for (const Trial& t : trials)
      if (t.number != trial.number)
        if (auto it = t.rungs.find(rung); it != t.rungs.end()) competing.push_back(it->second);
    competing.push_back(value);
    if (competing.size() <= bootstrap_count) return true;
    // Promoted when among the best 1/reduction_factor at this rung; the first
    // reduction_factor - 1 trials must be the best so far.
    int64_t index = static_cast<int64_t>(competing.size()) / reduction_factor - 1;
    if (index < 0) index = 0;
    std::sort(competing.begin(), competing.end());
    const bool promoted = direction == Direction::minimize
                              ? value <= competing[static_cast<size_t>(index)]
                              : value >= competing[competing.size() - 1 - static_cast<size_t>(index)];
    if (!promoted) return true;
  }
}

}  // namespace orrery::search
