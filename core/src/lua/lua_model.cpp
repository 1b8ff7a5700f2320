// orrery.model, orrery.load and the methods of a model.
#include "orrery/host/lua_binding.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

#include "orrery/host/batch_queue.h"
#include "orrery/host/export_model.h"
#include "orrery/host/forecast_request.h"
#include "orrery/host/inference_defaults.h"
#include "orrery/host/coord_check.h"
#include "orrery/host/baselines.h"
#include "orrery/host/covariate_regression.h"
#include "orrery/host/backtest.h"
#include "orrery/host/load_model.h"
#include "orrery/host/model.h"
#include "orrery/one_hot.h"
#include "orrery/static_values.h"
#include "orrery/options.h"
#include "orrery/host/registry.h"
#include "orrery/host/series.h"
#include "orrery/data_source.h"

namespace orrery {
namespace {

std::shared_ptr<Model> self(lua_State* L, const char* method) {
  return check_box<Model>(L, 1, kModelMeta, std::string("model:") + method + "'s self (call it with ':')");
}

// orrery.model{arch=, head=, param=, patch_size=, scaler_window=, covariate_lags=, seed=, device=}
int l_model(lua_State* L) {
  const char* fn = "orrery.model";
  luaL_checktype(L, 1, LUA_TTABLE);
  check_fields(L, 1, fn, {"arch", "head", "param", "patch_size", "scaler_window", "covariate_lags", "seed", "device"});
  ModelSpec spec;
  if (field(L, 1, "arch")) spec.arch = to_plugin_spec(L, -1, "orrery.model: arch"), lua_pop(L, 1);
  if (field(L, 1, "head")) spec.head = to_plugin_spec(L, -1, "orrery.model: head"), lua_pop(L, 1);
  if (field(L, 1, "param")) spec.param = to_plugin_spec(L, -1, "orrery.model: param"), lua_pop(L, 1);
  if (auto p = integer_field(L, 1, "patch_size", fn)) spec.patch_size = *p;
  if (auto w = integer_field(L, 1, "scaler_window", fn)) spec.scaler_window = *w;
  if (auto k = integer_field(L, 1, "covariate_lags", fn)) spec.covariate_lags = *k;
  if (auto s = integer_field(L, 1, "seed", fn)) {
    if (*s < 0) throw Error("orrery.model: seed must be >= 0, got " + std::to_string(*s));
    spec.seed = static_cast<uint64_t>(*s);
  }
  if (auto d = string_field(L, 1, "device", fn)) spec.device = *d;
  push_box(L, std::make_shared<Model>(spec, host(L).registry), kModelMeta);
  return 1;
}

// orrery.load(path [, device [, arch_options]]): Orrery weights, a run folder or a released
// checkpoint folder; arch_options are added to the architecture's (load_model).
int l_load(lua_State* L) {
  const std::string path = to_string(L, 1, "orrery.load: path");
  const std::string device = lua_isnoneornil(L, 2) ? "cpu" : to_string(L, 2, "orrery.load: device");
  Json arch_options = Json::object();
  if (!lua_isnoneornil(L, 3)) {
    if (lua_type(L, 3) != LUA_TTABLE) throw Error("orrery.load: arch_options must be a table such as {variate_roles = true}");
    arch_options = lua_to_json(L, 3, "orrery.load: arch_options");
    if (!arch_options.is_object()) throw Error("orrery.load: arch_options must be a table of named options");
  }
  push_box(L, std::shared_ptr<Model>(load_model(path, host(L).registry, device, arch_options)), kModelMeta);
  return 1;
}

// The covariates of field `key` ({{...}, ...}) as rows, each labelled "fn: key[i]" in `labels`
// and by its list in `lists`; none when absent. A list of strings is a categorical covariate:
// one 0/1 row per category (one_hot.h), labelled "fn: key[i] = "cat"", a blank entry missing.
std::vector<std::vector<double>> covariate_lists(lua_State* L, const std::string& key, const std::string& fn,
                                                 std::vector<std::string>& labels, std::vector<std::string>& lists) {
  std::vector<std::vector<double>> out;
  if (!field(L, 2, key.c_str())) return out;
  if (lua_type(L, -1) != LUA_TTABLE) throw Error(fn + ": " + key + " must be a list of lists of numbers or strings");
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, -1, i);
    const std::string label = fn + ": " + key + "[" + std::to_string(i) + "]";
    bool text = false;  // a list of strings: categorical
    if (lua_type(L, -1) == LUA_TTABLE) {
      text = lua_rawgeti(L, -1, 1) == LUA_TSTRING;
      lua_pop(L, 1);
    }
    if (!text) {
      labels.push_back(label), lists.push_back(label);
      out.push_back(to_numbers(L, -1, label));
    } else {
      std::vector<std::string> cells;
      const lua_Integer m = static_cast<lua_Integer>(lua_rawlen(L, -1));
      for (lua_Integer t = 1; t <= m; ++t) {
        if (lua_rawgeti(L, -1, t) != LUA_TSTRING) {
          const std::string type = luaL_typename(L, -1);
          throw Error(label + "[" + std::to_string(t) + "] is a " + type + " in a list of strings (a categorical "
                      "covariate: every entry a category, \"\" where missing)");
        }
        size_t bytes = 0;
        const char* cell = lua_tolstring(L, -1, &bytes);
        cells.emplace_back(cell, bytes);  // all of it: a NUL inside is part of the category
        lua_pop(L, 1);
      }
      OneHot categories = one_hot(cells, label);
      for (size_t k = 0; k < categories.rows.size(); ++k) {
        labels.push_back(label + " = " + quote_input(categories.categories[k])), lists.push_back(label);
        out.push_back(std::move(categories.rows[k]));
      }
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return out;
}

// static_covariates = {name = value, ...}: a number for each of the model's numeric static
// covariates, a category (text) for each categorical one (static_values.h); in the model's order.
std::vector<double> lua_static_values(lua_State* L, int idx, const Model& model, const std::string& what) {
  const std::vector<std::string> names = model.static_covariates();
  const Json given = lua_to_json(L, idx, what);
  if (!given.is_object() || given.empty())
    throw Error(what + " must be a table of name = value pairs" +
                (names.empty() ? std::string() : " for " + join_names(names)));
  std::vector<GivenStatic> values;
  for (const auto& [name, value] : given.items()) {
    if (value.is_number()) values.push_back({name, value.get<double>(), ""});
    else if (value.is_string()) values.push_back({name, std::nullopt, value.get<std::string>()});
    else throw Error(what + ": " + quote_input(name) + " must be a number, or a category as text");
  }
  return static_values(names, values, what);
}

// model:forecast{values= | series=, horizon=, levels=, decode_block_size=, precision=, graph=,
//                sign_average=, contexts=, box_cox=, box_cox_average=, season=, past_covariates=,
//                future_covariates=, regression=, regression_lags=, static_covariates=, combine=,
//                combine_rule=, combine_check=, check_origins=}
int m_forecast(lua_State* L) {
  const std::string fn = "model:forecast";
  auto model = self(L, "forecast");
  luaL_checktype(L, 2, LUA_TTABLE);
  check_fields(L, 2, fn, {"values", "series", "horizon", "levels", "decode_block_size", "precision", "graph",
                          "sign_average", "contexts", "box_cox", "box_cox_average", "season", "past_covariates",
                          "future_covariates", "regression", "regression_lags", "static_covariates", "combine",
                          "combine_rule", "combine_check", "check_origins"});
  const auto horizon = integer_field(L, 2, "horizon", fn);
  if (!horizon) throw Error(fn + ": horizon is required");
  Model::check_horizon(*horizon);  // before covariate rows are sized by it
  ForecastOptions opts;
  opts.mean = true;
  opts.interrupt = &host(L).interrupt;
  if (field(L, 2, "levels")) opts.levels = to_numbers(L, -1, fn + ": levels"), lua_pop(L, 1);
  if (auto b = integer_field(L, 2, "decode_block_size", fn)) opts.decode_block_size = *b;
  if (auto p = string_field(L, 2, "precision", fn)) opts.precision = parse_precision(*p, fn + ": precision");
  if (auto g = boolean_field(L, 2, "graph", fn)) opts.graph = *g;
  if (auto a = boolean_field(L, 2, "sign_average", fn)) opts.sign_average = *a;
  // Unless told otherwise, as every front end forecasts (inference_defaults.h).
  opts.contexts = inference_defaults::contexts;
  if (inference_defaults::box_cox) opts.box_cox = std::numeric_limits<double>::quiet_NaN();
  opts.box_cox_check = inference_defaults::box_cox_check;
  opts.box_cox_average = inference_defaults::box_cox_average;
  opts.check_origins = inference_defaults::check_origins;
  if (field(L, 2, "contexts")) {
    opts.contexts = to_integers(L, -1, fn + ": contexts");
    lua_pop(L, 1);
    if (opts.contexts.empty()) throw Error(fn + ": contexts must name at least one context, e.g. {64, 512}");
  }
  // box_cox = "checked" (the default): each series' exponent by Guerrero's method, in blocks of
  // `season` steps, kept only where the series' own check says so (ForecastOptions::box_cox_check);
  // true: Guerrero's for every series; a number in [0, 1]: that exponent (0: log); false: none.
  if (field(L, 2, "box_cox")) {
    const BoxCoxChoice c = to_box_cox(L, -1, fn + ": box_cox", true);
    opts.box_cox = c.exponent, opts.box_cox_check = c.check;
    lua_pop(L, 1);
  }
  // box_cox_average = true: the transform's forecast averaged with the plain one (ForecastOptions).
  if (auto a = boolean_field(L, 2, "box_cox_average", fn)) {
    if (*a && !opts.box_cox)
      throw Error(fn + ": box_cox_average averages the Box-Cox forecast with the plain one; with box_cox = false, "
                  "leave it out");
    opts.box_cox_average = *a;
  }
  // combine = {"ets", "theta"}: the forecast pooled with those baselines (combination.h), fitted
  // on each series with `season`; combine_check = true keeps it only where the series' own last
  // horizon says so.
  std::vector<std::string> combine;
  if (field(L, 2, "combine")) {
    combine = to_strings(L, -1, fn + ": combine"), lua_pop(L, 1);
    for (const auto& b : combine) make_baseline(b);  // an unknown name is refused, listing them
  }
  const CombineRule rule = parse_combine_rule(string_field(L, 2, "combine_rule", fn).value_or("mean"), fn + ": combine_rule");
  const bool combine_check = boolean_field(L, 2, "combine_check", fn).value_or(false);
  if (combine_check && combine.empty()) throw Error(fn + ": combine_check checks a combination; give combine");
  // check_origins = N: both checks score each series' last N horizons, each held out in turn.
  if (auto n = integer_field(L, 2, "check_origins", fn)) {
    if (!(opts.box_cox && opts.box_cox_check) && !combine_check)
      throw Error(fn + ": check_origins sets the horizons a check scores; with box_cox other than \"checked\", give "
                  "combine_check = true, or leave check_origins out");
    check_origins_count(*n, fn + ": check_origins");
    opts.check_origins = *n;
  }
  const auto season = integer_field(L, 2, "season", fn);
  if (season) {
    if ((!opts.box_cox || !std::isnan(*opts.box_cox)) && combine.empty())
      throw Error(fn + ": season sets the blocks of Box-Cox's exponent by Guerrero's method and the season of "
                  "combine's baselines; with box_cox = false or an exponent, give combine, or leave season out");
    opts.season = *season;
  }

  std::vector<std::vector<double>> series;
  std::vector<std::string> labels;
  const bool single = field(L, 2, "values");
  if (single) {
    series.push_back(to_numbers(L, -1, fn + ": values"));
    labels.push_back(fn + ": values");
  } else if (field(L, 2, "series")) {
    if (lua_type(L, -1) != LUA_TTABLE) throw Error(fn + ": series must be a list of lists of numbers");
    const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      labels.push_back(fn + ": series[" + std::to_string(i) + "]");
      series.push_back(to_numbers(L, -1, labels.back()));
      lua_pop(L, 1);
    }
    if (series.empty()) throw Error(fn + ": series is an empty list");
  } else {
    throw Error(fn + ": give values = {...} (one series) or series = {{...}, ...}");
  }
  lua_pop(L, 1);

