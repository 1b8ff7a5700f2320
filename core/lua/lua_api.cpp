// The `orrery` table that experiment scripts and the REPL use. Every function is documented in
// docs/lua.md (a test checks that the two agree). C++ errors become Lua errors at the calling
// script line; nothing here lets a C++ exception cross into Lua.
#include <lua.hpp>

#include <ATen/ATen.h>

#include <dlfcn.h>
#include <spawn.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <thread>

#include "orrery/checkpoint.h"
#include "orrery/csv.h"
#include "orrery/error.h"
#include "orrery/evaluate.h"
#include "orrery/lua_session.h"
#include "orrery/metrics_bus.h"
#include "orrery/model.h"
#include "orrery/registry.h"
#include "orrery/routed_optimizer.h"
#include "orrery/run_store.h"
#include "orrery/trainer.h"
#include "views/svg_report.h"
#include "runs/run_watcher.h"

namespace orrery {
namespace {

Registry* g_registry = nullptr;

// An error whose message already names the script location (e.g. from a Lua callback).
struct LocatedError : Error {
  using Error::Error;
};

int protect(lua_State* L, int (*fn)(lua_State*)) {
  std::string msg;
  bool located = false;
  try {
    return fn(L);
  } catch (const LocatedError& e) {
    msg = e.what(), located = true;
  } catch (const c10::Error& e) {
    msg = e.what_without_backtrace();  // the user's script line, never a C++ stack
  } catch (const std::exception& e) {
    msg = e.what();
  }
  if (located) {
    lua_pushstring(L, msg.c_str());
    return lua_error(L);
  }
  return luaL_error(L, "%s", msg.c_str());  // prefixed with the calling script line
}
#define ORRERY_LUA(fn) [](lua_State* L) { return protect(L, fn); }

// ---- userdata ---------------------------------------------------------------------------
constexpr char kModelMeta[] = "orrery.Model";
constexpr char kDataMeta[] = "orrery.Data";

template <class T> struct Box { std::shared_ptr<T> ptr; };

// `user_values` Lua values travel with the box (a data object keeps its plugin choice in one).
template <class T> void push_box(lua_State* L, std::shared_ptr<T> p, const char* meta,
                                 int user_values = 0) {
  void* mem = lua_newuserdatauv(L, sizeof(Box<T>), user_values);
  new (mem) Box<T>{std::move(p)};
  luaL_setmetatable(L, meta);
}

template <class T> std::shared_ptr<T> check_box(lua_State* L, int idx, const char* meta) {
  auto p = static_cast<Box<T>*>(luaL_checkudata(L, idx, meta))->ptr;
  if (!p) throw Error(std::string(meta) + " object has been released");
  return p;
}

// Idempotent: releasing twice (or a script calling __gc) is harmless.
template <class T, const char* Meta> int gc_box(lua_State* L) {
  if (auto* b = static_cast<Box<T>*>(luaL_testudata(L, 1, Meta))) b->ptr.reset();
  return 0;
}

// ---- reading argument tables --------------------------------------------------------------

// A plugin choice from Lua: "name" or {"name", option = value, ...}.
PluginSpec plugin_spec(lua_State* L, int idx, const std::string& what) {
  idx = lua_absindex(L, idx);
  PluginSpec spec;
  if (lua_type(L, idx) == LUA_TSTRING) {
    spec.name = lua_tostring(L, idx);
    return spec;
  }
  if (!lua_istable(L, idx))
    throw Error(what + " must be a plugin name or a table like {\"name\", option = value}");
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) == LUA_TNUMBER && lua_tointeger(L, -2) == 1 && lua_type(L, -1) == LUA_TSTRING) {
      spec.name = lua_tostring(L, -1);
    } else if (lua_type(L, -2) == LUA_TSTRING) {
      std::string key = lua_tostring(L, -2);
      spec.options[key] = lua_to_json(L, -1, what + "." + key);
    } else {
      lua_pop(L, 2);
      throw Error(what + ": only the plugin name may be a list entry");
    }
    lua_pop(L, 1);
  }
  if (spec.name.empty()) throw Error(what + " needs the plugin name as its first entry");
  return spec;
}

