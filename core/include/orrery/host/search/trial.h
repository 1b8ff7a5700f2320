#pragma once
// A trial of a study as samplers and pruners see it: its state, the parameters it drew (internal
// values, with their distributions), its objective and the intermediate values it reported.
#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include "orrery/host/search/distribution.h"

namespace orrery::search {

enum class TrialState { running, complete, pruned, failed };
enum class Direction { minimize, maximize };

const char* state_name(TrialState s);
TrialState parse_state(const std::string& name);  // throws on an unknown name

struct Trial {
  int64_t number = 0;
  TrialState state = TrialState::running;
  std::map<std::string, double> params;  // internal values
  std::map<std::string, Distribution> distributions;
  double value = std::numeric_limits<double>::quiet_NaN();  // a complete trial's objective
  std::map<int64_t, double> intermediate;                   // step -> reported value
  std::map<int64_t, double> rungs;                          // successive halving: rung -> value
  bool lost = false;  // failed because its worker died, not because of its parameters

  // The last step reported, or -1 when none was.
  int64_t last_step() const { return intermediate.empty() ? -1 : intermediate.rbegin()->first; }
};

}  // namespace orrery::search