  // Covariates of the one series: rows after the target, past-only ones over its history,
  // known-future ones over its history and the horizon; or, with regression = true, the
  // known-future ones through an in-context fit (covariate_regression.h): the model forecasts the
  // residual from the history alone, and regression_lags = K fits over their lags 0..K.
  std::vector<std::string> past_labels, future_labels, past_lists, future_lists;
  const auto past = covariate_lists(L, "past_covariates", fn, past_labels, past_lists);
  const auto future = covariate_lists(L, "future_covariates", fn, future_labels, future_lists);
  ForecastRequest request;
  request.horizon = *horizon;
  request.options = opts;
  request.options.contexts.clear();
  request.contexts = opts.contexts;
  request.combine = combine, request.combine_rule = rule, request.combine_season = season.value_or(1);
  request.combine_check = combine_check;
  request.regression = boolean_field(L, 2, "regression", fn).value_or(false);
  request.regression_lags = integer_field(L, 2, "regression_lags", fn).value_or(0);
  check_regression_lags(request.regression_lags, fn + ": regression_lags");
  if (request.regression_lags > 0 && !request.regression) throw Error(fn + ": regression_lags needs regression = true");
  if (request.regression) {
    if (!single || future.empty())
      throw Error(fn + ": regression = true fits values = {...} on its future_covariates; give both");
    if (!past.empty())
      throw Error(fn + ": regression = true reads known-future covariates only; past_covariates have no values "
                  "over the horizon to regress on");
  }
  if ((!past.empty() || !future.empty()) && !single)
    throw Error(fn + ": past_covariates and future_covariates go with values = {...} (one series)");
  for (size_t i = 0; i < series.size(); ++i) request.series.push_back({{series[i]}, {labels[i]}, {}, {}});
  for (size_t i = 0; i < past.size(); ++i) request.series[0].covariates.push_back({past_lists[i], VariateRole::past, past[i]});
  for (size_t i = 0; i < future.size(); ++i)
    request.series[0].covariates.push_back({future_lists[i], VariateRole::future, future[i]});
  if (field(L, 2, "static_covariates")) {  // the one series' values, on each of its rows
    if (!single) throw Error(fn + ": static_covariates go with values = {...} (one series)");
    request.series[0].statics = lua_static_values(L, -1, *model, fn + ": static_covariates");
    lua_pop(L, 1);
  }
  const ForecastAnswer a = answer(*model, request);
  Json results = Json::array();
  for (const auto& s : a.series)
    results.push_back({{"levels", a.levels}, {"quantiles", s[0].quantiles}, {"median", s[0].median},
                       {"mean", s[0].mean}, {"horizon", *horizon}});
  push_json(L, single ? results[0] : results);
  return 1;
}

int m_parameters(lua_State* L) {
  lua_pushinteger(L, self(L, "parameters")->num_parameters());
  return 1;
}

int m_describe(lua_State* L) {
  auto model = self(L, "describe");
  Json j = model->describe();
  Json params = Json::array();
  for (const auto& p : model->params()) params.push_back(p.info.to_json());
  j["params"] = params;
  push_json(L, j);
  return 1;
}

using Activations = std::vector<ActivationRecord>;
constexpr char kActivationsMeta[] = "orrery.Activations";

// model:activations{data=, batch_size=8, context_length=16 patches, seed=0, keep=false, since=}:
// the RMS of every named activation on one batch, {name=, rms=} in forward order. The same seed
// gives the same batch, so calls during training measure the same inputs. keep = true also
// returns the activations themselves (a second value); handing those back as `since` adds each
// activation's change since then (`change`, the RMS of the difference).
int m_activations(lua_State* L) {
  const std::string fn = "model:activations";
  auto model = self(L, "activations");
  luaL_checktype(L, 2, LUA_TTABLE);
  check_fields(L, 2, fn, {"data", "batch_size", "context_length", "seed", "keep", "since"});
  const int64_t batch = integer_field(L, 2, "batch_size", fn).value_or(8);
  const int64_t length = integer_field(L, 2, "context_length", fn).value_or(16 * model->patch_size());
  const int64_t seed = integer_field(L, 2, "seed", fn).value_or(0);
  if (seed < 0) throw Error(fn + ": seed must be >= 0, got " + std::to_string(seed));
  PluginSpec source{"synthetic"};
  if (field(L, 2, "data")) {
    if (luaL_testudata(L, -1, kDataMeta))
      throw Error(fn + ": give data as a plugin spec such as {\"synthetic\"}, so every call draws "
                  "the same batch from its seed");
    source = to_plugin_spec(L, -1, fn + ": data");
    lua_pop(L, 1);
  }
  bool keep = false;
  if (field(L, 2, "keep")) keep = to_boolean(L, -1, fn + ": keep"), lua_pop(L, 1);
  std::shared_ptr<Activations> since;
  if (field(L, 2, "since"))
    since = check_box<Activations>(L, -1, kActivationsMeta, fn + ": since (the second value of a call with keep = true)"),
    lua_pop(L, 1);
  auto records = std::make_shared<Activations>(
      measure_activations(*model, host(L).registry, source, batch, length, seed, keep, since.get()));
  Json out = Json::array();
  for (const auto& a : *records) {
    Json e{{"name", a.name}, {"rms", a.rms}};
    if (since) e["change"] = a.change;
    out.push_back(std::move(e));
  }
  push_json(L, out);
  if (!keep) return 1;
  push_box(L, std::move(records), kActivationsMeta);
  return 2;
}

// model:score(data, batch, length [, seed]): the model's loss, without gradients, on the batch
// data:sample(batch, length, seed) draws (the same rows, so anything else scored on them pairs
// with it): {loss = the mean over the scored targets (the training loss's units), and for data
// whose steps carry units (text: bytes) bits = the summed loss in bits over the scored targets
// that stand for some units, units = their units}.
int m_score(lua_State* L) {
  const std::string fn = "model:score";
  auto model = self(L, "score");
  auto data = check_box<DataSource>(L, 2, kDataMeta, fn + ": data (a data object, orrery.data{...})");
  const int64_t batch = to_integer(L, 3, fn + ": batch");
  const int64_t length = to_integer(L, 4, fn + ": length");
  const int64_t seed = lua_isnoneornil(L, 5) ? 0 : to_integer(L, 5, fn + ": seed");
  if (batch < 1 || length < 2 * model->patch_size() || batch > (int64_t{1} << 24) / length)
    throw Error(fn + "(data, batch, length): at least one row of two patches, at most 2^24 values in all");
  if (seed < 0) throw Error(fn + ": seed must be a whole number >= 0, got " + std::to_string(seed));
  const Batch b = to_device(data->sample({batch, length, static_cast<uint64_t>(seed)}), model->device(), false);
  at::NoGradGuard no_grad;
  lua_createtable(L, 0, 3);
  if (!b.units.defined()) {
    lua_pushnumber(L, model->loss(b).item<double>());
    lua_setfield(L, -2, "loss");
  } else {  // one forward pass for both
    const Model::UnitLoss u = model->loss_over_units(b);
    lua_pushnumber(L, u.mean);
    lua_setfield(L, -2, "loss");
    lua_pushnumber(L, u.loss / std::log(2.0));
    lua_setfield(L, -2, "bits");
    lua_pushnumber(L, u.units);
    lua_setfield(L, -2, "units");
  }
  return 1;
}

int m_save(lua_State* L) {
  self(L, "save")->save_weights(to_string(L, 2, "model:save: path"));
  return 0;
}

// model:export(dir): the model in its architecture's released checkpoint layout (export_model.h).
int m_export(lua_State* L) {
  export_model(*self(L, "export"), host(L).registry, to_string(L, 2, "model:export: dir"));
  return 0;
}

// model:load(path), or model:load{path, ...}: the mean of the files' weights.
int m_load(lua_State* L) {
  auto model = self(L, "load");
  if (lua_istable(L, 2)) {
    std::vector<std::string> paths;
    const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, 2));
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, 2, i);
      paths.push_back(to_string(L, -1, "model:load: paths[" + std::to_string(i) + "]"));
      lua_pop(L, 1);
    }
    if (paths.empty()) throw Error("model:load: the list of paths is empty");
    model->load_average(paths);
  } else {
    model->load_weights(to_string(L, 2, "model:load: path"));
  }
  lua_settop(L, 1);
  return 1;  // the model, for chaining
}

