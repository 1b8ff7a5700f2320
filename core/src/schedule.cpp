#include "orrery/schedule.h"

#include <algorithm>
#include <cmath>

#include "orrery/error.h"

namespace orrery {
namespace {

double number(const std::string& what, const Json& v, double lo) {
  if (!v.is_number()) throw Error(what + " must be a number");
  const double d = v.get<double>();
  if (d < lo) throw Error(what + " must be >= " + std::to_string(lo));
  return d;
}

std::string choice(const std::string& what, const Json& v, std::initializer_list<const char*> known) {
  std::string list;
  for (const char* k : known) list += std::string(list.empty() ? "" : ", ") + k;
  if (!v.is_string()) throw Error(what + " must be one of " + list);
  const std::string s = v.get<std::string>();
  for (const char* k : known)
    if (s == k) return s;
  throw Error(what + " '" + s + "' is unknown (known: " + list + ")");
}

}  // namespace

double Schedule::factor(int64_t step, double progress, int64_t total_steps) const {
  double f = 1.0, warm_end = 0.0;  // warm_end: the progress at which warmup ends
  if (warmup >= 1) {
    f = std::min(1.0, (step + 1) / warmup);
    warm_end = warmup / total_steps;
  } else if (warmup > 0) {  // a fraction of the run, measured like the decay (steps or time)
    const double done = std::max(progress, static_cast<double>(step + 1) / total_steps);
    f = std::min(1.0, done / warmup);
    warm_end = warmup;
  }
  if (kind == "cosine") {
    const double t = std::clamp((progress - warm_end) / std::max(1.0 - warm_end, 1e-12), 0.0, 1.0);
    f = std::min(f, min_lr + (1.0 - min_lr) * 0.5 * (1.0 + std::cos(M_PI * t)));
  } else if (kind == "wsd" && decay > 0 && progress > 1.0 - decay) {
    const double t = std::clamp(1.0 - (1.0 - progress) / decay, 0.0, 1.0);  // 0 -> 1 over the decay
    const double shape = decay_shape == "1-sqrt" ? 1.0 - std::sqrt(t) : 1.0 - t;
    f = std::min(f, min_lr + (1.0 - min_lr) * shape);
  }
  return std::max(f, 0.0);
}

Schedule Schedule::from_json(const Json& j) {
  Schedule s;
  if (j.is_null()) return s;
  if (!j.is_object())
    throw Error("schedule must be a table like {kind=\"wsd\", warmup=0.05, decay=0.2, min_lr=0}");
  for (const auto& [k, v] : j.items()) {
    if (k == "kind") s.kind = choice("schedule.kind", v, {"wsd", "cosine", "constant"});
    else if (k == "decay_shape") s.decay_shape = choice("schedule.decay_shape", v, {"linear", "1-sqrt"});
    else if (k == "warmup") s.warmup = number("schedule.warmup", v, 0);
    else if (k == "decay") s.decay = number("schedule.decay", v, 0);
    else if (k == "min_lr") s.min_lr = number("schedule.min_lr", v, 0);
    else
      throw Error("unknown schedule option '" + k +
                  "' (known: kind, warmup, decay, decay_shape, min_lr)");
  }
  if (s.decay > 1) throw Error("schedule.decay is a fraction of the run and must be <= 1");
  return s;
}

Json Schedule::to_json() const {
  return {{"kind", kind}, {"warmup", warmup}, {"decay", decay}, {"decay_shape", decay_shape},
          {"min_lr", min_lr}};
}

double MomentumSchedule::value(int64_t step, double progress) const {
  if (!enabled) return -1.0;
  double m = to;
  if (warmup > 0) m = from + (to - from) * std::min(1.0, (step + 1) / warmup);
  if (cooldown > 0 && progress > 1.0 - cooldown)
    m = to + (final - to) * std::clamp(1.0 - (1.0 - progress) / cooldown, 0.0, 1.0);
  return m;
}

MomentumSchedule MomentumSchedule::from_json(const Json& j) {
  MomentumSchedule s;
  if (j.is_null()) return s;
  if (!j.is_object())
    throw Error("momentum must be a table like {from=0.85, to=0.95, warmup=300}");
  s.enabled = true;
  bool final_given = false;
  for (const auto& [k, v] : j.items()) {
    if (k == "from") s.from = number("momentum.from", v, 0);
    else if (k == "to") s.to = number("momentum.to", v, 0);
    else if (k == "final") s.final = number("momentum.final", v, 0), final_given = true;
    else if (k == "warmup") s.warmup = number("momentum.warmup", v, 0);
    else if (k == "cooldown") s.cooldown = number("momentum.cooldown", v, 0);
    else throw Error("unknown momentum option '" + k + "' (known: from, to, warmup, cooldown, final)");
  }
  if (!final_given) s.final = s.to;
  for (double m : {s.from, s.to, s.final})
    if (m >= 1) throw Error("momentum values must be below 1, got " + std::to_string(m));
  if (s.cooldown > 1) throw Error("momentum.cooldown is a fraction of the run and must be <= 1");
  return s;
}

Json MomentumSchedule::to_json() const {
  if (!enabled) return nullptr;
  return {{"from", from}, {"to", to}, {"final", final}, {"warmup", warmup}, {"cooldown", cooldown}};
}

double WeightDecaySchedule::factor(double progress) const {
  const double p = std::clamp(progress, 0.0, 1.0);
  if (kind == "linear") return 1.0 - p;
  if (kind == "cosine") return 0.5 * (1.0 + std::cos(M_PI * p));
  return 1.0;
}

WeightDecaySchedule WeightDecaySchedule::from_json(const Json& j) {
  WeightDecaySchedule s;
  if (!j.is_null()) s.kind = choice("weight_decay_schedule", j, {"constant", "linear", "cosine"});
  return s;
}

}  // namespace orrery