// The named fields of an argument table, with unknown names reported against `known`.
void check_fields(lua_State* L, int idx, const std::string& fn, const std::vector<std::string>& known) {
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) continue;
    std::string key = lua_tostring(L, -1);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      lua_pop(L, 1);
      std::string msg = fn + ": unknown field '" + key + "'";
      std::string near = closest_name(key, known);
      if (!near.empty()) msg += " (did you mean '" + near + "'?)";
      throw Error(msg);
    }
  }
}

// Pushes t[key]; returns false (and pushes nothing) when it is nil.
bool field(lua_State* L, int idx, const char* key) {
  if (lua_getfield(L, idx, key) == LUA_TNIL) {
    lua_pop(L, 1);
    return false;
  }
  return true;
}

std::vector<double> number_array(lua_State* L, int idx, const std::string& what) {
  idx = lua_absindex(L, idx);
  if (!lua_istable(L, idx)) throw Error(what + " must be a list of numbers");
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, idx));
  std::vector<double> out(n);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, idx, i);
    if (!lua_isnumber(L, -1))
      throw Error(what + "[" + std::to_string(i) + "] is a " + luaL_typename(L, -1) + ", not a number");
    out[i - 1] = lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  return out;
}

// The optimizer of orrery.train as JSON groups: {"adamw", lr = 1e-3} is one group taking every
// parameter; a list {{"normuon", lr = 0.02, params = {role = "hidden"}}, {"adamw"}} routes.
Json optimizer_json(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  auto group = [&](int at, const std::string& what) {
    PluginSpec spec = plugin_spec(L, at, what);
    Json g = spec.to_json();
    if (spec.options.contains("params")) {
      g["params"] = spec.options["params"];
      g["options"].erase("params");
    }
    return g;
  };
  lua_rawgeti(L, idx, 1);
  const bool list = lua_istable(L, -1);
  lua_pop(L, 1);
  if (!list) return group(idx, "orrery.train: optimizer");
  Json groups = Json::array();
  const int n = static_cast<int>(lua_rawlen(L, idx));
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, idx, i);
    groups.push_back(group(-1, "orrery.train: optimizer[" + std::to_string(i) + "]"));
    lua_pop(L, 1);
  }
  return groups;
}

std::shared_ptr<DataSource> make_data(lua_State* L, int idx, const std::string& what,
                                      const DataContext& ctx) {
  if (luaL_testudata(L, idx, kDataMeta)) return check_box<DataSource>(L, idx, kDataMeta);
  PluginSpec spec = plugin_spec(L, idx, what);
  return g_registry->create<PluginKind::data>(spec.name, spec.options, ctx);
}

// The plugin choice behind a data argument: the spec itself, or the one a data object was made
// from (kept as JSON in its user value), so a source of the same kind can be made with another
// seed.
PluginSpec data_spec(lua_State* L, int idx, const std::string& what) {
  if (!luaL_testudata(L, idx, kDataMeta)) return plugin_spec(L, idx, what);
  lua_getiuservalue(L, idx, 1);
  const std::string text = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
  lua_pop(L, 1);
  if (text.empty()) throw Error(what + ": this data object does not know its plugin choice");
  const Json j = Json::parse(text);
  return PluginSpec{j["name"].get<std::string>(), j["options"]};
}

// ---- orrery.* -----------------------------------------------------------------------------

int l_plugins(lua_State* L) {
  const char* kind = luaL_optstring(L, 1, nullptr);
  Json arr = Json::array();
  for (const auto& p : g_registry->plugins())
    if (!kind || std::string(kind) == kind_name(p.kind)) arr.push_back(p.to_json());
  push_json(L, arr);
  return 1;
}

