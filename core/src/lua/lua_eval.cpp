// orrery.eval{...}: models and classical baselines on a benchmark, the GIFT-Eval way;
// orrery.backtest{...}: a model on the last windows of given series, at a chosen horizon; and
// orrery.fit_scaling{...}: a scaling law through measured losses, with bootstrap intervals; and
// orrery.bootstrap{...}: a percentile interval of any statistic over resampled paired units.
#include "orrery/host/combination.h"
#include "orrery/host/lua_binding.h"

#include <algorithm>
#include <cstdio>

#include "orrery/host/backtest.h"
#include "orrery/host/baselines.h"
#include "orrery/host/bootstrap.h"
#include "orrery/host/data_mixture.h"
#include "orrery/host/covariate_regression.h"
#include "orrery/host/eval_protocol.h"
#include "orrery/host/load_model.h"
#include "orrery/host/model.h"
#include "orrery/host/registry.h"
#include "orrery/host/scaling_fit.h"

namespace orrery {
namespace {

// A model argument: a model object, or a path load_model opens.
std::shared_ptr<Model> to_model(lua_State* L, int idx, const std::string& what) {
  if (lua_type(L, idx) == LUA_TSTRING) return std::shared_ptr<Model>(load_model(lua_tostring(L, idx), host(L).registry));
  return check_box<Model>(L, idx, kModelMeta, what + " (a model, or the path of one)");
}

// orrery.eval{model = m | "path", name = "model" | models = {name = m, ...},
//             data = "assets/data" | {"csv", files = ..., layout = "long"} | orrery.data{...},
//             frequency = "M", baselines = {...}, terms = {"short"}, split = "test" | "validation",
//             validation_windows = 1, windows = false,
//             context = {64, 512} | 2048, batch_size = 64, sign_average = false,
//             box_cox = "checked" | true | false, box_cox_average = true | false (the defaults:
//             inference_defaults.h),
//             regression_lags = 0, combine = {"ets", "theta"}, combine_rule = "mean" | "median",
//             combine_check = false, check_origins = 1,
//             out = "runs/x", quiet = false}
int l_eval(lua_State* L) {
  const std::string fn = "orrery.eval";
  luaL_checktype(L, 1, LUA_TTABLE);
  check_fields(L, 1, fn, {"model", "name", "models", "data", "frequency", "baselines", "terms", "split", "context",
                          "batch_size", "sign_average", "box_cox", "box_cox_average", "regression_lags",
                          "validation_windows", "windows", "out", "combine", "combine_rule", "combine_check",
                          "check_origins", "forecasts", "quiet"});
  EvalRequest r;
  std::vector<std::shared_ptr<Model>> held;
  if (field(L, 1, "model")) {
    held.push_back(to_model(L, -1, fn + ": model"));
    lua_pop(L, 1);
    r.models.emplace_back(string_field(L, 1, "name", fn).value_or("model"), held.back().get());
  }
  if (field(L, 1, "models")) {
    if (lua_type(L, -1) != LUA_TTABLE) throw Error(fn + ": models must be a table {name = model, ...}");
    std::vector<std::pair<std::string, std::shared_ptr<Model>>> named;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      if (lua_type(L, -2) != LUA_TSTRING) throw Error(fn + ": models must map names to models, {quickstart = m}");
      const std::string name = lua_tostring(L, -2);
      named.emplace_back(name, to_model(L, -1, fn + ": models." + name));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    std::sort(named.begin(), named.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [name, m] : named) held.push_back(m), r.models.emplace_back(name, m.get());
  }
  if (field(L, 1, "data")) {  // a benchmark path, or a data source: its files' series
    if (lua_type(L, -1) == LUA_TSTRING) {
      r.data = lua_tostring(L, -1);
    } else {
      DataArgument d = to_data(L, -1, fn + ": data (a path, a plugin choice such as {\"csv\", files = ...}, or a data object)");
      r.data = d.spec.name;
      const DataContext context{.interrupt = &host(L).interrupt};
      r.source = d.source ? d.source : std::shared_ptr<DataSource>(make_data_source(host(L).registry, d.spec, context));
    }
    lua_pop(L, 1);
  }
  if (auto v = string_field(L, 1, "frequency", fn)) r.frequency = *v;
  if (field(L, 1, "baselines")) r.baselines = to_strings(L, -1, fn + ": baselines"), lua_pop(L, 1);
  if (field(L, 1, "combine")) {
    r.combine = to_strings(L, -1, fn + ": combine"), lua_pop(L, 1);
    for (const auto& b : r.combine) make_baseline(b);  // an unknown name is refused, listing them
  }
  if (auto rule = string_field(L, 1, "combine_rule", fn)) r.combine_rule = parse_combine_rule(*rule, fn + ": combine_rule");
  if (auto check = boolean_field(L, 1, "combine_check", fn)) r.combine_check = *check;
  if (r.combine_check && r.combine.empty()) throw Error(fn + ": combine_check checks a combination; give combine");
  if (field(L, 1, "terms")) {
    r.protocol.terms.clear();
    for (const auto& t : to_strings(L, -1, fn + ": terms")) r.protocol.terms.push_back(parse_term(t));
    lua_pop(L, 1);
  }
  if (auto v = string_field(L, 1, "split", fn)) {
    if (*v != "test" && *v != "validation")
      throw Error(fn + ": split must be \"test\" or \"validation\", got \"" + *v + "\"");
    r.protocol.validation = *v == "validation";
  }
  if (auto v = integer_field(L, 1, "validation_windows", fn)) {
    if (!r.protocol.validation) throw Error(fn + ": validation_windows needs split = \"validation\"");
    if (*v < 1) throw Error(fn + ": validation_windows must be at least 1, got " + std::to_string(*v));
    r.protocol.validation_windows = *v;
  }
  if (auto v = boolean_field(L, 1, "windows", fn)) r.protocol.per_window = *v;
  if (field(L, 1, "context")) r.contexts = to_integers(L, -1, fn + ": context"), lua_pop(L, 1);
  if (auto v = integer_field(L, 1, "batch_size", fn)) r.batch_size = *v;
  if (auto v = boolean_field(L, 1, "sign_average", fn)) r.sign_average = *v;
  const bool box_cox_given = field(L, 1, "box_cox");
  if (box_cox_given) {
    const BoxCoxChoice c = to_box_cox(L, -1, fn + ": box_cox", false);
    r.box_cox = c.exponent.has_value(), r.box_cox_check = c.check;
    lua_pop(L, 1);
  }
  const auto box_cox_average = boolean_field(L, 1, "box_cox_average", fn);
  if (box_cox_average) {
    if (*box_cox_average && !r.box_cox)
      throw Error(fn + ": box_cox_average averages the Box-Cox forecast with the plain one; with box_cox = false, "
                  "leave it out");
    r.box_cox_average = *box_cox_average;
  }
  if (auto v = integer_field(L, 1, "regression_lags", fn)) {
    check_regression_lags(*v, fn + ": regression_lags");
    r.regression_lags = *v;
  }
  bool check_origins_given = false;
  if (auto v = integer_field(L, 1, "check_origins", fn)) {  // the horizons both checks score
    check_origins_given = true;
    if (!(r.box_cox && r.box_cox_check) && !r.combine_check)
      throw Error(fn + ": check_origins sets the horizons a check scores; with box_cox other than \"checked\", give "
                  "combine_check = true, or leave check_origins out");
    check_origins_count(*v, fn + ": check_origins");
    r.check_origins = *v;
  }
  if (auto v = string_field(L, 1, "out", fn)) r.out = *v;
  if (auto v = boolean_field(L, 1, "forecasts", fn)) r.forecasts = *v;  // with out: forecasts.jsonl too
  if (field(L, 1, "quiet")) r.quiet = to_boolean(L, -1, fn + ": quiet"), lua_pop(L, 1);
  if (r.models.empty() && r.baselines.empty()) throw Error(fn + ": give a model, models or baselines to evaluate");
  if (!r.combine.empty() && r.models.empty()) throw Error(fn + ": combine pools a model with baselines; give a model");
  if (r.sign_average && r.models.empty()) throw Error(fn + ": sign_average averages models' forecasts: give a model");
  if (box_cox_given && r.models.empty()) throw Error(fn + ": box_cox sets how models forecast: give a model");
  if (box_cox_average && r.models.empty()) throw Error(fn + ": box_cox_average sets how models forecast: give a model");
  if (check_origins_given && r.models.empty()) throw Error(fn + ": check_origins sets how models forecast: give a model");
  push_json(L, evaluate_request(r, &host(L).interrupt));
  return 1;
}

// orrery.backtest{model=, series={{name=, values=, season=}, ...}, horizon=, windows=, context=}
int l_backtest(lua_State* L) {
  const std::string fn = "orrery.backtest";
  luaL_checktype(L, 1, LUA_TTABLE);
  check_fields(L, 1, fn, {"model", "series", "horizon", "windows", "context"});
  if (!field(L, 1, "model")) throw Error(fn + ": model is required");
  auto model = check_box<Model>(L, -1, kModelMeta, fn + ": model");
  lua_pop(L, 1);
  BacktestConfig cfg;
  if (auto v = integer_field(L, 1, "horizon", fn)) cfg.horizon = *v;
  if (auto v = integer_field(L, 1, "windows", fn)) cfg.windows = *v;
  if (auto v = integer_field(L, 1, "context", fn)) cfg.context = *v;
  if (!field(L, 1, "series") || lua_type(L, -1) != LUA_TTABLE)
    throw Error(fn + ": series = {{name=..., values={...}, season=12}, ...} is required");
  std::vector<SeriesInput> series;
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
  for (lua_Integer i = 1; i <= n; ++i) {
    const std::string what = fn + ": series[" + std::to_string(i) + "]";
    if (lua_rawgeti(L, -1, i) != LUA_TTABLE) throw Error(what + " must be a table {name=, values=, season=}");
    const int s = lua_gettop(L);
    check_fields(L, s, what, {"name", "values", "season"});
    SeriesInput in;
    in.name = string_field(L, s, "name", what).value_or("series" + std::to_string(i));
    if (!field(L, s, "values")) throw Error(what + " needs values = {...}");
    in.values = to_numbers(L, -1, what + ".values");
    lua_pop(L, 1);
    in.season = integer_field(L, s, "season", what).value_or(1);
    if (in.season < 1) throw Error(what + ": season must be at least 1, got " + std::to_string(in.season));
    series.push_back(std::move(in));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (series.empty()) throw Error(fn + ": series is an empty list");
  push_json(L, backtest(*model, series, cfg, &host(L).interrupt));
  return 1;
}

Json law_json(const scaling::Law& l) {
  Json j = {{"E", l.E}, {"A", l.A}, {"alpha", l.alpha}, {"rss", l.rss}};
  if (l.joint) j["B"] = l.B, j["beta"] = l.beta;
  return j;
}

// orrery.fit_scaling{points = {{params =, tokens =, loss =, run =}, ...}, law = "size" | "joint",
//                    bootstrap = 1000, seed = 0, hold_out_largest = true}
int l_fit_scaling(lua_State* L) {
  const std::string fn = "orrery.fit_scaling";
  luaL_checktype(L, 1, LUA_TTABLE);
  check_fields(L, 1, fn, {"points", "law", "bootstrap", "seed", "hold_out_largest"});
  const std::string law = string_field(L, 1, "law", fn).value_or("size");
  if (law != "size" && law != "joint") throw Error(fn + ": law must be \"size\" (L(N)) or \"joint\" (L(N, D)), got \"" + law + "\"");
  const int64_t bootstrap = integer_field(L, 1, "bootstrap", fn).value_or(1000);
  if (bootstrap < 0) throw Error(fn + ": bootstrap must be >= 0");
  const int64_t seed = integer_field(L, 1, "seed", fn).value_or(0);
  if (!field(L, 1, "points") || lua_type(L, -1) != LUA_TTABLE)
    throw Error(fn + ": points = {{params = N, tokens = D, loss = L, run = name}, ...} is required");
  std::vector<scaling::Point> points;
  for (lua_Integer i = 1; i <= static_cast<lua_Integer>(lua_rawlen(L, -1)); ++i) {
    const std::string what = fn + ": points[" + std::to_string(i) + "]";
    if (lua_rawgeti(L, -1, i) != LUA_TTABLE) throw Error(what + " must be a table {params =, tokens =, loss =}");
    const Json p = lua_to_json(L, -1, what);
    lua_pop(L, 1);
    for (const auto& [k, v] : p.items())
      if (k != "params" && k != "tokens" && k != "loss" && k != "run") throw Error(what + ": unknown field '" + k + "'");
    auto number = [&](const char* k, bool needed) {
      if (!p.contains(k)) {
        if (needed) throw Error(what + " needs " + k + " = a number");
        return 0.0;
      }
      if (!p[k].is_number()) throw Error(what + "." + k + " must be a number");
      return p[k].get<double>();
    };
    points.push_back({number("params", true), number("tokens", law == "joint"), number("loss", true),
                      p.contains("run") ? (p["run"].is_string() ? p["run"].get<std::string>() : p["run"].dump()) : ""});
  }
  lua_pop(L, 1);
  const bool hold_out = boolean_field(L, 1, "hold_out_largest", fn).value_or(true);
  scaling::FitReport r;
  try {
    r = scaling::fit_with_intervals(points, law == "joint", static_cast<size_t>(bootstrap), static_cast<uint64_t>(seed),
                                    hold_out, &host(L).interrupt);
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& e) {
    throw Error(fn + ": " + e.what());
  }
  Json out = law_json(r.law);
  if (!r.warning.empty()) {
    out["warning"] = r.warning;
    std::fprintf(stderr, "orrery: warning: %s: %s\n", fn.c_str(), r.warning.c_str());
  }
  out["law"] = law;
  out["intervals"] = Json::object();
  for (const auto& [k, iv] : r.intervals) out["intervals"][k] = {iv.lo, iv.hi};
  out["bootstrap_fits"] = r.bootstrap_fits;
  out["bootstrap"] = Json::array();
  for (const auto& l : r.bootstrap_laws) out["bootstrap"].push_back(law_json(l));
  if (r.holdout_error) out["holdout"] = {{"error", *r.holdout_error}, {"law", law_json(*r.holdout_law)}};
  push_json(L, out);
  return 1;
}

// orrery.bootstrap{n = units, statistic = function(picks) ... end, resamples = 1000, level = 0.9,
//                  seed = 12345} -> {lo =, hi =, draws = {...ascending}, skipped = k}
// picks is a list of n unit numbers (1..n) drawn with replacement; statistic returns a number,
// or nil where the resample says nothing (skipped and counted).
int l_bootstrap(lua_State* L) {
  const std::string fn = "orrery.bootstrap";
  luaL_checktype(L, 1, LUA_TTABLE);
  check_fields(L, 1, fn, {"n", "statistic", "resamples", "level", "seed"});
  const int64_t n = integer_field(L, 1, "n", fn).value_or(0);
  if (n < 1) throw Error(fn + ": n = the number of paired units (seeds, data sets), at least 1, is required");
  if (n > static_cast<int64_t>(bootstrap::kMaxUnits))
    throw Error(fn + ": at most " + std::to_string(bootstrap::kMaxUnits) + " units, got " + std::to_string(n));
  const int64_t resamples = integer_field(L, 1, "resamples", fn).value_or(1000);
  if (resamples < 1) throw Error(fn + ": resamples must be at least 1, got " + std::to_string(resamples));
  const double level = number_field(L, 1, "level", fn).value_or(0.9);
  if (!(level > 0 && level < 1)) throw Error(fn + ": level must be between 0 and 1, got " + std::to_string(level));
  const int64_t seed = integer_field(L, 1, "seed", fn).value_or(12345);
  if (seed < 0) throw Error(fn + ": seed must be >= 0");
  if (!field(L, 1, "statistic") || lua_type(L, -1) != LUA_TFUNCTION)
    throw Error(fn + ": statistic = function(picks) return a number end is required");
  const int statistic = lua_gettop(L);
  const auto draws = bootstrap::resample(
      static_cast<size_t>(n),
      [&](const std::vector<size_t>& picks) -> std::optional<double> {
        lua_pushvalue(L, statistic);
        lua_createtable(L, static_cast<int>(picks.size()), 0);
        for (size_t i = 0; i < picks.size(); ++i)
          lua_pushinteger(L, static_cast<lua_Integer>(picks[i] + 1)), lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
        if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
          const std::string msg = lua_tostring(L, -1) ? lua_tostring(L, -1) : "error in the statistic";
          throw LocatedError(msg);
        }
        std::optional<double> v;
        if (lua_type(L, -1) == LUA_TNUMBER) v = lua_tonumber(L, -1);
        else if (!lua_isnil(L, -1))
          throw Error(fn + ": statistic returned a " + luaL_typename(L, -1) + ", not a number (or nil to skip)");
        lua_pop(L, 1);
        return v;
      },
      static_cast<size_t>(resamples), static_cast<uint64_t>(seed), level);
  Json out = {{"draws", draws.values}, {"skipped", draws.skipped}};
  if (!draws.values.empty()) out["lo"] = draws.lo, out["hi"] = draws.hi;
  push_json(L, out);
  return 1;
}

}  // namespace

void open_eval_library(lua_State* L, LuaHost& h) {
  static const luaL_Reg functions[] = {{"eval", ORRERY_LUA(l_eval)}, {"backtest", ORRERY_LUA(l_backtest)},
                                       {"fit_scaling", ORRERY_LUA(l_fit_scaling)}, {"bootstrap", ORRERY_LUA(l_bootstrap)},
                                       {nullptr, nullptr}};
  set_functions(L, h, functions);
}

}  // namespace orrery
