// The `orrery` table that experiment scripts and the REPL use, assembled from its libraries
// (lua_model.cpp, lua_data.cpp, lua_train.cpp, lua_io.cpp, lua_eval.cpp), and the program adds
// the dashboard's (ui/lua/ui_lua.cpp). Every function is documented in
// docs/lua.md (a test checks that the two agree).
#include "orrery/host/lua_binding.h"

#include <algorithm>

#include "orrery/options.h"
#include "orrery/host/process_group.h"
#include "orrery/host/program.h"
#include "orrery/host/registry.h"

namespace orrery {
namespace {

// orrery.plugins([kind]): every loaded plugin as {kind, name, version, description, options, path}.
int l_plugins(lua_State* L) {
  const std::string kind = lua_isnoneornil(L, 1) ? "" : to_string(L, 1, "orrery.plugins: kind");
  const std::vector<std::string> kinds = {"architecture", "head", "optimizer", "parametrisation", "data"};
  if (!kind.empty() && std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
    const std::string near = closest_name(kind, kinds);
    throw Error("orrery.plugins: unknown kind " + quote_input(kind) + (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                "; the kinds are architecture, head, optimizer, parametrisation and data");
  }
  Json arr = Json::array();
  for (const auto& p : host(L).registry.plugins())
    if (kind.empty() || kind == kind_name(p.kind)) arr.push_back(p.to_json());
  push_json(L, arr);
  return 1;
}

// orrery.world(): where this process stands in a data-parallel job, {rank, size, local_rank,
// local_size, launcher}; rank 0 of 1 when it runs alone.
int l_world(lua_State* L) {
  const ProcessGroup* w = host(L).world;
  const LaunchEnv e = w ? w->env() : LaunchEnv{};
  push_json(L, {{"rank", e.rank}, {"size", e.world_size}, {"local_rank", e.local_rank},
                {"local_size", e.local_world_size}, {"launcher", e.launcher.empty() ? "none" : e.launcher}});
  return 1;
}

// orrery.program(): the path of the orrery program, for a script that starts orrery processes of
// its own (lib/parallel_runs.lua trains runs side by side that way).
int l_program(lua_State* L) {
  lua_pushstring(L, orrery_program().c_str());
  return 1;
}

}  // namespace

void open_orrery_api(lua_State* L, LuaHost& h) {
  lua_newtable(L);
  static const luaL_Reg functions[] = {{"plugins", ORRERY_LUA(l_plugins)}, {"world", ORRERY_LUA(l_world)},
                                       {"program", ORRERY_LUA(l_program)},
                                       {nullptr, nullptr}};
  set_functions(L, h, functions);
  open_model_library(L, h);
  open_data_library(L, h);
  open_train_library(L, h);
  open_io_library(L, h);
  open_eval_library(L, h);
  open_search_library(L, h);
  open_args_library(L, h);
  lua_pushstring(L, "0.1.0");
  lua_setfield(L, -2, "version");
  lua_setglobal(L, "orrery");
}

}  // namespace orrery
