#pragma once
// The Lua face of Orrery: a lua_State with the `orrery` API, used by `orrery run`, `orrery repl`
// and the dashboard's script mode. Errors are reported at the user's script line, with a
// Lua-only traceback. Ctrl-C and SIGTERM stop the running script: training finishes its step
// and writes its summary, a forecast stops between passes, and Lua code (pcall included)
// cannot swallow the stop. A loop inside a coroutine that was already running stops at its
// next call of an `orrery` function or its next yield (Lua's hooks are per coroutine).
#include <map>
#include <string>
#include <vector>

#include "orrery/interrupt.h"
#include "orrery/json.h"

struct lua_State;

namespace orrery {
class ProcessGroup;
class Registry;

// What every binding function reaches through its upvalue: nothing process-wide.
struct LuaHost {
  Registry& registry;
  Interrupt& interrupt;
  bool resume_runs = false;  // `orrery run --resume`: every orrery.train continues its run
  ProcessGroup* world = nullptr;  // a data-parallel job this process is a rank of (orrery.world)
  // The running script and its command line's name=value pairs, as given: orrery.args reads them.
  std::string script{};
  std::map<std::string, std::string> script_args{};
  bool script_help = false;  // `orrery run SCRIPT --help`: orrery.args prints the usage and stops
  bool help_shown = false;
  bool argument_error = false;  // orrery.args refused the command line: reported without a traceback
};

// Adds functions to the `orrery` table on top of the stack (e.g. the dashboard's orrery.plot and
// orrery.ui, which the `orrery` program registers so that the core needs no dashboard).
using LuaLibrary = void (*)(lua_State* L, LuaHost& host);

class LuaSession {
 public:
  explicit LuaSession(Registry& registry, const std::vector<LuaLibrary>& libraries = {});
  ~LuaSession();
  LuaSession(const LuaSession&) = delete;
  LuaSession& operator=(const LuaSession&) = delete;

  lua_State* state() { return L_; }
  // `orrery run --resume`: every orrery.train of the script continues its run from its newest
  // checkpoint (or starts it, the first time), as if it said resume = true.
  void resume_runs(bool on) { host_.resume_runs = on; }
  // A rank of a data-parallel job (launched by torchrun, srun or orrery launch): every
  // orrery.train of the script trains with the other ranks; the group outlives the session.
  void join(ProcessGroup* world) { host_.world = world; }
  // `orrery run SCRIPT --help`: the script runs until its orrery.args, which prints the arguments
  // and stops it (exit 0); any other orrery call first stops it with an error.
  void script_help(bool on) { host_.script_help = on; }

  // Runs a script; `args` (key=value pairs from the command line) are what orrery.args reads, and
  // (numbers and booleans converted) the global table `args` and the chunk's `...`. Returns the process exit
  // code: 0, 1 on error (message and traceback on stderr), 128 + the signal when stopped
  // (130 for Ctrl-C, 143 for SIGTERM).
  int run_file(const std::string& path, const std::map<std::string, std::string>& args);

  // Runs `code` as a chunk named `chunkname`; on error fills `error` and returns false.
  bool exec(const std::string& code, const std::string& chunkname, std::string* error);

  // The interactive loop (readline history, completion, multi-line input, =expr).
  int repl();

  // Calls the function on the stack (below its nargs arguments) with a traceback handler,
  // Ctrl-C and SIGTERM turned into a stop of this session; returns the Lua status, leaving the
  // message on error.
  int call(int nargs, int nresults);

  // What a signal handler needs to stop this session's script.
  struct Running {
    lua_State* L;
    Interrupt* interrupt;
  };

 private:
  lua_State* L_;
  Interrupt interrupt_;
  LuaHost host_;
  Running running_;
};

// What Ctrl-C does, callable from any thread (the dashboard's window closing): the script
// running in some session stops at its next Lua instruction, training at its next step.
void interrupt_running_script();

// Installs the `orrery` table into L (lua_api.cpp).
void open_orrery_api(lua_State* L, LuaHost& host);

// Lua value <-> JSON (lua_convert.cpp). Tables with keys 1..n become arrays, others objects;
// `what` names the value in errors ("options of architecture plugin 'toto2'").
Json lua_to_json(lua_State* L, int index, const std::string& what);
void push_json(lua_State* L, const Json& j);

}  // namespace orrery