int l_model(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  check_fields(L, 1, "orrery.model", {"arch", "head", "param", "patch_size", "seed", "device"});
  ModelSpec spec;
  if (field(L, 1, "arch")) spec.arch = plugin_spec(L, -1, "orrery.model: arch"), lua_pop(L, 1);
  if (field(L, 1, "head")) spec.head = plugin_spec(L, -1, "orrery.model: head"), lua_pop(L, 1);
  if (field(L, 1, "param")) spec.param = plugin_spec(L, -1, "orrery.model: param"), lua_pop(L, 1);
  if (field(L, 1, "patch_size")) spec.patch_size = luaL_checkinteger(L, -1), lua_pop(L, 1);
  if (field(L, 1, "seed")) spec.seed = static_cast<uint64_t>(luaL_checkinteger(L, -1)), lua_pop(L, 1);
  if (field(L, 1, "device")) spec.device = luaL_checkstring(L, -1), lua_pop(L, 1);
  push_box(L, std::make_shared<Model>(spec, *g_registry), kModelMeta);
  return 1;
}

int l_data(lua_State* L) {
  if (lua_type(L, 1) == LUA_TSTRING && lua_istable(L, 2)) {  // orrery.data("name", {opts})
    lua_pushvalue(L, 1);
    lua_rawseti(L, 2, 1);
    lua_settop(L, 2);
    lua_remove(L, 1);
  }
  const PluginSpec spec = data_spec(L, 1, "orrery.data");
  push_box(L, make_data(L, 1, "orrery.data", DataContext{}), kDataMeta, 1);
  lua_pushstring(L, spec.to_json().dump().c_str());
  lua_setiuservalue(L, -2, 1);
  return 1;
}

