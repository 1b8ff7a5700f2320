// orrery.train: argument checking around run_training.
#include "orrery/host/lua_binding.h"

#include "orrery/data_source.h"
#include "orrery/host/experiment.h"
#include "orrery/host/model.h"

namespace orrery {
namespace {

// A group: a plugin choice whose options may hold params = {role=, name=, stack=} and
// schedules = {"lr", ...}, the host's keys, not the optimizer's.
Json optimizer_group(lua_State* L, int idx, const std::string& what) {
  PluginSpec spec = to_plugin_spec(L, idx, what);
  Json g = spec.to_json();
  for (const char* key : {"params", "schedules"})
    if (spec.options.contains(key)) {
      g[key] = spec.options[key];
      g["options"].erase(key);
    }
  return g;
}

// The optimizer as JSON: {"adamw", lr = 1e-3} (or "adamw") is one group taking every
// parameter; a list {{"normuon", ..., params = {role = "hidden"}}, {"adamw"}} routes.
Json optimizer_json(lua_State* L, int idx) {
  const std::string what = "orrery.train: optimizer";
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE) return optimizer_group(L, idx, what);
  const bool list = lua_rawgeti(L, idx, 1) == LUA_TTABLE;
  lua_pop(L, 1);
  if (!list) return optimizer_group(L, idx, what);
  Json groups = Json::array();
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, idx));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, idx, i);
    groups.push_back(optimizer_group(L, -1, what + "[" + std::to_string(i) + "]"));
    lua_pop(L, 1);
  }
  return groups;
}

// The fields orrery.train reads as Lua objects; every other field is a run option.
const std::vector<std::string> kTrainObjects = {"model", "data", "optimizer", "on_step"};

// orrery.train{model=, data=, optimizer=, on_step=, ...options}
int l_train(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  LuaHost& h = host(L);
  Json options = Json::object();
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      lua_pop(L, 2);
      throw Error("orrery.train takes name = value fields only");
    }
    const std::string key = lua_tostring(L, -2);
    if (std::find(kTrainObjects.begin(), kTrainObjects.end(), key) == kTrainObjects.end())
      options[key] = lua_to_json(L, -1, "orrery.train: " + key);
    lua_pop(L, 1);
  }
  RunRequest run;
  run.resume = h.resume_runs;
  run.world = h.world;
  run.set_options(options, "orrery.train", kTrainObjects);
  if (!field(L, 1, "model")) throw Error("orrery.train: model = orrery.model{...} is required");
  run.model = check_box<Model>(L, -1, kModelMeta, "orrery.train: model");
  lua_pop(L, 1);
  if (field(L, 1, "data")) {
    DataArgument d = to_data(L, -1, "orrery.train: data");
    run.data = d.spec, run.source = d.source;
    lua_pop(L, 1);
  }
  if (field(L, 1, "optimizer")) run.optimizer = optimizer_json(L, -1), lua_pop(L, 1);
  int callback = LUA_NOREF;
  if (field(L, 1, "on_step")) {
    if (lua_type(L, -1) != LUA_TFUNCTION)
      throw Error(std::string("orrery.train: on_step must be a function, got a ") + luaL_typename(L, -1));
    callback = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  struct Unref {  // release the callback however this function exits
    lua_State* L; int ref;
    ~Unref() { luaL_unref(L, LUA_REGISTRYINDEX, ref); }
  } unref{L, callback};

  std::function<void(const Json&)> on_step;
  if (callback != LUA_NOREF)
    on_step = [&](const Json& ev) {
      lua_rawgeti(L, LUA_REGISTRYINDEX, callback);
      push_json(L, ev);
      if (lua_pcall(L, 1, 0, 0) == LUA_OK) return;
      std::string msg = lua_tostring(L, -1) ? lua_tostring(L, -1) : "error in on_step";
      lua_pop(L, 1);
      if (h.interrupt.requested()) return;  // stopped inside the callback: training ends this step
      throw LocatedError(msg);
    };
  const Json summary = run_training(run, h.registry, on_step, &h.interrupt);
  if (summary["interrupted"] == true)
    throw Error("interrupted (the run and its summary are saved in " + summary["run_dir"].get<std::string>() + ")");
  push_json(L, summary);
  return 1;
}

}  // namespace

void open_train_library(lua_State* L, LuaHost& h) {
  static const luaL_Reg functions[] = {
      {"train", ORRERY_LUA(l_train)}, {nullptr, nullptr}};
  set_functions(L, h, functions);
}

}  // namespace orrery
