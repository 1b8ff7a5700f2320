#pragma once
// One dimension of a hyper-parameter search space, as Optuna's distributions define it: a real
// interval (optionally log-scaled or stepped), an integer range (optionally log-scaled or with a
// step) or a list of categorical choices. A sampler works on a value's internal form: the number
// itself for reals and integers, the choice's index for a categorical.
#include <string>
#include <vector>

#include "orrery/json.h"

namespace orrery::search {

struct Distribution {
  enum class Kind { real, integer, categorical };
  Kind kind = Kind::real;
  double low = 0, high = 1;
  double step = 0;   // 0: continuous (reals only); integers have a step of at least 1
  bool log = false;  // sampled uniformly in ln(value); not with a real's step
  std::vector<Json> choices;

  static Distribution real(double low, double high, bool log = false, double step = 0);
  static Distribution integer(long long low, long long high, bool log = false, long long step = 1);
  static Distribution categorical(std::vector<Json> choices);

  // A distribution that can take one value only (Optuna leaves it out of a joint search space).
  bool single() const;
  // The internal form of an external value (a categorical's index); throws when outside.
  double to_internal(const Json& value) const;
  Json to_external(double internal) const;
  bool contains(double internal) const;
  // `name` names the dimension in errors: low > high, a log range through 0, a step that does
  // not divide the range are refused.
  void check(const std::string& name) const;

  Json to_json() const;
  static Distribution from_json(const Json& j);
  bool operator==(const Distribution& o) const;
};

}  // namespace orrery::search
