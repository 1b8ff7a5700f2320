#pragma once
#include <cstdint>

#include "orrery/json.h"

namespace orrery {

// Learning-rate multiplier over a run: linear warmup, constant, then linear decay to min_lr.
// `progress` in [0, 1] is how far the run is (by steps or by time budget, whichever is
// further), so a run cut short by a time budget still decays.
struct Schedule {
  double warmup = 0.05;  // steps when >= 1, else a fraction of the planned steps
  double decay = 0.2;    // final fraction of the run spent decaying
  double min_lr = 0.0;   // floor, as a fraction of the base learning rate
  double factor(int64_t step, double progress, int64_t total_steps) const;
  static Schedule from_json(const Json& j);  // errors name the offending key
  Json to_json() const;
};

}  // namespace orrery