// model:generate{values=, steps=, temperature=, top_k=, seed=, context=, kv_cache=}: `values` one sequence
// (a list of numbers, e.g. data:encode's token ids) or several of one length (a list of lists);
// returns the drawn continuation(s) in the same form.
int m_generate(lua_State* L) {
  const std::string fn = "model:generate";
  auto model = self(L, "generate");
  luaL_checktype(L, 2, LUA_TTABLE);
  check_fields(L, 2, fn, {"values", "steps", "temperature", "top_k", "seed", "context", "kv_cache"});
  if (!field(L, 2, "values")) throw Error(fn + ": values is required (a list of numbers, or a list of lists)");
  if (lua_type(L, -1) != LUA_TTABLE) throw Error(fn + ": values must be a list of numbers, or a list of lists");
  lua_rawgeti(L, -1, 1);
  const bool several = lua_type(L, -1) == LUA_TTABLE;
  lua_pop(L, 1);
  std::vector<std::vector<double>> rows;
  if (several) {
    const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      rows.push_back(to_numbers(L, -1, fn + ": values[" + std::to_string(i) + "]"));
      lua_pop(L, 1);
    }
  } else {
    rows.push_back(to_numbers(L, -1, fn + ": values"));
  }
  lua_pop(L, 1);
  for (const auto& r : rows)
    if (r.empty() || r.size() != rows.front().size())
      throw Error(fn + ": values must be non-empty sequences of one length");
  const auto steps = integer_field(L, 2, "steps", fn);
  if (!steps) throw Error(fn + ": steps is required (how many values to draw)");
  GenerateOptions o;
  if (auto t = number_field(L, 2, "temperature", fn)) o.temperature = *t;
  if (auto k = integer_field(L, 2, "top_k", fn)) o.top_k = *k;
  if (auto sd = integer_field(L, 2, "seed", fn)) {
    if (*sd < 0) throw Error(fn + ": seed must be >= 0, got " + std::to_string(*sd));
    o.seed = static_cast<uint64_t>(*sd);
  }
  if (auto c = integer_field(L, 2, "context", fn)) o.context = *c;
  if (auto c = boolean_field(L, 2, "kv_cache", fn)) o.kv_cache = *c;
  o.interrupt = &host(L).interrupt;
  const int64_t B = static_cast<int64_t>(rows.size()), T = static_cast<int64_t>(rows.front().size());
  at::Tensor values = at::empty({B, 1, T}, at::kDouble);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) values[b][0][t] = rows[static_cast<size_t>(b)][static_cast<size_t>(t)];
  const at::Tensor drawn = model->generate(values, *steps, o).to(at::kDouble).contiguous();
  const auto a = drawn.accessor<double, 3>();
  const auto push_row = [&](int64_t b) {
    lua_createtable(L, static_cast<int>(a.size(2)), 0);
    for (int64_t t = 0; t < a.size(2); ++t) lua_pushnumber(L, a[b][0][t]), lua_rawseti(L, -2, t + 1);
  };
  if (!several) {
    push_row(0);
    return 1;
  }
  lua_createtable(L, static_cast<int>(B), 0);
  for (int64_t b = 0; b < B; ++b) push_row(b), lua_rawseti(L, -2, b + 1);
  return 1;
}