int l_train(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const std::vector<std::string> own = {"model", "data", "optimizer", "name", "runs_dir",
                                        "every", "on_step"};
  // Everything else is a training option, checked by TrainConfig.
  Json options = Json::object();
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    if (lua_type(L, -2) == LUA_TSTRING) {
      std::string key = lua_tostring(L, -2);
      if (std::find(own.begin(), own.end(), key) == own.end())
        options[key] = lua_to_json(L, -1, "orrery.train: " + key);
    }
    lua_pop(L, 1);
  }
  TrainConfig cfg = TrainConfig::from_json(options);

  if (!field(L, 1, "model")) throw Error("orrery.train: model = orrery.model{...} is required");
  auto model = check_box<Model>(L, -1, kModelMeta);
  lua_pop(L, 1);
  std::shared_ptr<DataSource> data;
  PluginSpec source{"synthetic"};
  if (field(L, 1, "data")) {
    data = make_data(L, -1, "orrery.train: data", DataContext{cfg.seed});
    source = data_spec(L, -1, "orrery.train: data");
    lua_pop(L, 1);
  } else {
    data = g_registry->create<PluginKind::data>(source.name, source.options, DataContext{cfg.seed});
  }
  // Validation and forecast snapshots: the same kind of data under another seed, so held-out
  // series the training never sees (for a data set, other windows of it).
  std::shared_ptr<DataSource> validation;
  if (cfg.val_batches > 0 || cfg.forecast_series > 0)
    validation = g_registry->create<PluginKind::data>(source.name, source.options,
                                                      DataContext{cfg.seed + 1000003});
  Json opt_json = PluginSpec{"adamw"}.to_json();
  if (field(L, 1, "optimizer")) opt_json = optimizer_json(L, -1), lua_pop(L, 1);
  std::string name = "run", runs_dir = "runs";
  if (field(L, 1, "name")) name = luaL_checkstring(L, -1), lua_pop(L, 1);
  if (field(L, 1, "runs_dir")) runs_dir = luaL_checkstring(L, -1), lua_pop(L, 1);
  int64_t every = cfg.log_every;
  if (field(L, 1, "every")) every = std::max<lua_Integer>(1, luaL_checkinteger(L, -1)), lua_pop(L, 1);
  int callback = LUA_NOREF;
  if (field(L, 1, "on_step")) {
    luaL_checktype(L, -1, LUA_TFUNCTION);
    callback = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  struct Unref {  // release the callback however this function exits
    lua_State* L; int ref;
    ~Unref() { luaL_unref(L, LUA_REGISTRYINDEX, ref); }
  } unref{L, callback};

  RoutedOptimizer optimizer(*g_registry, optimizer_groups_from_json(opt_json), model->params(),
                            model->parametrisation());
  Json routing = optimizer.describe();
  for (auto& g : routing) g.erase("names");  // the names are in model:describe()
  Json config = {{"model", model->describe()}, {"optimizer", opt_json}, {"routing", routing},
                 {"train", cfg.to_json()}};
  RunStore store(runs_dir, name, config);
  if (!cfg.quiet)
    std::printf("run %s: %lld parameters, writing %s\n", name.c_str(),
                static_cast<long long>(model->num_parameters()), store.dir().c_str());

  MetricsBus bus;
  bus.subscribe([&](const Json& ev) { store.append_metrics(ev); });
  if (callback != LUA_NOREF)
    bus.subscribe([&, last = int64_t{0}](const Json& ev) mutable {
      if (ev["event"] != "train" || interrupt_requested) return;
      const int64_t step = ev["step"];
      if (step - last < every && step != cfg.steps) return;
      last = step;
      lua_rawgeti(L, LUA_REGISTRYINDEX, callback);
      push_json(L, ev);
      if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        if (interrupt_requested) {  // Ctrl-C hit inside the callback: the trainer stops next step
          lua_pop(L, 1);
          return;
        }
        std::string msg = lua_tostring(L, -1) ? lua_tostring(L, -1) : "error in on_step";
        lua_pop(L, 1);
        throw LocatedError(msg);
      }
    });
  TrainResult r;
  try {
    r = train(*model, *data, optimizer, cfg, bus, validation.get());
  } catch (const std::exception& e) {  // leave a summary that says why the run stopped
    const c10::Error* ce = dynamic_cast<const c10::Error*>(&e);
    store.write_summary({{"error", ce ? ce->what_without_backtrace() : e.what()},
                         {"parameters", model->num_parameters()}, {"run_dir", store.dir()}});
    throw;
  }
  Json summary = r.to_json();
  summary["parameters"] = model->num_parameters();
  summary["run_dir"] = store.dir();
  store.write_summary(summary);
  if (r.interrupted) throw Error("interrupted (the run and its summary are saved in " + store.dir() + ")");
  push_json(L, summary);
  return 1;
}

int l_read_csv(lua_State* L) {
  CsvTable t = read_csv(luaL_checkstring(L, 1));
  lua_createtable(L, 0, 3);
  push_json(L, t.names);
  lua_setfield(L, -2, "names");
  lua_createtable(L, 0, static_cast<int>(t.names.size()));
  for (size_t i = 0; i < t.names.size(); ++i) {
    lua_createtable(L, static_cast<int>(t.columns[i].size()), 0);
    for (size_t k = 0; k < t.columns[i].size(); ++k)
      lua_pushnumber(L, t.columns[i][k]), lua_rawseti(L, -2, static_cast<lua_Integer>(k + 1));
    lua_setfield(L, -2, t.names[i].c_str());
  }
  lua_setfield(L, -2, "columns");
  lua_pushinteger(L, t.columns.empty() ? 0 : static_cast<lua_Integer>(t.columns[0].size()));
  lua_setfield(L, -2, "rows");
  return 1;
}

