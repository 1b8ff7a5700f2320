#include "orrery/host/search/study.h"

#include <cmath>
#include <set>
#include <sstream>

#include "orrery/atomic_file.h"
#include "orrery/error.h"

namespace orrery::search {
namespace {

Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

uint64_t mix(uint64_t a, uint64_t b) {  // one splitmix64 step of a ^ b: a seed per trial
  Rng r(a ^ (b * 0x9E3779B97F4A7C15ull));
  return r.next();
}

// The grid: the Cartesian product of every dimension's values (the last dimension varying
// fastest), never held whole. A point is found from its index, so a grid of any size costs
// what its trials cost. Continuous reals and simplexes have no grid.
// A count as a whole number, or about one in scientific notation beyond 10^15.
std::string count_text(double n) {
  if (n < 1e15) return std::to_string(static_cast<long long>(n));
  std::ostringstream text;
  text.precision(3);
  text << n;
  return text.str();
}

class Grid {
 public:
  // Points beyond this count cannot be numbered exactly in the journal's JSON numbers.
  static constexpr double kMaxPoints = 9007199254740992.0;  // 2^53

  explicit Grid(const SearchSpace& space) {
    double size = 1;
    std::string sizes;
    for (const auto& d : space.dims()) {
      if (d.simplex || (d.dist.kind == Distribution::Kind::real && d.dist.step == 0))
        throw Error("the grid sampler needs every dimension on a grid; '" + d.name +
                    "' is continuous (give it a step, or use tpe or random)");
      const double n = d.dist.kind == Distribution::Kind::categorical
                           ? static_cast<double>(d.dist.choices.size())
                           : std::floor((d.dist.high - d.dist.low) / d.dist.step + 1e-9) + 1;
      size *= n;
      sizes += (sizes.empty() ? "" : ", ") + d.name + ": " + count_text(n) + " values";
      dims_.push_back({&d, static_cast<int64_t>(std::min(n, kMaxPoints))});
    }
    if (!(size <= kMaxPoints))
      throw Error("the grid has " + count_text(size) + " points (" + sizes + "), more than a study can number (2^53); "
                  "give the dimensions larger steps, or use tpe or random");
    size_ = static_cast<int64_t>(size);
  }
  int64_t size() const { return size_; }
  std::map<std::string, double> point(int64_t index) const {
    std::map<std::string, double> out;
    for (auto it = dims_.rbegin(); it != dims_.rend(); ++it) {
      const int64_t k = index % it->second;
      index /= it->second;
      const Distribution& dist = it->first->dist;
      out[it->first->name] = dist.kind == Distribution::Kind::categorical
                                 ? static_cast<double>(k)
                                 : dist.low + static_cast<double>(k) * dist.step;
    }
    return out;
  }

