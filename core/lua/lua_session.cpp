#include <lua.hpp>

#include <atomic>
#include <csignal>
#include <mutex>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "orrery/lua_session.h"
#include "orrery/registry.h"
#include "orrery/trainer.h"

namespace orrery {
namespace {

// The state a Ctrl-C (or the dashboard closing) should interrupt; set by the thread running it.
std::atomic<lua_State*> g_running{nullptr};

// As in lua.c: Ctrl-C only sets a hook (safe from a signal handler); the hook raises the error
// at the next Lua instruction. Long C++ calls (training) poll interrupt_requested instead.
void interrupt_hook(lua_State* L, lua_Debug*) {
  lua_sethook(L, nullptr, 0, 0);
  luaL_error(L, "interrupted");
}

void on_sigint(int) {
  interrupt_requested = true;
  // lua_sethook is the one Lua call safe from a signal handler or another thread (lua.c).
  if (lua_State* L = g_running.load())
    lua_sethook(L, interrupt_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

}  // namespace

// Guards g_running against a script ending (and its state closing) while another thread
// interrupts it. The signal handler cannot take it; it runs on the script's own thread anyway.
std::mutex g_running_mutex;

void request_interrupt() {
  std::lock_guard lock(g_running_mutex);
  on_sigint(0);
}

namespace {

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

// Runs the function on top of the stack with `nargs` arguments under the message handler and
// the Ctrl-C handler. Returns the Lua status; on error the message is left on the stack.
}  // namespace

int protected_call(lua_State* L, int nargs, int nresults) {
  const int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, message_handler);
  lua_insert(L, base);
  {
    std::lock_guard lock(g_running_mutex);
    g_running = L;
  }
  interrupt_requested = false;
  auto previous = std::signal(SIGINT, on_sigint);
  const int status = lua_pcall(L, nargs, nresults, base);
  std::signal(SIGINT, previous);
  {
    std::lock_guard lock(g_running_mutex);
    g_running = nullptr;
  }
  lua_sethook(L, nullptr, 0, 0);
  lua_remove(L, base);
  return status;
}

namespace {

std::string read_file(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot open " + path;
    return {};
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "3" -> 3, "0.5" -> 0.5, "true" -> true, anything else stays a string.
void push_arg(lua_State* L, const std::string& v) {
  if (v == "true" || v == "false") return lua_pushboolean(L, v == "true");
  if (lua_stringtonumber(L, v.c_str()) == v.size() + 1) return;
  lua_pushstring(L, v.c_str());
}

}  // namespace

LuaSession::LuaSession(Registry& registry) : L_(luaL_newstate()) {
  luaL_openlibs(L_);
  open_orrery_api(L_, registry);
}

LuaSession::~LuaSession() { lua_close(L_); }

bool LuaSession::exec(const std::string& code, const std::string& chunkname, std::string* error) {
  if (luaL_loadbufferx(L_, code.data(), code.size(), chunkname.c_str(), "t") != LUA_OK ||
      protected_call(L_, 0, 0) != LUA_OK) {
    if (error) *error = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "error";
    lua_pop(L_, 1);
    return false;
  }
  return true;
}

int LuaSession::run_file(const std::string& path, const std::map<std::string, std::string>& args) {
  std::string error;
  std::string code = read_file(path, &error);
  if (!error.empty()) {
    std::fprintf(stderr, "orrery: %s\n", error.c_str());
    return 1;
  }
  if (code.rfind("#!", 0) == 0) code.insert(0, "--");  // allow a shebang line
  lua_newtable(L_);
  for (const auto& [k, v] : args) push_arg(L_, v), lua_setfield(L_, -2, k.c_str());
  lua_setglobal(L_, "args");

  if (luaL_loadbufferx(L_, code.data(), code.size(), ("@" + path).c_str(), "t") != LUA_OK) {
    std::fprintf(stderr, "orrery: %s\n", lua_tostring(L_, -1));
    lua_pop(L_, 1);
    return 1;
  }
  lua_getglobal(L_, "args");
  if (protected_call(L_, 1, 0) != LUA_OK) {
    std::string msg = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "error";
    lua_pop(L_, 1);
    std::fflush(stdout);
    std::fprintf(stderr, "orrery: %s\n", msg.c_str());
    return msg.find(": interrupted") != std::string::npos ? 130 : 1;
  }
  return 0;
}

}  // namespace orrery