int l_evaluate(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  check_fields(L, 1, "orrery.evaluate", {"model", "series", "horizon", "windows", "context"});
  if (!field(L, 1, "model")) throw Error("orrery.evaluate: model is required");
  auto model = check_box<Model>(L, -1, kModelMeta);
  lua_pop(L, 1);
  EvalConfig cfg;
  if (field(L, 1, "horizon")) cfg.horizon = luaL_checkinteger(L, -1), lua_pop(L, 1);
  if (field(L, 1, "windows")) cfg.windows = luaL_checkinteger(L, -1), lua_pop(L, 1);
  if (field(L, 1, "context")) cfg.context = luaL_checkinteger(L, -1), lua_pop(L, 1);
  if (!field(L, 1, "series") || !lua_istable(L, -1))
    throw Error("orrery.evaluate: series = {{name=..., values={...}, season=12}, ...} is required");
  std::vector<SeriesInput> series;
  const int n = static_cast<int>(lua_rawlen(L, -1));
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, -1, i);
    const int s = lua_gettop(L);
    const std::string what = "orrery.evaluate: series[" + std::to_string(i) + "]";
    if (!lua_istable(L, s)) throw Error(what + " must be a table {name=, values=, season=}");
    SeriesInput in;
    lua_getfield(L, s, "name");
    in.name = lua_isstring(L, -1) ? lua_tostring(L, -1) : "series" + std::to_string(i);
    lua_pop(L, 1);
    if (!field(L, s, "values")) throw Error(what + " needs values = {...}");
    in.values = number_array(L, -1, what + ".values");
    lua_pop(L, 1);
    if (field(L, s, "season")) in.season = luaL_checkinteger(L, -1), lua_pop(L, 1);
    series.push_back(std::move(in));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  push_json(L, evaluate(*model, series, cfg));
  return 1;
}

// orrery.experiment_dir(name [, runs_dir]): a fresh folder for an experiment's runs and results.
int l_experiment_dir(lua_State* L) {
  const std::string dir = claim_run_dir(luaL_optstring(L, 2, "runs"), luaL_checkstring(L, 1));
  lua_pushstring(L, dir.c_str());
  return 1;
}

// orrery.plot(dir [, out]): the dashboard's views as SVG files (ui/views/svg_report.h).
int l_plot(lua_State* L) {
  const std::string dir = luaL_checkstring(L, 1);
  const std::string out = luaL_optstring(L, 2, (std::filesystem::path(dir) / "plots").c_str());
  if (!std::filesystem::is_directory(dir)) throw Error("orrery.plot: no folder '" + dir + "'");
  ui::RunWatcher watcher(dir);
  watcher.poll();
  push_json(L, ui::write_svg_report(*watcher.snapshot(), out));
  return 1;
}

// The `orrery` program: this process when it is one, else the one beside this library.
std::string orrery_program() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && self.filename() == "orrery") return self.string();
  Dl_info info;
  std::filesystem::path beside;
  if (dladdr(reinterpret_cast<void*>(&orrery_program), &info) && info.dli_fname) {
    beside = std::filesystem::path(info.dli_fname).parent_path().parent_path() / "bin" / "orrery";
    if (std::filesystem::exists(beside)) return beside.string();
  }
  throw Error("orrery.ui: cannot find the orrery program (tried /proc/self/exe and " + beside.string() + ")");
}

