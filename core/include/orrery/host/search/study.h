#pragma once
// A hyper-parameter study kept in a folder (<runs_dir>/<name>/journal.jsonl, see journal.h):
// ask for a trial, report intermediate values, ask whether to prune, tell its result. Any
// number of worker processes may open the same study at once; one that opens a study after a
// crash finds its completed trials intact and the trials of dead workers marked failed. The
// sampler's random stream for a trial is seeded by (seed, the number of trials before it that did
// not fail), so a resumed study proposes what the uninterrupted one would have, given the same
// trial results.
//
// Beside the journal, study.json holds the study as a reader wants it (the dashboard, a
// notebook): {name, direction, space, sampler, pruner, trials: [{number, state, value, params
// (external values), intermediate: [[step, value], ...], lost}], best}, rewritten atomically
// under the journal's lock after every change, so it always matches some prefix of the journal.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "orrery/host/search/journal.h"
#include "orrery/host/search/pruners.h"
#include "orrery/host/search/search_space.h"
#include "orrery/host/search/tpe_sampler.h"

namespace orrery::search {

struct StudyConfig {
  std::string name;
  Direction direction = Direction::minimize;
  SearchSpace space;
  std::string sampler = "tpe";  // tpe | random | grid
  TpeSettings tpe;
  uint64_t seed = 0;
  std::string pruner = "none";  // none | median | percentile | halving
  PercentilePruner percentile;
  SuccessiveHalvingPruner halving;

  Json to_json() const;  // what the journal's first line records
};

class Study {
 public:
  // Opens the study in `dir` (created if new). A study that exists must have been created with
  // the same direction and space; the sampler and pruner may change between sessions.
  Study(const std::string& dir, StudyConfig config);

  // A new running trial with its parameters: the oldest enqueued configuration not yet taken
  // (its missing dimensions sampled), else the sampler's proposal. Empty when a grid is done.
  std::optional<Trial> ask();
  void report(int64_t number, int64_t step, double value);
  // After report: should the trial stop? Records a successive-halving rung when reached.
  bool should_prune(int64_t number);
  // Finish a trial: complete with its value (a NaN value fails it), pruned (its last report is
  // its value) or failed with the reason.
  void tell(int64_t number, TrialState state, double value, const std::string& error = "");
  // Queue a configuration (external values, possibly partial) for the next ask.
  void enqueue(const Json& params);

  std::vector<Trial> trials();               // as the journal has them now
  std::vector<Json> events() { return journal_.events(); }
  std::optional<Trial> best();               // the best complete trial
  Json params_of(const Trial& t) const { return config_.space.external(t.params); }
  const StudyConfig& config() const { return config_; }
  const std::string& dir() const { return journal_.dir(); }

  // Replays a journal's events into trials (for the dashboard and tests).
  static std::vector<Trial> replay(const std::vector<Json>& events, const SearchSpace& space);
  // What study.json holds, from a journal's events.
  Json summary(const std::vector<Json>& events) const;

 private:
  std::vector<Json> fail_dead_workers(const std::vector<Json>& events);
  std::map<std::string, double> propose(const std::vector<Trial>& trials, int64_t number,
                                        const std::map<std::string, double>& given);

  StudyConfig config_;
  Journal journal_;
};

}  // namespace orrery::search