 private:
  std::vector<std::pair<const Dimension*, int64_t>> dims_;
  int64_t size_ = 0;
};

}  // namespace

Json StudyConfig::to_json() const {
  Json pruner_json = {{"kind", pruner}};
  if (pruner == "median" || pruner == "percentile")
    pruner_json.update({{"percentile", percentile.percentile}, {"n_startup_trials", percentile.n_startup_trials},
                        {"n_warmup_steps", percentile.n_warmup_steps}, {"interval_steps", percentile.interval_steps},
                        {"n_min_trials", percentile.n_min_trials}});
  if (pruner == "halving")
    pruner_json.update({{"min_resource", halving.min_resource ? Json(*halving.min_resource) : Json("auto")},
                        {"reduction_factor", halving.reduction_factor},
                        {"min_early_stopping_rate", halving.min_early_stopping_rate},
                        {"bootstrap_count", halving.bootstrap_count}});
  return {{"event", "study"},
          {"name", name},
          {"direction", direction == Direction::minimize ? "minimize" : "maximize"},
          {"space", space.to_json()},
          {"sampler", {{"kind", sampler}, {"seed", seed}, {"n_startup_trials", tpe.n_startup_trials},
                       {"n_ei_candidates", tpe.n_ei_candidates}, {"multivariate", tpe.parzen.multivariate},
                       {"constant_liar", tpe.constant_liar}}},
          {"pruner", pruner_json}};
}

Study::Study(const std::string& dir, StudyConfig config) : config_(std::move(config)), journal_(dir) {
  if (config_.sampler != "tpe" && config_.sampler != "random" && config_.sampler != "grid")
    throw Error("study '" + config_.name + "': sampler must be tpe, random or grid, got '" + config_.sampler + "'");
  if (config_.pruner != "none" && config_.pruner != "median" && config_.pruner != "percentile" &&
      config_.pruner != "halving")
    throw Error("study '" + config_.name + "': pruner must be none, median, percentile or halving, got '" +
                config_.pruner + "'");
  if (config_.sampler == "grid") {  // refuses a space without a grid, or one too large, now
    try {
      (void)Grid(config_.space);
    } catch (const Error& e) {
      throw Error("study '" + config_.name + "': " + e.what());
    }
  }
  journal_.worker();
  const auto write_summary = [this](const std::vector<Json>& events) {
    write_file_atomically(journal_.dir() + "/study.json", [&](std::ostream& o) { o << summary(events).dump(1) << "\n"; });
  };
  journal_.on_append(write_summary);
  journal_.transact([&](const std::vector<Json>& events) {
    if (events.empty()) return std::vector<Json>{config_.to_json()};
    const Json& first = events.front();
    if (first.value("event", "") != "study")
      throw Error(journal_.path() + " does not start with a study record: it is not a study journal");
    if (first["direction"] != config_.to_json()["direction"] || first["space"] != config_.space.to_json())
      throw Error("study '" + config_.name + "' in " + dir + " was created with another " +
                  (first["direction"] != config_.to_json()["direction"] ? "direction" : "search space") +
                  "; give this one another name (a new round is a new study)");
    if (config_.pruner == "halving" && !config_.halving.min_resource)
      for (const Json& e : events)
        if (e.value("event", "") == "min_resource") config_.halving.min_resource = e["value"].get<int64_t>();
    std::vector<Json> add = fail_dead_workers(events);
    // Nothing to append, so on_append will not run: study.json is written here, still under the
    // lock (a journal from before study.json existed gets one).
    if (add.empty()) write_summary(events);
    return add;
  });
}

std::vector<Json> Study::fail_dead_workers(const std::vector<Json>& events) {
  std::vector<Json> out;
  for (const Trial& t : replay(events, config_.space)) {
    if (t.state != TrialState::running) continue;
    std::string worker;
    for (const Json& e : events)
      if (e.value("event", "") == "trial" && e["number"] == t.number) worker = e.value("worker", "");
    if (!journal_.alive(worker))
      out.push_back({{"event", "finish"}, {"number", t.number}, {"state", "failed"}, {"value", nullptr}, {"lost", true},
                     {"error", "its worker (" + worker + ") stopped before the trial finished"}});
  }
  return out;
}

std::vector<Trial> Study::replay(const std::vector<Json>& events, const SearchSpace& space) {
  const auto dists = space.internal();
  std::vector<Trial> trials;
  auto at = [&](const Json& e) -> Trial& {
    const int64_t n = e.at("number").get<int64_t>();
    if (n < 0 || n >= static_cast<int64_t>(trials.size())) throw Error("the journal names trial " + std::to_string(n) + " before it began");
    return trials[static_cast<size_t>(n)];
  };
  for (size_t line = 0; line < events.size(); ++line) try {
    const Json& e = events[line];
    const std::string kind = e.is_object() ? e.value("event", "") : "";
    if (kind == "trial") {
      Trial t;
      t.number = static_cast<int64_t>(trials.size());
      for (const auto& [name, v] : e.at("params").items()) {
        t.params[name] = v.get<double>();
        if (auto d = dists.find(name); d != dists.end()) t.distributions[name] = d->second;
      }
      trials.push_back(std::move(t));
    } else if (kind == "report") {
      at(e).intermediate[e.at("step").get<int64_t>()] = e.at("value").is_null() ? NAN : e["value"].get<double>();
    } else if (kind == "rung") {
      at(e).rungs[e.at("rung").get<int64_t>()] = e.at("value").get<double>();
    } else if (kind == "finish") {
      Trial& t = at(e);
      if (t.state != TrialState::running) continue;  // a late duplicate: the first word stands
      t.state = parse_state(e.at("state").get<std::string>());
      t.value = e.at("value").is_null() ? NAN : e["value"].get<double>();
      t.lost = e.value("lost", false);
    }
  } catch (const Json::exception& x) {  // JSON, but not an event this journal writes
    std::string text = events[line].dump();
    if (text.size() > 120) text = text.substr(0, 120) + "...";
    throw Error("journal line " + std::to_string(line + 1) + " is not a study event (" + text + "): " + x.what() +
                "; the journal was edited: restore it or start a new study");
  }
  return trials;
}

std::map<std::string, double> Study::propose(const std::vector<Trial>& trials, int64_t number,
                                             const std::map<std::string, double>& given) {
  TpeSettings settings = config_.tpe;
  if (config_.sampler == "random") settings.n_startup_trials = SIZE_MAX;
  // The stream is seeded by how many trials did not fail before this one: a trial a dead
  // worker left behind is failed and skipped, so the next one draws what it would have drawn.
  uint64_t index = 0;
  for (const Trial& t : trials) index += t.state != TrialState::failed;
  TpeSampler sampler(settings, mix(config_.seed, index));
  std::map<std::string, double> out = given;
  // Multivariate: the dimensions every finished trial shares, jointly; the rest one by one.
  std::map<std::string, double> joint;
  if (settings.parzen.multivariate) {
    Space shared = TpeSampler::intersection_space(trials);
    if (!shared.empty()) joint = sampler.sample(trials, number, shared, config_.direction);
  }
  Json external = Json::object();
  for (const auto& d : config_.space.dims()) {
    external = config_.space.external(out);
    if (!SearchSpace::active(d, external)) continue;
    for (const auto& [name, dist] : d.internal()) {
      if (out.count(name)) continue;
      if (auto it = joint.find(name); it != joint.end()) out[name] = it->second;
      else out[name] = sampler.sample(trials, number, {{name, dist}}, config_.direction).at(name);
    }
  }
  return out;
}

std::optional<Trial> Study::ask() {
  std::optional<Trial> made;
  journal_.transact([&](const std::vector<Json>& events) {
    std::vector<Json> add = fail_dead_workers(events);
    std::vector<Json> all = events;
    all.insert(all.end(), add.begin(), add.end());
    const std::vector<Trial> trials = replay(all, config_.space);
    const int64_t number = static_cast<int64_t>(trials.size());
    Json record = {{"event", "trial"}, {"number", number}, {"worker", journal_.worker()}};
    std::map<std::string, double> given;
    // The oldest enqueued configuration no trial has taken.
    std::set<int64_t> taken;
    for (const Json& e : all)
      if (e.value("event", "") == "trial" && e.contains("enqueued")) taken.insert(e["enqueued"].get<int64_t>());
    int64_t index = 0;
    for (const Json& e : all) {
      if (e.value("event", "") != "enqueue") continue;
      if (!taken.count(index)) {
        given = config_.space.internal_of(e.at("params"));
        record["enqueued"] = index;
        break;
      }
      ++index;
    }
    if (!record.contains("enqueued") && config_.sampler == "grid") {
      std::set<int64_t> used;
      for (const Json& e : all)
        if (e.value("event", "") == "trial" && e.contains("grid")) used.insert(e["grid"].get<int64_t>());
      const Grid grid(config_.space);
      int64_t next = 0;
      while (next < grid.size() && used.count(next)) ++next;
      if (next == grid.size()) return add;  // the grid is done
      given = grid.point(next);
      record["grid"] = next;
    }
    std::map<std::string, double> params = propose(trials, number, given);
    // A grid point's inactive dimensions are dropped, like any conditional one.
    const Json external = config_.space.external(params);
    Json p = Json::object();
    Trial t;
    t.number = number;
    for (const auto& d : config_.space.dims())
      if (external.contains(d.name))
        for (const auto& [name, dist] : d.internal()) {
          p[name] = params.at(name);
          t.params[name] = params.at(name);
          t.distributions[name] = dist;
        }
    record["params"] = p;
    add.push_back(record);
    made = std::move(t);
    return add;
  });
  return made;
}

void Study::report(int64_t number, int64_t step, double value) {
  journal_.transact([&](const std::vector<Json>&) {
    return std::vector<Json>{{{"event", "report"}, {"number", number}, {"step", step}, {"value", number_or_null(value)}}};
  });
}

bool Study::should_prune(int64_t number) {
  if (config_.pruner == "none") return false;
  bool prune = false;
  journal_.transact([&](const std::vector<Json>& events) {
    std::vector<Trial> trials = replay(events, config_.space);
    if (number < 0 || number >= static_cast<int64_t>(trials.size()))
      throw Error("study '" + config_.name + "' has no trial " + std::to_string(number));
    Trial& t = trials[static_cast<size_t>(number)];
    std::vector<Json> add;
    if (config_.pruner == "halving") {
      const bool had_resource = config_.halving.min_resource.has_value();
      const auto before = t.rungs;
      prune = config_.halving.prune(trials, t, config_.direction);
      if (!had_resource && config_.halving.min_resource)
        add.push_back({{"event", "min_resource"}, {"value", *config_.halving.min_resource}});
      for (const auto& [rung, value] : t.rungs)
        if (!before.count(rung)) add.push_back({{"event", "rung"}, {"number", number}, {"rung", rung}, {"value", value}});
    } else {
      prune = config_.percentile.prune(trials, t, config_.direction);
    }
    return add;
  });
  return prune;
}

void Study::tell(int64_t number, TrialState state, double value, const std::string& error) {
  if (state == TrialState::running) throw Error("tell: a trial finishes complete, pruned or failed");
  journal_.transact([&](const std::vector<Json>& events) {
    const std::vector<Trial> trials = replay(events, config_.space);
    if (number < 0 || number >= static_cast<int64_t>(trials.size()))
      throw Error("study '" + config_.name + "' has no trial " + std::to_string(number));
    const Trial& t = trials[static_cast<size_t>(number)];
    if (t.state != TrialState::running)
      throw Error("trial " + std::to_string(number) + " of study '" + config_.name + "' already finished (" +
                  state_name(t.state) + ")");
    Json e = {{"event", "finish"}, {"number", number}};
    TrialState s = state;
    double v = value;
    std::string why = error;
    if (s == TrialState::complete && !std::isfinite(v)) s = TrialState::failed, why = "the objective returned " + std::to_string(v);
    if (s == TrialState::pruned) v = t.intermediate.empty() ? NAN : t.intermediate.rbegin()->second;
    e["state"] = state_name(s);
    e["value"] = number_or_null(v);
    if (!why.empty()) e["error"] = why;
    return std::vector<Json>{e};
  });
}

void Study::enqueue(const Json& params) {
  config_.space.internal_of(params);  // refused now, naming the dimension, not when a trial takes it
  journal_.transact([&](const std::vector<Json>&) {
    return std::vector<Json>{{{"event", "enqueue"}, {"params", params}}};
  });
}

std::vector<Trial> Study::trials() { return replay(journal_.events(), config_.space); }

Json Study::summary(const std::vector<Json>& events) const {
  const Json& first = events.front();
  Json trials = Json::array();
  const Trial* best = nullptr;
  const std::vector<Trial> all = replay(events, config_.space);
  for (const Trial& t : all) {
    Json intermediate = Json::array();
    for (const auto& [step, v] : t.intermediate) intermediate.push_back({step, number_or_null(v)});
    trials.push_back({{"number", t.number}, {"state", state_name(t.state)}, {"value", number_or_null(t.value)},
                      {"params", config_.space.external(t.params)}, {"intermediate", intermediate}, {"lost", t.lost}});
    if (t.state == TrialState::complete &&
        (!best || (config_.direction == Direction::minimize ? t.value < best->value : t.value > best->value)))
      best = &t;
  }
  return {{"name", first.value("name", config_.name)}, {"direction", first.value("direction", "minimize")},
          {"space", first.value("space", Json())}, {"sampler", first.value("sampler", Json())},
          {"pruner", first.value("pruner", Json())}, {"trials", trials},
          {"best", best ? Json(best->number) : Json(nullptr)}};
}

std::optional<Trial> Study::best() {
  std::optional<Trial> best;
  for (const Trial& t : trials())
    if (t.state == TrialState::complete &&
        (!best || (config_.direction == Direction::minimize ? t.value < best->value : t.value > best->value)))
      best = t;
  return best;
}

}  // namespace orrery::search