// orrery.ui([runs_dir]) or orrery.ui{runs_dir=, view=, filter=, screenshot=, after=}: opens the
// dashboard as its own process, so the session stays free. With a screenshot it waits for it.
int l_ui(lua_State* L) {
  std::vector<std::string> argv = {orrery_program(), "ui"};
  std::string runs_dir = "runs";
  bool wait = false;
  if (lua_istable(L, 1)) {
    check_fields(L, 1, "orrery.ui", {"runs_dir", "view", "filter", "screenshot", "after", "layout"});
    if (field(L, 1, "runs_dir")) runs_dir = luaL_checkstring(L, -1), lua_pop(L, 1);
    for (const char* k : {"view", "filter", "screenshot", "after", "layout"})
      if (field(L, 1, k)) {
        argv.push_back(std::string("--") + k);
        argv.push_back(luaL_tolstring(L, -1, nullptr));
        lua_pop(L, 2);
        wait |= std::string(k) == "screenshot";
      }
  } else {
    runs_dir = luaL_optstring(L, 1, "runs");
  }
  if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY"))
    throw Error("orrery.ui: no display (DISPLAY is not set); orrery.plot(dir) writes the same views as SVG files");
  if (!std::filesystem::is_directory(runs_dir)) throw Error("orrery.ui: no folder '" + runs_dir + "'");
  argv.push_back(runs_dir);
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  // Its own process group, so Ctrl-C in the REPL interrupts the REPL's work, not the window.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, cargv[0], nullptr, &attr, cargv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (err) throw Error("orrery.ui: cannot start " + argv[0] + ": " + std::strerror(err));
  if (!wait) {
    std::thread([pid] { waitpid(pid, nullptr, 0); }).detach();  // reaped when it closes
    lua_pushinteger(L, pid);
    return 1;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("orrery.ui: the dashboard failed (" + std::string(WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status)) : "killed") +
                "); its message is above");
  lua_pushinteger(L, 0);
  return 1;
}

int l_write_json(lua_State* L) {
  const char* path = luaL_checkstring(L, 1);
  write_json_file(path, lua_to_json(L, 2, "orrery.write_json value"));
  return 0;
}

// ---- model methods ------------------------------------------------------------------------

int m_forecast(lua_State* L) {
  auto model = check_box<Model>(L, 1, kModelMeta);
  luaL_checktype(L, 2, LUA_TTABLE);
  check_fields(L, 2, "model:forecast", {"values", "series", "horizon", "levels", "decode_block_size"});
  if (!field(L, 2, "horizon")) throw Error("model:forecast: horizon is required");
  const int64_t horizon = luaL_checkinteger(L, -1);
  lua_pop(L, 1);
  ForecastOptions opts;
  opts.mean = true;
  if (field(L, 2, "levels")) opts.levels = number_array(L, -1, "model:forecast: levels"), lua_pop(L, 1);
  if (field(L, 2, "decode_block_size")) {
    if (!lua_isinteger(L, -1)) throw Error("model:forecast: decode_block_size must be a whole number");
    opts.decode_block_size = lua_tointeger(L, -1);
    lua_pop(L, 1);
  }

  std::vector<std::vector<double>> series;
  const bool single = field(L, 2, "values");
  if (single) {
    series.push_back(number_array(L, -1, "model:forecast: values"));
  } else if (field(L, 2, "series")) {
    if (!lua_istable(L, -1)) throw Error("model:forecast: series must be a list of lists of numbers");
    const int n = static_cast<int>(lua_rawlen(L, -1));
    for (int i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      series.push_back(number_array(L, -1, "model:forecast: series[" + std::to_string(i) + "]"));
      lua_pop(L, 1);
    }
  } else {
    throw Error("model:forecast: give values = {...} (one series) or series = {{...}, ...}");
  }
  lua_pop(L, 1);
  if (series.empty()) throw Error("model:forecast: no series given");

  size_t width = 1;
  for (const auto& s : series) width = std::max(width, s.size());
  const int64_t B = static_cast<int64_t>(series.size()), W = static_cast<int64_t>(width);
  at::Tensor values = at::zeros({B, 1, W}, at::kFloat);
  at::Tensor observed = at::zeros({B, 1, W}, at::kBool);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t off = W - static_cast<int64_t>(series[b].size());  // right-aligned
    for (size_t t = 0; t < series[b].size(); ++t) {
      const double v = series[b][t];
      values[b][0][off + t] = std::isfinite(v) ? v : 0.0;
      observed[b][0][off + t] = std::isfinite(v);
    }
  }
  Forecast f = model->forecast(values, observed, at::zeros({B, 1}, at::kLong), horizon, opts);
  Json results = Json::array();
  for (int64_t b = 0; b < B; ++b) {
    auto row = [&](const at::Tensor& t) { return quantile_rows(t.select(0, b).select(0, 0).unsqueeze(0))[0]; };
    Json r = {{"levels", f.levels}, {"quantiles", quantile_rows(f.quantiles.select(1, b).select(1, 0))},
              {"median", row(f.median)}, {"mean", row(f.mean)}, {"horizon", horizon}};
    results.push_back(r);
  }
  push_json(L, single ? results[0] : results);
  return 1;
}

