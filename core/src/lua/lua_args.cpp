// orrery.args{...}: a script declares its arguments (name, type, default, one line of help) and
// gets them typed and checked from the command line, or, under `orrery run SCRIPT --help`, prints
// them and stops before any work.
#include <algorithm>
#include <cctype>
#include <cstdio>

#include "orrery/host/lua_binding.h"
#include "orrery/host/script_args.h"

namespace orrery {
namespace {

const std::vector<std::string> kTypes = {"int", "number", "bool", "string", "path", "ints", "numbers", "strings"};

// The declaration's type names as the option schema's.
std::string schema_type(const std::string& t) {
  if (t == "ints") return "int_list";
  if (t == "numbers") return "number_list";
  return t;
}

bool identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// One entry {name, type, default, help, min =, max =, choices =} at idx into `out`; a list of
// entries (a library's shared arguments) is read entry by entry.
void read_entry(lua_State* L, int idx, ScriptArgs& out) {
  idx = lua_absindex(L, idx);
  if (lua_rawgeti(L, idx, 1) == LUA_TTABLE) {
    lua_pop(L, 1);
    for (lua_Integer i = 1; lua_rawgeti(L, idx, i) != LUA_TNIL; ++i) {
      if (lua_type(L, -1) != LUA_TTABLE) throw Error("orrery.args: a list of arguments holds a " + std::string(luaL_typename(L, -1)));
      read_entry(L, -1, out);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  const std::string fn = "orrery.args";
  check_fields(L, idx, fn, {"min", "max", "choices"}, true);
  lua_rawgeti(L, idx, 1);
  const std::string name = to_string(L, -1, fn + ": an argument's name (its first item)");
  lua_pop(L, 1);
  if (!identifier(name)) throw Error(fn + ": argument name " + quote_input(name) + " is not a name (letters, digits, _)");
  if (out.schema.find(name)) throw Error(fn + ": argument '" + name + "' is declared twice");
  const std::string what = fn + ": argument '" + name + "'";
  lua_rawgeti(L, idx, 2);
  const std::string type = lua_isnil(L, -1) ? "" : to_string(L, -1, what + ": its type (second item)");
  lua_pop(L, 1);
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end())
    throw Error(what + ": type " + quote_input(type) + " is not one of " + join_names(kTypes));
  lua_rawgeti(L, idx, 4);
  const std::string help = lua_isnil(L, -1) ? "" : to_string(L, -1, what + ": its help (fourth item)");
  lua_pop(L, 1);
  if (help.empty()) throw Error(what + " needs one line of help (its fourth item)");
  OptionSpec spec{name, schema_type(type), nullptr, help, number_field(L, idx, "min", what), number_field(L, idx, "max", what), {}, {}};
  if (field(L, idx, "choices")) {
    if (type != "string") throw Error(what + ": choices are for a string argument");
    spec.choices = lua_to_json(L, -1, what + ": choices").get<std::vector<std::string>>();
    lua_pop(L, 1);
  }
  // The default is checked like a given value, so a declaration cannot promise what it refuses.
  lua_rawgeti(L, idx, 3);
  const Json def = lua_to_json(L, -1, what + ": its default (third item)");
  lua_pop(L, 1);
  if (!def.is_null()) {
    OptionSchema one;
    one.add(spec);
    spec.default_value = one.validate(Json{{name, def}}, "orrery.args (a default)", {}, "argument")[name];
  }
  out.schema.add(std::move(spec));
}

// In help mode, any other orrery function called before orrery.args stops the script: it has
// not declared its arguments, and --help must not start its work.
int undeclared(lua_State* L) {
  return luaL_error(L, "%s --help: the script calls orrery.%s before declaring its arguments with orrery.args, so it "
                    "has no help to print", host(L).script.c_str(), lua_tostring(L, lua_upvalueindex(2)));
}

// orrery.args{"what the script does", {name, type, default, help, ...}, ...}: the arguments, typed,
// and the set of those the command line gave ({name = true}).
int l_args(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  LuaHost& h = host(L);
  ScriptArgs declared;
  declared.script = h.script.empty() ? "(this script)" : h.script;
  for (lua_Integer i = 1; lua_rawgeti(L, 1, i) != LUA_TNIL; ++i) {
    if (lua_type(L, -1) == LUA_TSTRING && i == 1) declared.about = lua_tostring(L, -1);
    else if (lua_type(L, -1) == LUA_TTABLE) read_entry(L, -1, declared);
    else throw Error("orrery.args: item " + std::to_string(i) + " must be an argument {name, type, default, help}, got a " +
                     luaL_typename(L, -1));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  check_fields(L, 1, "orrery.args", {}, true);
  if (h.script_help) {
    std::fputs(script_usage(declared).c_str(), stdout);
    std::fflush(stdout);
    h.help_shown = true;
    return luaL_error(L, "help shown");
  }
  Json values;
  try {
    values = parse_script_args(declared, h.script_args);
  } catch (const Error& e) {
    h.argument_error = true;  // the command line's mistake, not the script's: no script line, no traceback
    throw LocatedError(e.what());
  }
  for (const auto& s : declared.schema.specs())  // a list of names stays a list, given as "a,b" or not
    if (s.type == "strings" && values[s.name].is_string()) values[s.name] = string_list(values[s.name]);
  push_json(L, values);
  lua_createtable(L, 0, static_cast<int>(h.script_args.size()));  // which were given, for rules that ask
  for (const auto& [name, text] : h.script_args) lua_pushboolean(L, true), lua_setfield(L, -2, name.c_str());
  return 2;
}

}  // namespace

void open_args_library(lua_State* L, LuaHost& h) {
  static const luaL_Reg functions[] = {{"args", ORRERY_LUA(l_args)}, {nullptr, nullptr}};
  set_functions(L, h, functions);
}

void guard_help(lua_State* L, LuaHost& h) {
  lua_getglobal(L, "orrery");
  lua_pushnil(L);
  std::vector<std::string> names;
  while (lua_next(L, -2)) {
    if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TFUNCTION && std::string(lua_tostring(L, -2)) != "args")
      names.push_back(lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  for (const auto& name : names) {
    lua_pushlightuserdata(L, &h);
    lua_pushstring(L, name.c_str());
    lua_pushcclosure(L, undeclared, 2);
    lua_setfield(L, -2, name.c_str());
  }
  lua_pop(L, 1);
}

}  // namespace orrery
