#include <lua.hpp>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "orrery/host/lua_session.h"
#include "orrery/host/lua_binding.h"
#include "orrery/input_file.h"
#include "orrery/host/registry.h"

namespace orrery {
namespace {

// The session whose script the terminal's signals stop. Signals are process-wide by nature;
// this is the one place that knows which session is running: a lock-free pointer to the
// session's own record, so a signal handler on any thread (the dashboard's main thread while
// its script runs on a worker) reads it whole. The mutex orders the script's thread against
// interrupt_running_script; a signal handler cannot take it.
std::atomic<const LuaSession::Running*> g_running{nullptr};
std::mutex g_running_mutex;
static_assert(std::atomic<const LuaSession::Running*>::is_always_lock_free);

// As in lua.c, a stop only sets a hook (lua_sethook is safe from a signal handler or another
// thread); the hook raises the error at the next Lua instruction. Unlike lua.c the hook stays:
// every later instruction raises again, so a script's pcall cannot swallow the stop. Count
// hooks fire on Lua instructions only, never inside C functions or the message handler.
void interrupt_hook(lua_State* L, lua_Debug*) { luaL_error(L, "interrupted"); }

void stop(const LuaSession::Running* r, int signal) {
  if (!r) return;
  r->interrupt->request(signal);
  lua_sethook(r->L, interrupt_hook, LUA_MASKCOUNT, 1);
}

// A second Ctrl-C or SIGTERM while the first still waits for its safe point (the step's end, the
// next Lua instruction) quits at once, as a shell user expects: C++ work that polls nothing (a
// huge file being read, an open(2) that blocks) would otherwise hold the process. Every file
// Orrery keeps is written atomically (atomic_file.h), so nothing kept is left half-written. One
// signal delivered twice (a terminal's Ctrl-C reaches `orrery launch`'s ranks directly and as
// passed on) is not a second: it must come a second or more after the first.
void on_signal(int signal) {
  const LuaSession::Running* r = g_running.load();
  if (r && r->interrupt->seconds_since_request() >= 1.0) {
    static const char kQuit[] = "\norrery: stopped at once (a second signal)\n";
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kQuit, sizeof kQuit - 1);
    ::_exit(128 + signal);
  }
  stop(r, signal);
}

// Message handler: the error plus a traceback of Lua frames only (C frames are the host's).
int message_handler(lua_State* L) {
  const char* msg = lua_tostring(L, 1);
  if (!msg) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  std::string full = lua_tostring(L, -1);
  std::stringstream in(full);
  std::string line, out;
  while (std::getline(in, line))
    if (line.find("[C]:") == std::string::npos) out += line + "\n";
  if (!out.empty()) out.pop_back();
  lua_pushstring(L, out.c_str());
  return 1;
}

// "3" -> 3, "0.5" -> 0.5, "true" -> true, anything else stays a string.
void push_arg(lua_State* L, const std::string& v) {
  if (v == "true" || v == "false") return lua_pushboolean(L, v == "true");
  if (lua_stringtonumber(L, v.c_str()) == v.size() + 1) return;
  lua_pushstring(L, v.c_str());
}

}  // namespace

void interrupt_running_script() {
  std::lock_guard lock(g_running_mutex);
  stop(g_running.load(), SIGINT);
}

int LuaSession::call(int nargs, int nresults) {
  const int base = lua_gettop(L_) - nargs;
  lua_pushcfunction(L_, message_handler);
  lua_insert(L_, base);
  interrupt_.clear();
  {
    std::lock_guard lock(g_running_mutex);
    g_running = &running_;
  }
  auto previous_int = std::signal(SIGINT, on_signal);
  auto previous_term = std::signal(SIGTERM, on_signal);
  const int status = lua_pcall(L_, nargs, nresults, base);
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);
  {
    std::lock_guard lock(g_running_mutex);
    g_running = nullptr;
  }
  lua_sethook(L_, nullptr, 0, 0);
  lua_remove(L_, base);
  return status;
}

LuaSession::LuaSession(Registry& registry, const std::vector<LuaLibrary>& libraries)
    : L_(luaL_newstate()), host_{registry, interrupt_}, running_{L_, &interrupt_} {
  if (!L_) throw std::bad_alloc();
  luaL_openlibs(L_);
  open_orrery_api(L_, host_);
  lua_getglobal(L_, "orrery");
  for (LuaLibrary open : libraries) open(L_, host_);
  lua_pop(L_, 1);
}

LuaSession::~LuaSession() { lua_close(L_); }

bool LuaSession::exec(const std::string& code, const std::string& chunkname, std::string* error) {
  if (luaL_loadbufferx(L_, code.data(), code.size(), chunkname.c_str(), "t") != LUA_OK ||
      call(0, 0) != LUA_OK) {
    if (error) *error = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "error";
    lua_pop(L_, 1);
    return false;
  }
  return true;
}

int LuaSession::run_file(const std::string& path, const std::map<std::string, std::string>& args) {
  auto fail = [](const std::string& msg) {
    std::fflush(stdout);
    std::fprintf(stderr, "orrery: %s\n", msg.c_str());
    return 1;
  };
  try {
    require_input_file(path, "a Lua script");
  } catch (const Error& e) {
    return fail(e.what());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot open " + path + ": " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string code = ss.str();
  if (code.rfind("#!", 0) == 0) code.insert(0, "--");  // allow a shebang line
  lua_newtable(L_);
  for (const auto& [k, v] : args) push_arg(L_, v), lua_setfield(L_, -2, k.c_str());
  lua_setglobal(L_, "args");
  host_.script = path;
  host_.script_args = args;
  if (host_.script_help) guard_help(L_, host_);
  // Modules beside the script come first: require("lib.proxy") in scripts/x.lua reads
  // scripts/lib/proxy.lua, wherever the script is run from.
  {
    const std::string parent = std::filesystem::path(path).parent_path().string();
    lua_getglobal(L_, "package");
    lua_getfield(L_, -1, "path");
    const std::string was = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "";
    lua_pop(L_, 1);
    lua_pushstring(L_, ((parent.empty() ? "." : parent) + "/?.lua;" + was).c_str());
    lua_setfield(L_, -2, "path");
    lua_pop(L_, 1);
  }

  // Text only: a binary chunk could crash the interpreter.
  if (luaL_loadbufferx(L_, code.data(), code.size(), ("@" + path).c_str(), "t") != LUA_OK) {
    std::string msg = lua_tostring(L_, -1);
    lua_pop(L_, 1);
    // Syntax errors name the script ("script.lua:2: ..."); a binary chunk's refusal does not.
    return fail(msg.starts_with(path + ":") ? msg : path + ": " + msg);
  }
  lua_getglobal(L_, "args");
  if (call(1, 0) != LUA_OK) {
    std::string msg = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "error";
    lua_pop(L_, 1);
    if (host_.help_shown) return 0;
    if (host_.argument_error) msg = msg.substr(0, msg.find("\nstack traceback:"));
    const int code_ = fail(msg);
    return interrupt_.requested() ? 128 + interrupt_.signal() : code_;
  }
  if (host_.script_help) return fail(path + " --help: the script declares no arguments with orrery.args");
  return 0;
}

}  // namespace orrery
