#include "orrery/host/schedule.h"

#include <algorithm>
#include <cmath>

#include "orrery/error.h"

namespace orrery {
namespace {

// Each enum's names, in declaration order: the one table JSON reading and writing share.
constexpr const char* kScheduleKinds[] = {"wsd", "cosine", "constant"};
constexpr const char* kDecayShapes[] = {"linear", "1-sqrt"};
constexpr const char* kWeightDecayKinds[] = {"constant", "linear", "cosine"};

template <class E, size_t N> const char* name_of(E e, const char* const (&names)[N]) {
  return names[static_cast<size_t>(e)];
}
template <class E, size_t N> E parse(const std::string& s, const char* const (&names)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (s == names[i]) return static_cast<E>(i);
  throw Error("unknown name '" + s + "'");  // unreachable after schema validation
}
template <size_t N> std::vector<std::string> names(const char* const (&list)[N]) {
  return std::vector<std::string>(std::begin(list), std::end(list));
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
  if (kind == ScheduleKind::cosine) {
    const double t = std::clamp((progress - warm_end) / std::max(1.0 - warm_end, 1e-12), 0.0, 1.0);
    f = std::min(f, min_lr + (1.0 - min_lr) * 0.5 * (1.0 + std::cos(M_PI * t)));
  } else if (kind == ScheduleKind::wsd && decay > 0 && progress > 1.0 - decay) {
    const double t = std::clamp(1.0 - (1.0 - progress) / decay, 0.0, 1.0);  // 0 -> 1 over the decay
    const double shape = decay_shape == DecayShape::one_minus_sqrt ? 1.0 - std::sqrt(t) : 1.0 - t;
    f = std::min(f, min_lr + (1.0 - min_lr) * shape);
  }
  return std::max(f, 0.0);
}

const OptionSchema& Schedule::schema() {
  static const OptionSchema s =
      OptionSchema{}
          .string("kind", "wsd", "wsd (warmup, stable, decay), cosine or constant", names(kScheduleKinds))
          .number("warmup", 0.05, "warmup: steps when >= 1, else a fraction of the run", 0.0)
          .number("decay", 0.2, "wsd: final fraction of the run spent decaying", 0.0, 1.0)
          .string("decay_shape", "linear", "wsd decay: linear or 1-sqrt", names(kDecayShapes))
          .number("min_lr", 0.0, "floor of the decay, as a fraction of the base learning rate", 0.0);
  return s;
}

Schedule Schedule::from_json(const Json& j) {
  const Json o = schema().validate(j, "the learning-rate schedule");
  Schedule s;
  s.kind = parse<ScheduleKind>(o["kind"], kScheduleKinds);
  s.warmup = o["warmup"], s.decay = o["decay"], s.min_lr = o["min_lr"];
  s.decay_shape = parse<DecayShape>(o["decay_shape"], kDecayShapes);
  return s;
}

Json Schedule::to_json() const {
  return {{"kind", name_of(kind, kScheduleKinds)}, {"warmup", warmup}, {"decay", decay},
          {"decay_shape", name_of(decay_shape, kDecayShapes)}, {"min_lr", min_lr}};
}

double MomentumSchedule::value(int64_t step, double progress) const {
  if (!enabled) return -1.0;
  double m = to;
  if (warmup > 0) m = from + (to - from) * std::min(1.0, (step + 1) / warmup);
  if (cooldown > 0 && progress > 1.0 - cooldown)
    m = to + (final - to) * std::clamp(1.0 - (1.0 - progress) / cooldown, 0.0, 1.0);
  return m;
}

const OptionSchema& MomentumSchedule::schema() {
  // Momentum must stay below 1: the bound is checked as < 1 after validation.
  static const OptionSchema s =
      OptionSchema{}
          .number("from", 0.85, "momentum at the first step", 0.0, 1.0)
          .number("to", 0.95, "momentum after the warmup", 0.0, 1.0)
          .number("warmup", 300.0, "steps from `from` to `to`", 0.0)
          .number("cooldown", 0.0, "final fraction of the run moving towards `final`", 0.0, 1.0)
          .number("final", -1.0, "momentum at the end of the cooldown (default: `to`)", -1.0, 1.0);
  return s;
}

MomentumSchedule MomentumSchedule::from_json(const Json& j) {
  MomentumSchedule s;
  if (j.is_null()) return s;
  const Json o = schema().validate(j, "the momentum schedule");
  s.enabled = true;
  s.from = o["from"], s.to = o["to"], s.warmup = o["warmup"], s.cooldown = o["cooldown"];
  s.final = o["final"].get<double>() < 0 ? s.to : o["final"].get<double>();
  for (double m : {s.from, s.to, s.final})
    if (m >= 1) throw Error("momentum values must be below 1, got " + std::to_string(m));
  return s;
}

Json MomentumSchedule::to_json() const {
  if (!enabled) return nullptr;
  return {{"from", from}, {"to", to}, {"final", final}, {"warmup", warmup}, {"cooldown", cooldown}};
}

double WeightDecaySchedule::factor(double progress) const {
  const double p = std::clamp(progress, 0.0, 1.0);
  switch (kind) {
    case WeightDecayKind::linear: return 1.0 - p;
    case WeightDecayKind::cosine: return 0.5 * (1.0 + std::cos(M_PI * p));
    case WeightDecayKind::constant: return 1.0;
  }
  return 1.0;
}

std::vector<std::string> WeightDecaySchedule::kind_names() { return names(kWeightDecayKinds); }

WeightDecaySchedule WeightDecaySchedule::from_json(const Json& j) {
  WeightDecaySchedule s;
  if (j.is_null()) return s;
  const auto choices = kind_names();
  if (!j.is_string() || std::find(choices.begin(), choices.end(), j.get<std::string>()) == choices.end())
    throw Error("weight_decay_schedule must be one of constant, linear, cosine, got " + j.dump());
  s.kind = parse<WeightDecayKind>(j.get<std::string>(), kWeightDecayKinds);
  return s;
}

Json WeightDecaySchedule::to_json() const { return name_of(kind, kWeightDecayKinds); }

}  // namespace orrery
