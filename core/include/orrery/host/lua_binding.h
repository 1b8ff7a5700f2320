#pragma once
// What the binding files share: the host upvalue, userdata boxes, and argument readers that
// check a value's type before touching it. A binding reads like loslib.c: check the
// arguments, call the core, push the result. C++ errors become Lua errors at the calling
// script line (ORRERY_LUA); nothing lets a C++ exception cross into Lua.
#include <lua.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "orrery/error.h"
#include "orrery/host/lua_session.h"
#include "orrery/model_spec.h"

namespace orrery {

// ---- calling C++ from Lua -----------------------------------------------------------------

// An error whose message already names the script location (e.g. from a Lua callback).
struct LocatedError : Error {
  using Error::Error;
};

// Runs fn, turning any C++ exception into a Lua error at the calling script line.
int protect(lua_State* L, int (*fn)(lua_State*));
#define ORRERY_LUA(fn) [](lua_State* L) { return ::orrery::protect(L, fn); }

// The session's host, the first upvalue of every binding function.
inline LuaHost& host(lua_State* L) { return *static_cast<LuaHost*>(lua_touserdata(L, lua_upvalueindex(1))); }

// Sets `functions` into the table on top of the stack, each with the host as its upvalue.
void set_functions(lua_State* L, LuaHost& host, const luaL_Reg* functions);

// ---- userdata -----------------------------------------------------------------------------

inline constexpr char kModelMeta[] = "orrery.Model";
inline constexpr char kDataMeta[] = "orrery.Data";

template <class T> struct Box { std::shared_ptr<T> ptr; };

// `user_values` Lua values travel with the box (a data object keeps its plugin choice in one).
template <class T> void push_box(lua_State* L, std::shared_ptr<T> p, const char* meta, int user_values = 0) {
  void* mem = lua_newuserdatauv(L, sizeof(Box<T>), user_values);
  new (mem) Box<T>{std::move(p)};
  luaL_setmetatable(L, meta);
}

// The object in the box at idx, or nullptr when idx holds something else.
template <class T> std::shared_ptr<T> test_box(lua_State* L, int idx, const char* meta) {
  auto* b = static_cast<Box<T>*>(luaL_testudata(L, idx, meta));
  if (!b) return nullptr;
  if (!b->ptr) throw Error(std::string(meta) + " object has been released");
  return b->ptr;
}

// The object in the box at idx; an error naming `what` and the type found otherwise.
template <class T> std::shared_ptr<T> check_box(lua_State* L, int idx, const char* meta, const std::string& what) {
  if (auto p = test_box<T>(L, idx, meta)) return p;
  throw Error(what + " must be an " + meta + ", got a " + luaL_typename(L, idx));
}

// Idempotent: releasing twice (or a script calling __gc) is harmless.
template <class T, const char* Meta> int gc_box(lua_State* L) {
  if (auto* b = static_cast<Box<T>*>(luaL_testudata(L, 1, Meta))) b->ptr.reset();
  return 0;
}

// A metatable `name` whose __index holds `methods` (each with the host as upvalue), with __gc
// and, when given, __tostring; getmetatable() on its objects returns false.
void new_metatable(lua_State* L, LuaHost& host, const char* name, lua_CFunction gc,
                   const luaL_Reg* methods, lua_CFunction tostring);

// ---- reading arguments --------------------------------------------------------------------

// Errors for unknown string keys of the table at idx, with the closest known name; `list`:
// the table is also a list (integer keys are its items).
void check_fields(lua_State* L, int idx, const std::string& fn, const std::vector<std::string>& known,
                  bool list = false);

// Pushes t[key] (t a table at idx) and returns true; pushes nothing and returns false for nil.
bool field(lua_State* L, int idx, const char* key);

// The value at idx as a whole number (a float with an integral value counts), a string, a
// boolean or a list of numbers; otherwise an error naming `what` and the type found.
int64_t to_integer(lua_State* L, int idx, const std::string& what);
std::string to_string(lua_State* L, int idx, const std::string& what);
bool to_boolean(lua_State* L, int idx, const std::string& what);
// NaN entries are kept (a missing value in a series); anything but a number is an error.
std::vector<double> to_numbers(lua_State* L, int idx, const std::string& what);
// A whole number, or a list of them: {n} either way.
std::vector<int64_t> to_integers(lua_State* L, int idx, const std::string& what);
// A list of strings (names); anything else is an error naming `what`.
std::vector<std::string> to_strings(lua_State* L, int idx, const std::string& what);

// t[key] read with one of the readers above; nullopt when nil. `fn` prefixes the field's name.
std::optional<int64_t> integer_field(lua_State* L, int idx, const char* key, const std::string& fn);
std::optional<double> number_field(lua_State* L, int idx, const char* key, const std::string& fn);
std::optional<std::string> string_field(lua_State* L, int idx, const char* key, const std::string& fn);
std::optional<bool> boolean_field(lua_State* L, int idx, const char* key, const std::string& fn);
// A box_cox value: true (each series' exponent by Guerrero's method: NaN), false (none: unset),
// "checked" (Guerrero's, kept where each series' own check says so: the flag) or, where
// `exponents`, a number in [0, 1] for every series. ForecastOptions' box_cox and box_cox_check.
struct BoxCoxChoice {
  std::optional<double> exponent;
  bool check = false;
};
BoxCoxChoice to_box_cox(lua_State* L, int idx, const std::string& what, bool exponents);

// A plugin choice from Lua: "name" or {"name", option = value, ...}.
PluginSpec to_plugin_spec(lua_State* L, int idx, const std::string& what);

class DataSource;
// A data argument: a data object (orrery.data) or a plugin choice, with the choice either way
// (a data object keeps the one it was made from), so a held-out source of the same kind can
// be made under another seed.
struct DataArgument {
  PluginSpec spec;
  std::shared_ptr<DataSource> source;  // null for a plugin choice
};
DataArgument to_data(lua_State* L, int idx, const std::string& what);  // lua_data.cpp

// ---- the libraries the `orrery` table is made of ----------------------------------------
void open_model_library(lua_State* L, LuaHost& host);  // model, load; model methods
void open_data_library(lua_State* L, LuaHost& host);   // data; data methods
void open_train_library(lua_State* L, LuaHost& host);  // train, evaluate
void open_io_library(lua_State* L, LuaHost& host);     // read_csv, write_json, experiment_dir
void open_eval_library(lua_State* L, LuaHost& host);   // eval
void open_search_library(lua_State* L, LuaHost& host); // search
void open_args_library(lua_State* L, LuaHost& host);   // args (lua_args.cpp)
// `orrery run SCRIPT --help`: every orrery function but orrery.args stops the script, so that a
// script without a declaration starts no work.
void guard_help(lua_State* L, LuaHost& host);

}  // namespace orrery
