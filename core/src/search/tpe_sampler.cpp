#include "orrery/host/search/tpe_sampler.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "orrery/sort_stably.h"

namespace orrery::search {

int default_gamma(size_t n) { return std::min(static_cast<int>(std::ceil(0.1 * static_cast<double>(n))), 25); }

std::pair<std::vector<int64_t>, std::vector<int64_t>> split_trials(const std::vector<const Trial*>& trials,
                                                                   size_t n_below, Direction direction) {
  std::vector<const Trial*> complete, pruned, running;
  for (const Trial* t : trials) {
    if (t->state == TrialState::running) running.push_back(t);
    else if (t->state == TrialState::complete) complete.push_back(t);
    else if (t->state == TrialState::pruned) pruned.push_back(t);
  }
  const double sign = direction == Direction::minimize ? 1 : -1;
  sort_stably(complete, [&](const Trial* a, const Trial* b) { return sign * a->value < sign * b->value; });
  // A pruned trial ranks by how far it ran, then by its last value; NaN last, none reported
  // after every one that reported.
  auto pruned_key = [&](const Trial* t) {
    if (t->intermediate.empty()) return std::pair<double, double>{1, 0};
    const auto& [step, v] = *t->intermediate.rbegin();
    return std::pair<double, double>{-static_cast<double>(step), std::isnan(v) ? INFINITY : sign * v};
  };
  sort_stably(pruned, [&](const Trial* a, const Trial* b) { return pruned_key(a) < pruned_key(b); });

  std::vector<int64_t> below, above;
  size_t left = n_below;
  for (const auto* group : {&complete, &pruned})
    for (size_t i = 0; i < group->size(); ++i) {
      if (left > 0) below.push_back((*group)[i]->number), --left;
      else above.push_back((*group)[i]->number);
    }
  for (const Trial* t : running) above.push_back(t->number);
  std::sort(below.begin(), below.end());
  std::sort(above.begin(), above.end());
  return {below, above};
}

double sample_random(const Distribution& d, Rng& rng) {
  using K = Distribution::Kind;
  if (d.kind == K::categorical)
    return std::min(std::floor(rng.uniform() * static_cast<double>(d.choices.size())),
                    static_cast<double>(d.choices.size() - 1));
  const double half = d.step / 2;
  if (d.log) {
    const double lo = std::log(d.kind == K::integer ? d.low - half : d.low);
    const double hi = std::log(d.kind == K::integer ? d.high + half : d.high);
    const double x = std::exp(rng.uniform(lo, hi));
    if (d.kind == K::integer) return std::clamp(std::nearbyint(x), d.low, d.high);
    return std::min(x, std::nextafter(d.high, d.low));
  }
  if (d.step > 0) {
    const double x = rng.uniform(d.low - half, d.high + half);
    return std::clamp(std::nearbyint((x - d.low) / d.step) * d.step + d.low, d.low, d.high);
  }
  return d.low == d.high ? d.low : std::min(rng.uniform(d.low, d.high), std::nextafter(d.high, d.low));
}

Space TpeSampler::intersection_space(const std::vector<Trial>& trials) {
  std::map<std::string, Distribution> common;
  bool first = true;
  for (const Trial& t : trials) {
    if (t.state != TrialState::complete && t.state != TrialState::pruned) continue;
    if (first) {
      common = t.distributions;
      first = false;
      continue;
    }
    for (auto it = common.begin(); it != common.end();) {
      auto found = t.distributions.find(it->first);
      it = (found == t.distributions.end() || !(found->second == it->second)) ? common.erase(it) : std::next(it);
    }
  }
  Space space;
  for (auto& [name, d] : common)  // by name, as Optuna's IntersectionSearchSpace sorts it
    if (!d.single()) space.emplace_back(name, d);
  return space;
}

std::map<std::string, double> TpeSampler::sample(const std::vector<Trial>& trials, int64_t current,
                                                 const Space& space, Direction direction) {
  std::map<std::string, double> out;
  if (space.empty()) return out;
  size_t finished = 0;
  for (const Trial& t : trials) finished += t.state == TrialState::complete || t.state == TrialState::pruned;
  if (finished < s_.n_startup_trials) {
    for (const auto& [name, d] : space) out[name] = sample_random(d, rng_);
    return out;
  }

  // The trials TPE learns from: finished ones, and with the liar the others still running.
  std::vector<const Trial*> used;
  size_t n = 0;
  for (const Trial& t : trials) {
    const bool running = t.state == TrialState::running && s_.constant_liar && t.number != current;
    if (t.state == TrialState::complete || t.state == TrialState::pruned || running) used.push_back(&t);
    n += t.state == TrialState::complete || t.state == TrialState::pruned;
  }
  const auto [below, above] = split_trials(used, static_cast<size_t>(s_.gamma(n)), direction);

  std::vector<Distribution> dists;
  for (const auto& entry : space) dists.push_back(entry.second);
  // A trial's observation: its values of every dimension of the space, when it has them all
  // (inside today's ranges: a study's ranges may change between rounds).
  auto observations = [&](const std::vector<int64_t>& numbers) {
    std::vector<std::vector<double>> rows;
    for (int64_t number : numbers) {
      const Trial* t = *std::find_if(used.begin(), used.end(), [&](const Trial* u) { return u->number == number; });
      std::vector<double> row;
      for (const auto& [name, d] : space) {
        auto it = t->params.find(name);
        if (it == t->params.end() || !d.contains(it->second)) break;
        row.push_back(it->second);
      }
      if (row.size() == space.size()) rows.push_back(std::move(row));
    }
    return rows;
  };
  const ParzenEstimator l(dists, observations(below), s_.parzen);
  const ParzenEstimator g(dists, observations(above), s_.parzen);
  const auto candidates = l.sample(rng_, s_.n_ei_candidates);
  const auto log_l = l.log_pdf(candidates), log_g = g.log_pdf(candidates);
  size_t best = 0;
  for (size_t i = 1; i < candidates.size(); ++i)
    if (log_l[i] - log_g[i] > log_l[best] - log_g[best]) best = i;  // the first of equals wins
  for (size_t d = 0; d < space.size(); ++d) out[space[d].first] = candidates[best][d];
  return out;
}

}  // namespace orrery::search
