#include <catch2/catch.hpp>

#include <lua.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "lua/ui_lua.h"
#include "orrery/host/experiment.h"
#include "orrery/host/lua_session.h"
#include "orrery/host/registry.h"
#include "support.h"

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

// Every Lua example of docs/lua.md runs: the blocks in order as one script (later examples use
// the model and run of earlier ones), in a folder with assets/, under xvfb-run for orrery.ui.
// Training examples run with fewer steps; the replacements are listed here.
TEST_CASE("every Lua example in docs/lua.md runs", "[slow]") {
  std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/docs/lua.md");
  std::string script, line;
  bool inside = false;
  int blocks = 0;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      inside = !inside && line == "```lua";
      blocks += inside;
      continue;
    }
    if (inside) script += line + "\n";
  }
  REQUIRE(blocks >= 15);
  const std::vector<std::pair<std::string, std::string>> shorter = {
      {"steps = 500,", "steps = 20,"},
      {"name = \"w64-lr0.01\"}", "name = \"w64-lr0.01\", steps = 5}"},
      {"name = \"demo\"}", "name = \"demo\", steps = 5}"},
  };
  for (const auto& [from, to] : shorter) {
    INFO("docs/lua.md no longer holds: " << from);
    REQUIRE(script.find(from) != std::string::npos);
    script.replace(script.find(from), from.size(), to);
  }
  const std::string dir = test::temp_dir("docs-examples");
  std::filesystem::create_directory_symlink(std::string(ORRERY_SOURCE_DIR) + "/assets", dir + "/assets");
  std::ofstream(dir + "/examples.lua") << script;
  auto r = test::run_command("cd '" + dir + "' && xvfb-run -a -s '-screen 0 1280x800x24' " +
                             test::orrery_cmd("run examples.lua"));
  INFO(script << "\n" << r.output);
  CHECK(r.status == 0);
  CHECK(std::filesystem::exists(dir + "/lr.png"));
  CHECK(std::filesystem::exists(dir + "/runs/demo/plots/loss.svg"));
}
