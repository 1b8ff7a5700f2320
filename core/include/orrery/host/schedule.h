#pragma once
// Schedules over a run. `progress` in [0, 1] is how far the run is (by steps or by time budget,
// whichever is further), so a run cut short by a time budget still decays. Each schedule reads
// its options through an OptionSchema, as plugins do: one way to check names, types and ranges.
#include <cstdint>
#include <string>
#include <vector>

#include "orrery/json.h"
#include "orrery/options.h"

namespace orrery {

// Learning-rate multiplier: warmup, then
//   wsd       stable at 1, then over the final `decay` fraction down to min_lr along `decay_shape`
//             (linear, or 1-sqrt: 1 - sqrt(t), which stays higher longer; Hägele et al. 2024)
//   cosine    min_lr + (1 - min_lr) (1 + cos(pi t)) / 2 over everything after warmup
//   constant  1 after warmup
enum class ScheduleKind { wsd, cosine, constant };
enum class DecayShape { linear, one_minus_sqrt };

struct Schedule {
  ScheduleKind kind = ScheduleKind::wsd;
  double warmup = 0.05;  // steps when >= 1, else a fraction of the planned steps
  double decay = 0.2;    // wsd: final fraction of the run spent decaying
  DecayShape decay_shape = DecayShape::linear;
  double min_lr = 0.0;   // floor, as a fraction of the base learning rate
  double factor(int64_t step, double progress, int64_t total_steps) const;
  static const OptionSchema& schema();
  static Schedule from_json(const Json& j);  // errors name the offending key
  Json to_json() const;
};

// Momentum warmup (and optional cooldown), as Muon recipes use: linear from `from` to `to` over
// the first `warmup` steps, then back towards `final` over the last `cooldown` fraction of the
// run. Disabled (the optimizer's own momentum) unless given.
struct MomentumSchedule {
  bool enabled = false;
  double from = 0.85, to = 0.95, final = 0.95;
  double warmup = 300;   // steps
  double cooldown = 0;   // fraction of the run
  double value(int64_t step, double progress) const;  // < 0 when disabled
  static const OptionSchema& schema();
  static MomentumSchedule from_json(const Json& j);
  Json to_json() const;
};

// Weight-decay multiplier: constant, linear (to 0 at the end) or cosine (to 0).
enum class WeightDecayKind { constant, linear, cosine };

struct WeightDecaySchedule {
  WeightDecayKind kind = WeightDecayKind::constant;
  double factor(double progress) const;
  static std::vector<std::string> kind_names();  // "constant", "linear", "cosine"
  static WeightDecaySchedule from_json(const Json& j);
  Json to_json() const;
};

}  // namespace orrery
