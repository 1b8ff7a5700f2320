#include "orrery/schedule.h"

#include <algorithm>

#include "orrery/error.h"

namespace orrery {

double Schedule::factor(int64_t step, double progress, int64_t total_steps) const {
  double f = 1.0;
  if (warmup >= 1) {
    f = std::min(1.0, (step + 1) / warmup);
  } else if (warmup > 0) {  // a fraction of the run, measured like the decay (steps or time)
    const double done = std::max(progress, static_cast<double>(step + 1) / total_steps);
    f = std::min(1.0, done / warmup);
  }
  if (decay > 0 && progress > 1.0 - decay) {
    double t = std::clamp((1.0 - progress) / decay, 0.0, 1.0);  // 1 -> 0 over the decay
    f = std::min(f, min_lr + (1.0 - min_lr) * t);
  }
  return std::max(f, 0.0);
}

Schedule Schedule::from_json(const Json& j) {
  Schedule s;
  if (j.is_null()) return s;
  if (!j.is_object()) throw Error("schedule must be a table like {warmup=0.05, decay=0.2, min_lr=0}");
  for (const auto& [k, v] : j.items()) {
    if (!v.is_number()) throw Error("schedule." + k + " must be a number");
    double d = v.get<double>();
    if (k == "warmup") s.warmup = d;
    else if (k == "decay") s.decay = d;
    else if (k == "min_lr") s.min_lr = d;
    else throw Error("unknown schedule option '" + k + "' (known: warmup, decay, min_lr)");
    if (d < 0) throw Error("schedule." + k + " must be >= 0");
  }
  if (s.decay > 1) throw Error("schedule.decay is a fraction of the run and must be <= 1");
  return s;
}

Json Schedule::to_json() const { return {{"warmup", warmup}, {"decay", decay}, {"min_lr", min_lr}}; }

}  // namespace orrery
