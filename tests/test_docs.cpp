#include <catch2/catch.hpp>

#include <lua.hpp>

#include <fstream>
#include <sstream>

#include "lua/ui_lua.h"
#include "orrery/experiment.h"
#include "orrery/lua_session.h"
#include "orrery/registry.h"

// docs/lua.md documents every function the REPL completes, and nothing that does not exist.
TEST_CASE("docs/lua.md documents exactly the Lua API") {
  std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/docs/lua.md");
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();

  orrery::LuaSession session(orrery::Registry::global(), {orrery::ui::open_lua_library});
  lua_State* L = session.state();
  std::vector<std::string> names;
  lua_getglobal(L, "orrery");
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    if (lua_type(L, -1) == LUA_TFUNCTION) names.push_back(std::string("orrery.") + lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  for (auto [meta, prefix] : {std::pair{"orrery.Model", "model:"}, {"orrery.Data", "data:"}}) {
    luaL_getmetatable(L, meta);
    lua_getfield(L, -1, "__index");
    lua_pushnil(L);
    while (lua_next(L, -2)) names.push_back(prefix + std::string(lua_tostring(L, -2))), lua_pop(L, 1);
    lua_pop(L, 2);
  }
  REQUIRE(names.size() >= 10);
  for (const auto& n : names) {
    INFO(n);
    CHECK(doc.find("### `" + n) != std::string::npos);
  }
  // Every documented heading names something that exists.
  for (size_t pos = doc.find("### `"); pos != std::string::npos; pos = doc.find("### `", pos + 1)) {
    std::string name = doc.substr(pos + 5, doc.find_first_of("`({", pos + 5) - pos - 5);
    INFO(name);
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
}

// orrery.train's options come from one schema; docs/lua.md's orrery.train section names each.
TEST_CASE("docs/lua.md documents every option of orrery.train") {
  std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/docs/lua.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const size_t from = doc.find("### `orrery.train{");
  REQUIRE(from != std::string::npos);
  const std::string section = doc.substr(from, doc.find("\n## ", from) - from);
  for (const auto& o : orrery::RunRequest::schema().specs()) {
    INFO(o.name);
    CHECK((section.find("`" + o.name + "`") != std::string::npos || section.find("`" + o.name + " = ") != std::string::npos));
  }
  for (auto name : {"model", "data", "optimizer", "on_step"}) {
    INFO(name);
    CHECK((section.find(std::string("`") + name + "`") != std::string::npos ||
           section.find(std::string("`") + name + " = ") != std::string::npos));
  }
}