int m_parameters(lua_State* L) {
  lua_pushinteger(L, check_box<Model>(L, 1, kModelMeta)->num_parameters());
  return 1;
}

int m_describe(lua_State* L) {
  auto model = check_box<Model>(L, 1, kModelMeta);
  Json j = model->describe();
  Json params = Json::array();
  for (const auto& p : model->params()) params.push_back(p.info.to_json());
  j["params"] = params;
  push_json(L, j);
  return 1;
}

// model:activations{data=..., batch_size=8, context_length=256, seed=0}: the RMS of every named
// activation on one batch, as a list of {name=, rms=} in forward order. The same seed gives the
// same batch, so calls during training measure the same inputs.
int m_activations(lua_State* L) {
  auto model = check_box<Model>(L, 1, kModelMeta);
  luaL_checktype(L, 2, LUA_TTABLE);
  check_fields(L, 2, "model:activations", {"data", "batch_size", "context_length", "seed"});
  int64_t batch = 8, length = 16 * model->patch_size();
  uint64_t seed = 0;
  if (field(L, 2, "batch_size")) batch = luaL_checkinteger(L, -1), lua_pop(L, 1);
  if (field(L, 2, "context_length")) length = luaL_checkinteger(L, -1), lua_pop(L, 1);
  if (field(L, 2, "seed")) seed = static_cast<uint64_t>(luaL_checkinteger(L, -1)), lua_pop(L, 1);
  if (batch < 1 || length < 2 * model->patch_size())
    throw Error("model:activations needs batch_size >= 1 and context_length of at least two patches");
  std::shared_ptr<DataSource> data;
  if (field(L, 2, "data")) {
    if (luaL_testudata(L, -1, kDataMeta))
      throw Error("model:activations: give data as a plugin spec such as {\"synthetic\"}, so "
                  "every call draws the same batch from its seed");
    data = make_data(L, -1, "model:activations: data", DataContext{seed});
    lua_pop(L, 1);
  } else {
    data = g_registry->create<PluginKind::data>("synthetic", Json::object(), DataContext{seed});
  }
  Batch b = data->sample(batch, length);
  b.values = b.values.to(model->device());
  b.observed = b.observed.to(model->device());
  b.series_ids = b.series_ids.to(model->device());
  Json out = Json::array();
  for (const auto& [name, rms] : model->activation_rms(b)) out.push_back({{"name", name}, {"rms", rms}});
  push_json(L, out);
  return 1;
}

int m_save(lua_State* L) {
  check_box<Model>(L, 1, kModelMeta)->save_weights(luaL_checkstring(L, 2));
  return 0;
}

// orrery.load(path [, device]): a model from Orrery weights or a Hugging Face Toto 2.0 folder.
int l_load(lua_State* L) {
  const char* path = luaL_checkstring(L, 1);
  const char* device = luaL_optstring(L, 2, "cpu");
  push_box(L, std::shared_ptr<Model>(load_model(path, *g_registry, device)), kModelMeta);
  return 1;
}

int m_load(lua_State* L) {
  check_box<Model>(L, 1, kModelMeta)->load_weights(luaL_checkstring(L, 2));
  lua_settop(L, 1);
  return 1;  // the model, for chaining
}

