// orrery.plot (the dashboard's views as SVG files) and orrery.ui (the live dashboard as a
// process of its own): argument checks around write_svg_report and start_dashboard_process.
#include "lua/ui_lua.h"

#include <cstdlib>
#include <filesystem>

#include "lua/dashboard_process.h"
#include "orrery/host/lua_binding.h"
#include "runs/run_watcher.h"
#include "views/svg_report.h"

namespace orrery::ui {
namespace {

// orrery.plot(dir [, out]): the dashboard's views as SVG files (views/svg_report.h).
int l_plot(lua_State* L) {
  const std::string dir = to_string(L, 1, "orrery.plot: dir");
  const std::string out = lua_isnoneornil(L, 2) ? (std::filesystem::path(dir) / "plots").string()
                                                : to_string(L, 2, "orrery.plot: out");
  if (!std::filesystem::is_directory(dir)) throw Error("orrery.plot: no folder '" + dir + "'");
  RunWatcher watcher(dir);
  watcher.poll();
  push_json(L, write_svg_report(*watcher.snapshot(), out));
  return 1;
}

// orrery.ui([runs_dir]) or orrery.ui{runs_dir=, view=, filter=, screenshot=, after=, layout=}:
// the dashboard as its own process, so the session stays free. With a screenshot it waits.
int l_ui(lua_State* L) {
  const std::string fn = "orrery.ui";
  std::vector<std::string> args;
  std::string runs_dir = "runs";
  bool wait = false;
  if (lua_type(L, 1) == LUA_TTABLE) {
    check_fields(L, 1, fn, {"runs_dir", "view", "filter", "screenshot", "after", "layout"});
    runs_dir = string_field(L, 1, "runs_dir", fn).value_or(runs_dir);
    for (const char* k : {"view", "filter", "screenshot", "layout"})
      if (auto v = string_field(L, 1, k, fn)) {
        args.insert(args.end(), {std::string("--") + k, *v});
        wait |= std::string(k) == "screenshot";  // a screenshot: wait for the PNG
      }
    if (auto after = integer_field(L, 1, "after", fn)) args.insert(args.end(), {"--after", std::to_string(*after)});
  } else if (!lua_isnoneornil(L, 1)) {
    runs_dir = to_string(L, 1, fn + ": runs_dir");
  }
  if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY"))
    throw Error(fn + ": no display (DISPLAY is not set); orrery.plot(dir) writes the same views as SVG files");
  if (!std::filesystem::is_directory(runs_dir)) throw Error(fn + ": no folder '" + runs_dir + "'");
  args.push_back(runs_dir);
  lua_pushinteger(L, start_dashboard_process(args, wait));
  return 1;
}

}  // namespace

void open_lua_library(lua_State* L, LuaHost& host) {
  static const luaL_Reg functions[] = {{"plot", ORRERY_LUA(l_plot)}, {"ui", ORRERY_LUA(l_ui)}, {nullptr, nullptr}};
  set_functions(L, host, functions);
}

}  // namespace orrery::ui
