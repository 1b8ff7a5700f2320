#include "orrery/host/search/distribution.h"

#include <cmath>
#include <cstdio>

#include "orrery/error.h"
#include "orrery/host/search/trial.h"

namespace orrery::search {
namespace {
std::string format_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", x);
  return buf;
}
}  // namespace

Distribution Distribution::real(double low, double high, bool log, double step) {
  Distribution d;
  d.kind = Kind::real, d.low = low, d.high = high, d.log = log, d.step = step;
  return d;
}

Distribution Distribution::integer(long long low, long long high, bool log, long long step) {
  Distribution d;
  d.kind = Kind::integer, d.low = static_cast<double>(low), d.high = static_cast<double>(high), d.log = log;
  d.step = static_cast<double>(step);
  return d;
}

Distribution Distribution::categorical(std::vector<Json> choices) {
  Distribution d;
  d.kind = Kind::categorical, d.choices = std::move(choices);
  return d;
}

bool Distribution::single() const {
  if (kind == Kind::categorical) return choices.size() == 1;
  if (step > 0) return high - low < step;
  return low == high;
}

void Distribution::check(const std::string& name) const {
  auto fail = [&](const std::string& why) { return Error("search dimension '" + name + "': " + why); };
  if (kind == Kind::categorical) {
    if (choices.empty()) throw fail("a categorical dimension needs at least one choice");
    return;
  }
  if (!std::isfinite(low) || !std::isfinite(high)) throw fail("its bounds must be finite numbers");
  if (low > high) throw fail("low (" + format_number(low) + ") is above high (" + format_number(high) + ")");
  if (log && low <= 0) throw fail("a log dimension needs low > 0, got " + format_number(low));
  if (kind == Kind::real && log && step > 0) throw fail("a real dimension cannot be both log and stepped");
  if (kind == Kind::integer) {
    if (std::floor(low) != low || std::floor(high) != high) throw fail("integer bounds must be whole numbers");
    if (step < 1 || std::floor(step) != step) throw fail("an integer step must be a whole number >= 1");
    if (log && step != 1) throw fail("a log integer dimension takes step 1 only");
  }
  if (step < 0) throw fail("step must be positive");
  if (step > 0) {
    const double k = (high - low) / step;
    if (std::abs(k - std::nearbyint(k)) > 1e-9 * std::max(1.0, k))
      throw fail("step " + format_number(step) + " does not divide the range " + format_number(low) + " .. " +
                 format_number(high));
  }
}

double Distribution::to_internal(const Json& value) const {
  if (kind == Kind::categorical) {
    for (size_t i = 0; i < choices.size(); ++i)
      if (choices[i] == value) return static_cast<double>(i);
    throw Error("value " + value.dump() + " is not one of the choices " + Json(choices).dump());
  }
  if (!value.is_number()) throw Error("value " + value.dump() + " is not a number");
  const double x = value.get<double>();
  if (!contains(x))
    throw Error("value " + format_number(x) + " is outside " + format_number(low) + " .. " + format_number(high) +
                (step > 0 ? " step " + format_number(step) : ""));
  return x;
}

Json Distribution::to_external(double x) const {
  if (kind == Kind::categorical) return choices.at(static_cast<size_t>(x));
  if (kind == Kind::integer) return static_cast<long long>(std::llround(x));
  return x;
}

bool Distribution::contains(double x) const {
  if (kind == Kind::categorical) return x >= 0 && x < static_cast<double>(choices.size()) && std::floor(x) == x;
  if (!(x >= low && x <= high)) return false;
  if (step > 0) {
    const double k = (x - low) / step;
    return std::abs(k - std::nearbyint(k)) <= 1e-8 * std::max(1.0, std::abs(k));
  }
  return true;
}

Json Distribution::to_json() const {
  if (kind == Kind::categorical) return {{"kind", "categorical"}, {"choices", choices}};
  Json j = {{"kind", kind == Kind::real ? "real" : "int"}, {"low", low}, {"high", high}, {"log", log}};
  if (step > 0) j["step"] = step;
  return j;
}

Distribution Distribution::from_json(const Json& j) {
  const std::string k = j.at("kind").get<std::string>();
  if (k == "categorical") return categorical(j.at("choices").get<std::vector<Json>>());
  Distribution d;
  d.kind = k == "int" ? Kind::integer : k == "real" ? Kind::real : throw Error("unknown distribution kind '" + k + "'");
  d.low = j.at("low").get<double>();
  d.high = j.at("high").get<double>();
  d.log = j.value("log", false);
  d.step = j.value("step", d.kind == Kind::integer ? 1.0 : 0.0);
  return d;
}

bool Distribution::operator==(const Distribution& o) const {
  return kind == o.kind && low == o.low && high == o.high && step == o.step && log == o.log && choices == o.choices;
}

const char* state_name(TrialState s) {
  switch (s) {
    case TrialState::running: return "running";
    case TrialState::complete: return "complete";
    case TrialState::pruned: return "pruned";
    case TrialState::failed: return "failed";
  }
  return "?";
}

TrialState parse_state(const std::string& name) {
  for (TrialState s : {TrialState::running, TrialState::complete, TrialState::pruned, TrialState::failed})
    if (name == state_name(s)) return s;
  throw Error("unknown trial state '" + name + "' (running, complete, pruned or failed)");
}

}  // namespace orrery::search
