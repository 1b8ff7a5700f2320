// orrery.search{...}: a hyper-parameter study (core/include/orrery/host/search/study.h) driven by
// a Lua objective. The space is data, the objective a function of a trial; calling it again with
// the same name and runs folder resumes the study, and several processes calling it at once
// share it.
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "orrery/host/lua_binding.h"
#include "orrery/host/search/study.h"

namespace orrery {
namespace {
using search::Dimension;
using search::Distribution;

// One dimension from its Lua form: {"real", lo, hi, step = s}, {"log", lo, hi}, {"int", lo, hi,
// step = s}, {"logint", lo, hi}, {"categorical", a, b, ...}, {"simplex", a, b, ..., max = {...}},
// any of them with when = {parent = value or {values}}.
Dimension to_dimension(const std::string& name, const Json& j) {
  const std::string what = "orrery.search: space." + name;
  if (!j.is_array() || j.empty() || !j[0].is_string())
    throw Error(what + " must be a list starting with its kind, e.g. {\"log\", 1e-4, 1e-1}");
  const std::string kind = j[0];
  auto number = [&](size_t i) {
    if (i >= j.size() || !j[i].is_number()) throw Error(what + ": {\"" + kind + "\", low, high} needs two numbers");
    return j[i].get<double>();
  };
  Dimension d;
  if (kind == "real" || kind == "float" || kind == "log") {
    d = Dimension::of(name, Distribution::real(number(1), number(2), kind == "log", 0));
  } else if (kind == "int" || kind == "logint") {
    d = Dimension::of(name, Distribution::integer(std::llround(number(1)), std::llround(number(2)), kind == "logint", 1));
    if (std::floor(number(1)) != number(1) || std::floor(number(2)) != number(2))
      throw Error(what + ": integer bounds must be whole numbers");
  } else if (kind == "categorical") {
    if (j.size() < 2) throw Error(what + ": {\"categorical\", choice, ...} needs at least one choice");
    d = Dimension::of(name, Distribution::categorical(std::vector<Json>(j.begin() + 1, j.end())));
  } else if (kind == "simplex") {
    std::vector<std::string> parts;
    for (size_t i = 1; i < j.size(); ++i) {
      if (!j[i].is_string()) throw Error(what + ": a simplex lists its components by name");
      parts.push_back(j[i]);
    }
    d = Dimension::mixture(name, parts, std::vector<double>(parts.size(), 1.0));
  } else {
    throw Error(what + ": unknown kind '" + kind + "' (real, log, int, logint, categorical or simplex)");
  }
  return d;
}

search::SearchSpace to_space(lua_State* L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE) throw Error("orrery.search: space must be a table {name = {kind, ...}, ...}");
  std::map<std::string, Dimension> by_name;  // in name order: Lua tables have none of their own
  lua_pushnil(L);
  while (lua_next(L, idx < 0 ? idx - 1 : idx)) {
    if (lua_type(L, -2) != LUA_TSTRING) throw Error("orrery.search: space must map names to dimensions");
    const std::string name = lua_tostring(L, -2);
    const std::string what = "orrery.search: space." + name;
    if (lua_type(L, -1) != LUA_TTABLE) throw Error(what + " must be a list such as {\"log\", 1e-4, 1e-1}");
    check_fields(L, -1, what, {"step", "max", "when"}, /*list=*/true);
    Json list = Json::array();
    for (lua_Integer i = 1; i <= static_cast<lua_Integer>(lua_rawlen(L, -1)); ++i) {
      lua_rawgeti(L, -1, i);
      list.push_back(lua_to_json(L, -1, what + "[" + std::to_string(i) + "]"));
      lua_pop(L, 1);
    }
    Dimension d = to_dimension(name, list);
    if (field(L, -1, "step")) {
      const Json step = lua_to_json(L, -1, what + ".step");
      lua_pop(L, 1);
      if (!step.is_number() || d.simplex || d.dist.kind == Distribution::Kind::categorical || d.dist.log)
        throw Error(what + ".step applies to real and int dimensions only (not log ones), as a number");
      d.dist.step = step.get<double>();
    }
    if (field(L, -1, "max")) {
      d.caps = to_numbers(L, -1, what + ".max");
      lua_pop(L, 1);
      if (!d.simplex) throw Error(what + ".max applies to a simplex only");
    }
    if (field(L, -1, "when")) {
      const Json when = lua_to_json(L, -1, what + ".when");
      lua_pop(L, 1);
      if (!when.is_object() || when.size() != 1)
        throw Error(what + ".when must name one categorical and its value(s), e.g. when = {norm = \"rms\"}");
      d.when = when.begin().key();
      d.when_values = when.begin()->is_array() ? when.begin()->get<std::vector<Json>>() : std::vector<Json>{*when.begin()};
    }
    by_name[name] = std::move(d);
    lua_pop(L, 1);
  }
  // Parents before the dimensions that depend on them.
  std::vector<Dimension> ordered;
  std::set<std::string> placed;
  while (ordered.size() < by_name.size()) {
    const size_t before = ordered.size();
    for (auto& [name, d] : by_name)
      if (!placed.count(name) && (d.when.empty() || placed.count(d.when))) ordered.push_back(d), placed.insert(name);
    if (ordered.size() == before) {  // the rest wait on a parent that never comes: let the space say why
      for (auto& [name, d] : by_name)
        if (!placed.count(name)) ordered.push_back(d), placed.insert(name);
    }
  }
  return search::SearchSpace(std::move(ordered));
}

// What a trial's methods act on: Lua owns it (a userdata upvalue of the methods), so a trial
// table kept past its objective is refused, not dangling.
struct TrialContext {
  search::Study* study;  // null once the trial has finished
  int64_t number;
  bool pruned;
};

TrialContext& context(lua_State* L) {
  auto& c = *static_cast<TrialContext*>(lua_touserdata(L, lua_upvalueindex(2)));
  if (!c.study) throw Error("trial " + std::to_string(c.number) + " has finished: its methods work inside the objective only");
  return c;
}

// trial:report(step, value)
int l_report(lua_State* L) {
  TrialContext& c = context(L);
  const int64_t step = to_integer(L, 2, "trial:report: step");
  if (step < 0) throw Error("trial:report: step must be >= 0, got " + std::to_string(step));
  if (lua_type(L, 3) != LUA_TNUMBER) throw Error(std::string("trial:report: value must be a number, got a ") + luaL_typename(L, 3));
  c.study->report(c.number, step, lua_tonumber(L, 3));
  return 0;
}

// trial:should_prune(): true when the pruner stops this trial (end the objective then).
int l_should_prune(lua_State* L) {
  TrialContext& c = context(L);
  c.pruned = c.study->should_prune(c.number);
  lua_pushboolean(L, c.pruned);
  return 1;
}

// The trial table the objective receives (number, params, report, should_prune), on top of the
// stack; returns its context.
TrialContext* push_trial(lua_State* L, search::Study& study, int64_t number, const Json& params) {
  auto* c = static_cast<TrialContext*>(lua_newuserdatauv(L, sizeof(TrialContext), 0));
  *c = TrialContext{&study, number, false};
  lua_newtable(L);
  lua_pushinteger(L, number);
  lua_setfield(L, -2, "number");
  push_json(L, params);
  lua_setfield(L, -2, "params");
  for (auto [name, fn] : {std::pair{"report", +[](lua_State* L) { return protect(L, l_report); }},
                          std::pair{"should_prune", +[](lua_State* L) { return protect(L, l_should_prune); }}}) {
    lua_pushvalue(L, lua_upvalueindex(1));  // the host, as every binding has it
    lua_pushvalue(L, -3);                   // the context
    lua_pushcclosure(L, fn, 2);
    lua_setfield(L, -2, name);
  }
  lua_remove(L, -2);  // the context lives on in the methods' upvalues
  return c;
}

std::string short_params(const Json& p) {
  std::string s;
  for (const auto& [k, v] : p.items()) {
    char buf[64];
    if (v.is_number_float()) std::snprintf(buf, sizeof buf, "%.4g", v.get<double>());
    std::string text = v.is_number_float() ? buf : v.is_object() ? "{...}" : v.dump();
    s += (s.empty() ? "" : " ") + k + "=" + text;
  }
  return s;
}

Json trial_json(search::Study& s, const search::Trial& t) {
  Json j = {{"number", t.number}, {"state", search::state_name(t.state)}, {"params", s.params_of(t)}};
  if (std::isfinite(t.value)) j["value"] = t.value;
  if (!t.intermediate.empty()) j["last_step"] = t.last_step();
  return j;
}

// orrery.search{name = "s", space = {...}, objective = function(trial) ... end, trials = 20,
//               sampler = "tpe" | {"tpe", multivariate = true, constant_liar = true, seed = 0,
//               n_startup_trials = 10, n_ei_candidates = 24} | "random" | "grid",
//               pruner = "median" | {"percentile", percentile = 25, ...} | {"halving", ...},
//               direction = "minimize", enqueue = {{lr = 1e-3}, ...}, runs_dir = "runs", quiet = false}
int l_search(lua_State* L) {
  const std::string fn = "orrery.search";
  luaL_checktype(L, 1, LUA_TTABLE);
  check_fields(L, 1, fn, {"name", "space", "objective", "trials", "sampler", "pruner", "direction", "enqueue",
                          "runs_dir", "quiet"});
  search::StudyConfig config;
  config.name = string_field(L, 1, "name", fn).value_or("");
  if (config.name.empty() || config.name.find('/') != std::string::npos)
    throw Error(fn + ": name = \"...\" is required (the study's folder under runs_dir; no '/')");
  if (!field(L, 1, "space")) throw Error(fn + ": space = {name = {kind, ...}, ...} is required");
  config.space = to_space(L, -1);
  lua_pop(L, 1);
  const std::string direction = string_field(L, 1, "direction", fn).value_or("minimize");
  if (direction != "minimize" && direction != "maximize")
    throw Error(fn + ": direction must be \"minimize\" or \"maximize\", got \"" + direction + "\"");
  config.direction = direction == "minimize" ? search::Direction::minimize : search::Direction::maximize;
  if (field(L, 1, "sampler")) {
    const PluginSpec s = to_plugin_spec(L, -1, fn + ": sampler");
    lua_pop(L, 1);
    config.sampler = s.name;
    for (const auto& [k, v] : s.options.items()) {
      const std::string what = fn + ": sampler option '" + k + "'";
      if (k == "multivariate" && v.is_boolean()) config.tpe.parzen.multivariate = v;
      else if (k == "constant_liar" && v.is_boolean()) config.tpe.constant_liar = v;
      else if (k == "seed" && v.is_number_integer() && v.get<int64_t>() >= 0) config.seed = v.get<uint64_t>();
      else if (k == "n_startup_trials" && v.is_number_integer() && v.get<int64_t>() >= 0) config.tpe.n_startup_trials = v.get<size_t>();
      else if (k == "n_ei_candidates" && v.is_number_integer() && v.get<int64_t>() >= 1) config.tpe.n_ei_candidates = v.get<size_t>();
      else if (k == "prior_weight" && v.is_number() && v.get<double>() > 0) config.tpe.parzen.prior_weight = v;
      else throw Error(what + " is unknown or of the wrong type (multivariate, constant_liar: booleans; seed, "
                       "n_startup_trials, n_ei_candidates: whole numbers; prior_weight: a positive number)");
    }
  }
  if (field(L, 1, "pruner")) {
    const PluginSpec p = to_plugin_spec(L, -1, fn + ": pruner");
    lua_pop(L, 1);
    config.pruner = p.name;
    for (const auto& [k, v] : p.options.items()) {
      const std::string what = fn + ": pruner option '" + k + "'";
      if (!v.is_number()) throw Error(what + " must be a number");
      const double x = v.get<double>();
      if (k == "percentile" && p.name == "percentile") config.percentile.percentile = x;
      else if (k == "n_startup_trials" && p.name != "halving") config.percentile.n_startup_trials = static_cast<size_t>(x);
      else if (k == "n_warmup_steps" && p.name != "halving") config.percentile.n_warmup_steps = static_cast<int64_t>(x);
      else if (k == "interval_steps" && p.name != "halving") config.percentile.interval_steps = static_cast<int64_t>(x);
      else if (k == "n_min_trials" && p.name != "halving") config.percentile.n_min_trials = static_cast<size_t>(x);
      else if (k == "min_resource" && p.name == "halving") config.halving.min_resource = static_cast<int64_t>(x);
      else if (k == "reduction_factor" && p.name == "halving") config.halving.reduction_factor = static_cast<int64_t>(x);
      else if (k == "min_early_stopping_rate" && p.name == "halving") config.halving.min_early_stopping_rate = static_cast<int64_t>(x);
      else if (k == "bootstrap_count" && p.name == "halving") config.halving.bootstrap_count = static_cast<size_t>(x);
      else throw Error(what + " is not an option of the " + p.name + " pruner");
    }
  }
  const int64_t n_trials = integer_field(L, 1, "trials", fn).value_or(20);
  if (n_trials < 1) throw Error(fn + ": trials must be at least 1, got " + std::to_string(n_trials));
  const bool quiet = boolean_field(L, 1, "quiet", fn).value_or(false);
  const std::string runs_dir = string_field(L, 1, "runs_dir", fn).value_or("runs");
  if (!field(L, 1, "objective") || lua_type(L, -1) != LUA_TFUNCTION)
    throw Error(fn + ": objective = function(trial) ... return value end is required");
  const int objective = lua_gettop(L);

  search::Study study(runs_dir + "/" + config.name, config);
  if (field(L, 1, "enqueue")) {
    const Json queued = lua_to_json(L, -1, fn + ": enqueue");
    lua_pop(L, 1);
    if (!queued.is_array()) throw Error(fn + ": enqueue must be a list of configurations, {{lr = 1e-3}, ...}");
    // Each once per study: a resumed study does not queue them again.
    std::set<std::string> have;
    for (const Json& e : study.events())
      if (e.value("event", "") == "enqueue") have.insert(e["params"].dump());
    for (const Json& q : queued)
      if (!have.count(q.dump())) study.enqueue(q);
  }

  // Trials until the study holds n_trials that ran (those a dead worker lost do not count).
  auto ran = [&] {
    int64_t n = 0;
    for (const auto& t : study.trials()) n += !t.lost;
    return n;
  };
  int64_t failures = 0;
  std::string first_failure;
  while (ran() < n_trials) {
    auto t = study.ask();
    if (!t) break;  // a grid with no point left
    const Json params = study.params_of(*t);
    lua_pushvalue(L, objective);
    TrialContext& c = *push_trial(L, study, t->number, params);
    const int status = lua_pcall(L, 1, 1, 0);
    c.study = nullptr;
    if (status != LUA_OK) {
      std::string msg = lua_tostring(L, -1) ? lua_tostring(L, -1) : "error in the objective";
      lua_pop(L, 1);
      study.tell(t->number, search::TrialState::failed, NAN, msg);
      if (host(L).interrupt.requested()) throw LocatedError(msg);
      if (!quiet) std::printf("trial %lld failed: %s\n", static_cast<long long>(t->number), msg.c_str());
      if (failures++ == 0) first_failure = msg;
      continue;
    }
    if (c.pruned) {
      study.tell(t->number, search::TrialState::pruned, NAN);
    } else if (lua_type(L, -1) != LUA_TNUMBER) {
      const std::string got = luaL_typename(L, -1);
      study.tell(t->number, search::TrialState::failed, NAN, "the objective returned a " + got + ", not a number");
      if (failures++ == 0) first_failure = "the objective returned a " + got + ", not a number";
    } else {
      // A NaN or infinite value is a failed trial (Study::tell), counted as one here.
      const double value = lua_tonumber(L, -1);
      study.tell(t->number, search::TrialState::complete, value);
      if (!std::isfinite(value) && failures++ == 0)
        first_failure = std::string("the objective returned ") + (std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf");
    }
    lua_pop(L, 1);
    if (!quiet) {
      const auto best = study.best();
      const auto done = study.trials()[static_cast<size_t>(t->number)];
      std::printf("trial %3lld  %-8s %12s   best %s   %s\n", static_cast<long long>(t->number),
                  search::state_name(done.state),
                  std::isfinite(done.value) ? std::to_string(done.value).c_str() : "",
                  best ? (std::to_string(best->value) + " (#" + std::to_string(best->number) + ")").c_str() : "-",
                  short_params(params).c_str());
      std::fflush(stdout);
    }
  }
  const auto best = study.best();
  if (!best && failures > 0)
    throw Error(fn + ": every trial of study '" + config.name + "' failed; the first: " + first_failure);
  Json out = {{"name", config.name}, {"dir", study.dir()}, {"trials", Json::array()}};
  for (const auto& t : study.trials()) out["trials"].push_back(trial_json(study, t));
  if (best) out["best"] = trial_json(study, *best);
  push_json(L, out);
  return 1;
}

}  // namespace

void open_search_library(lua_State* L, LuaHost& h) {
  static const luaL_Reg functions[] = {{"search", ORRERY_LUA(l_search)}, {nullptr, nullptr}};
  set_functions(L, h, functions);
}

}  // namespace orrery
