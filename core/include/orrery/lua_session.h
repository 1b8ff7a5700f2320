#pragma once
// The Lua face of Orrery: a lua_State with the `orrery` API, used by `orrery run` and
// `orrery repl`. Errors are reported at the user's script line, with a Lua-only traceback.
#include <map>
#include <string>

#include "orrery/json.h"

struct lua_State;

namespace orrery {
class Registry;

class LuaSession {
 public:
  explicit LuaSession(Registry& registry);
  ~LuaSession();
  LuaSession(const LuaSession&) = delete;
  LuaSession& operator=(const LuaSession&) = delete;

  lua_State* state() { return L_; }

  // Runs a script; `args` (key=value pairs from the command line, numbers and booleans
  // converted) become the global table `args` and the chunk's `...`. Returns the process exit
  // code: 0, 1 on error (message and traceback on stderr), 130 when interrupted.
  int run_file(const std::string& path, const std::map<std::string, std::string>& args);

  // Runs `code` as a chunk named `chunkname`; on error fills `error` and returns false.
  bool exec(const std::string& code, const std::string& chunkname, std::string* error);

  // The interactive loop (readline history, completion, multi-line input, =expr).
  int repl();

 private:
  lua_State* L_;
};

// What Ctrl-C does, callable from any thread (the dashboard's window closing): the running
// script stops at its next Lua instruction and training at its next step.
void request_interrupt();

// Installs the `orrery` table into L (lua_api.cpp).
void open_orrery_api(lua_State* L, Registry& registry);

// Calls the function on the stack (below its nargs arguments) with a traceback handler and
// Ctrl-C turned into a Lua error; returns the Lua status, leaving the message on error.
int protected_call(lua_State* L, int nargs, int nresults);

// Lua value <-> JSON (lua_convert.cpp). Tables with keys 1..n become arrays, others objects;
// `what` names the value in errors ("options of architecture plugin 'toto2'").
Json lua_to_json(lua_State* L, int index, const std::string& what);
void push_json(lua_State* L, const Json& j);

}  // namespace orrery