int m_tostring(lua_State* L) {
  auto model = check_box<Model>(L, 1, kModelMeta);
  const auto& s = model->spec();
  lua_pushfstring(L, "orrery.Model(arch=%s, head=%s, param=%s, %d parameters)", s.arch.name.c_str(),
                  s.head.name.c_str(), s.param.name.c_str(), static_cast<int>(model->num_parameters()));
  return 1;
}

int d_sample(lua_State* L) {
  auto data = check_box<DataSource>(L, 1, kDataMeta);
  const int64_t batch = luaL_optinteger(L, 2, 1), length = luaL_optinteger(L, 3, 256);
  if (batch < 1 || length < 1) throw Error("data:sample(batch, length) needs positive sizes");
  Batch b = data->sample(batch, length);
  // [batch][variate][time], NaN where unobserved.
  at::Tensor v = at::where(b.observed, b.values, at::full({}, std::nan(""), b.values.options()));
  v = v.to(at::kDouble).contiguous();
  auto a = v.accessor<double, 3>();
  lua_createtable(L, static_cast<int>(a.size(0)), 0);
  for (int64_t i = 0; i < a.size(0); ++i) {
    lua_createtable(L, static_cast<int>(a.size(1)), 0);
    for (int64_t j = 0; j < a.size(1); ++j) {
      lua_createtable(L, static_cast<int>(a.size(2)), 0);
      for (int64_t t = 0; t < a.size(2); ++t) lua_pushnumber(L, a[i][j][t]), lua_rawseti(L, -2, t + 1);
      lua_rawseti(L, -2, j + 1);
    }
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

void new_metatable(lua_State* L, const char* name, lua_CFunction gc, const luaL_Reg* methods,
                   lua_CFunction tostring) {
  luaL_newmetatable(L, name);
  lua_pushcfunction(L, gc);
  lua_setfield(L, -2, "__gc");
  if (tostring) lua_pushcfunction(L, tostring), lua_setfield(L, -2, "__tostring");
  lua_newtable(L);
  luaL_setfuncs(L, methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pushboolean(L, false);
  lua_setfield(L, -2, "__metatable");  // getmetatable() cannot reach __gc
  lua_pop(L, 1);
}

}  // namespace

void open_orrery_api(lua_State* L, Registry& registry) {
  g_registry = &registry;
  static const luaL_Reg model_methods[] = {
      {"forecast", ORRERY_LUA(m_forecast)},
      {"parameters", ORRERY_LUA(m_parameters)},
      {"describe", ORRERY_LUA(m_describe)},
      {"activations", ORRERY_LUA(m_activations)},
      {"save", ORRERY_LUA(m_save)},
      {"load", ORRERY_LUA(m_load)},
      {nullptr, nullptr}};
  static const luaL_Reg data_methods[] = {{"sample", ORRERY_LUA(d_sample)}, {nullptr, nullptr}};
  new_metatable(L, kModelMeta, gc_box<Model, kModelMeta>, model_methods, ORRERY_LUA(m_tostring));
  new_metatable(L, kDataMeta, gc_box<DataSource, kDataMeta>, data_methods, nullptr);

  static const luaL_Reg api[] = {
      {"plugins", ORRERY_LUA(l_plugins)},     {"model", ORRERY_LUA(l_model)},
      {"load", ORRERY_LUA(l_load)},
      {"data", ORRERY_LUA(l_data)},           {"train", ORRERY_LUA(l_train)},
      {"read_csv", ORRERY_LUA(l_read_csv)},   {"evaluate", ORRERY_LUA(l_evaluate)},
      {"write_json", ORRERY_LUA(l_write_json)},
      {"experiment_dir", ORRERY_LUA(l_experiment_dir)},
      {"plot", ORRERY_LUA(l_plot)},           {"ui", ORRERY_LUA(l_ui)}, {nullptr, nullptr}};
  lua_newtable(L);
  luaL_setfuncs(L, api, 0);
  lua_pushstring(L, "0.1.0");
  lua_setfield(L, -2, "version");
  lua_setglobal(L, "orrery");
}

}  // namespace orrery