int m_tostring(lua_State* L) {
  auto model = self(L, "tostring");
  const auto& s = model->spec();
  lua_pushfstring(L, "orrery.Model(arch=%s, head=%s, param=%s, %I parameters)", s.arch.name.c_str(),
                  s.head.name.c_str(), s.param.name.c_str(), static_cast<lua_Integer>(model->num_parameters()));
  return 1;
}

}  // namespace

void open_model_library(lua_State* L, LuaHost& h) {
  static const luaL_Reg methods[] = {{"forecast", ORRERY_LUA(m_forecast)},
                                     {"generate", ORRERY_LUA(m_generate)},
                                     {"score", ORRERY_LUA(m_score)},
                                     {"parameters", ORRERY_LUA(m_parameters)},
                                     {"describe", ORRERY_LUA(m_describe)},
                                     {"activations", ORRERY_LUA(m_activations)},
                                     {"save", ORRERY_LUA(m_save)},
                                     {"export", ORRERY_LUA(m_export)},
                                     {"load", ORRERY_LUA(m_load)},
                                     {nullptr, nullptr}};
  new_metatable(L, h, kModelMeta, gc_box<Model, kModelMeta>, methods, ORRERY_LUA(m_tostring));
  static const luaL_Reg no_methods[] = {{nullptr, nullptr}};
  new_metatable(L, h, kActivationsMeta, gc_box<Activations, kActivationsMeta>, no_methods, nullptr);
  static const luaL_Reg functions[] = {{"model", ORRERY_LUA(l_model)}, {"load", ORRERY_LUA(l_load)}, {nullptr, nullptr}};
  set_functions(L, h, functions);
}

}  // namespace orrery
