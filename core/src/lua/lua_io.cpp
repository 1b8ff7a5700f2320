// Files: orrery.read_csv, orrery.read_json, orrery.write_json, orrery.experiment_dir.
#include "orrery/host/lua_binding.h"

#include "orrery/host/csv.h"
#include "orrery/host/run_store.h"

namespace orrery {
namespace {

// orrery.read_csv(path): {names = {...}, columns = {name = {...}}, rows = n}
int l_read_csv(lua_State* L) {
  const CsvTable t = read_csv(to_string(L, 1, "orrery.read_csv: path"));
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

// orrery.read_json(path): the file's value as Lua (objects as tables, arrays as lists).
int l_read_json(lua_State* L) {
  push_json(L, read_json_file(to_string(L, 1, "orrery.read_json: path")));
  return 1;
}

// orrery.write_json(path, value), atomically.
int l_write_json(lua_State* L) {
  const std::string path = to_string(L, 1, "orrery.write_json: path");
  write_json_file(path, lua_to_json(L, 2, "orrery.write_json value"));
  return 0;
}

// orrery.experiment_dir(name [, runs_dir]): a fresh folder for an experiment's runs and results.
int l_experiment_dir(lua_State* L) {
  const std::string name = to_string(L, 1, "orrery.experiment_dir: name");
  const std::string runs = lua_isnoneornil(L, 2) ? "runs" : to_string(L, 2, "orrery.experiment_dir: runs_dir");
  lua_pushstring(L, claim_run_dir(runs, name).c_str());
  return 1;
}

}  // namespace

void open_io_library(lua_State* L, LuaHost& h) {
  static const luaL_Reg functions[] = {{"read_csv", ORRERY_LUA(l_read_csv)},
                                       {"read_json", ORRERY_LUA(l_read_json)},
                                       {"write_json", ORRERY_LUA(l_write_json)},
                                       {"experiment_dir", ORRERY_LUA(l_experiment_dir)},
                                       {nullptr, nullptr}};
  set_functions(L, h, functions);
}

}  // namespace orrery
