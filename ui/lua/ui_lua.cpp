// orrery.plot (the dashboard's views as SVG files) and orrery.ui (the live dashboard as a
// process of its own).
#include "lua/ui_lua.h"

#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <thread>

#include "lua_binding.h"
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

// The `orrery` program: this process when it is one, else the one beside the core library.
std::string orrery_program() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && self.filename() == "orrery") return self.string();
  Dl_info info;
  std::filesystem::path beside;
  if (dladdr(reinterpret_cast<void*>(&protect), &info) && info.dli_fname) {
    beside = std::filesystem::path(info.dli_fname).parent_path().parent_path() / "bin" / "orrery";
    if (std::filesystem::exists(beside)) return beside.string();
  }
  throw Error("orrery.ui: cannot find the orrery program (tried /proc/self/exe and " + beside.string() + ")");
}

// orrery.ui([runs_dir]) or orrery.ui{runs_dir=, view=, filter=, screenshot=, after=, layout=}:
// the dashboard as its own process, so the session stays free. With a screenshot it waits.
int l_ui(lua_State* L) {
  const std::string fn = "orrery.ui";
  std::vector<std::string> argv = {orrery_program(), "ui"};
  std::string runs_dir = "runs";
  bool wait = false;
  if (lua_type(L, 1) == LUA_TTABLE) {
    check_fields(L, 1, fn, {"runs_dir", "view", "filter", "screenshot", "after", "layout"});
    runs_dir = string_field(L, 1, "runs_dir", fn).value_or(runs_dir);
    for (const char* k : {"view", "filter", "screenshot", "layout"})
      if (auto v = string_field(L, 1, k, fn)) {
        argv.insert(argv.end(), {std::string("--") + k, *v});
        wait |= std::string(k) == "screenshot";
      }
    if (auto after = integer_field(L, 1, "after", fn)) argv.insert(argv.end(), {"--after", std::to_string(*after)});
  } else if (!lua_isnoneornil(L, 1)) {
    runs_dir = to_string(L, 1, fn + ": runs_dir");
  }
  if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY"))
    throw Error(fn + ": no display (DISPLAY is not set); orrery.plot(dir) writes the same views as SVG files");
  if (!std::filesystem::is_directory(runs_dir)) throw Error(fn + ": no folder '" + runs_dir + "'");
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
  if (err) throw Error(fn + ": cannot start " + argv[0] + ": " + std::strerror(err));
  if (!wait) {
    std::thread([pid] { waitpid(pid, nullptr, 0); }).detach();  // reaped when it closes
    lua_pushinteger(L, pid);
    return 1;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(fn + ": the dashboard failed (" +
                std::string(WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status)) : "killed") +
                "); its message is above");
  lua_pushinteger(L, 0);
  return 1;
}

}  // namespace

void open_lua_library(lua_State* L, LuaHost& host) {
  static const luaL_Reg functions[] = {{"plot", ORRERY_LUA(l_plot)}, {"ui", ORRERY_LUA(l_ui)}, {nullptr, nullptr}};
  set_functions(L, host, functions);
}

}  // namespace orrery::ui
