#include "orrery/host/lua_binding.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>

#include "orrery/options.h"

namespace orrery {

int protect(lua_State* L, int (*fn)(lua_State*)) {
  std::string msg;
  bool located = false;
  try {
    host(L).interrupt.check();  // a stopped script gets no further (even from a coroutine)
    return fn(L);
  } catch (const LocatedError& e) {
    msg = e.what(), located = true;
  } catch (const c10::Error& e) {
    msg = e.what_without_backtrace();  // the user's script line, never a C++ stack
  } catch (const std::exception& e) {
    msg = e.what();
  } catch (...) {  // never let a foreign exception unwind through Lua's C frames
    msg = "internal error: an exception that is not a std::exception";
  }
  if (located) {
    lua_pushstring(L, msg.c_str());
    return lua_error(L);
  }
  return luaL_error(L, "%s", msg.c_str());  // prefixed with the calling script line
}

void set_functions(lua_State* L, LuaHost& h, const luaL_Reg* functions) {
  lua_pushlightuserdata(L, &h);
  luaL_setfuncs(L, functions, 1);
}

void new_metatable(lua_State* L, LuaHost& h, const char* name, lua_CFunction gc, const luaL_Reg* methods,
                   lua_CFunction tostring) {
  luaL_newmetatable(L, name);
  lua_pushcfunction(L, gc);
  lua_setfield(L, -2, "__gc");
  if (tostring) {
    lua_pushlightuserdata(L, &h);
    lua_pushcclosure(L, tostring, 1);
    lua_setfield(L, -2, "__tostring");
  }
  lua_newtable(L);
  set_functions(L, h, methods);
  lua_setfield(L, -2, "__index");
  lua_pushboolean(L, false);
  lua_setfield(L, -2, "__metatable");  // getmetatable() cannot reach __gc
  lua_pop(L, 1);
}

void check_fields(lua_State* L, int idx, const std::string& fn, const std::vector<std::string>& known, bool list) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (list && lua_isinteger(L, -1)) continue;
    if (lua_type(L, -1) != LUA_TSTRING) {
      const std::string type = luaL_typename(L, -1);
      lua_pop(L, 1);
      throw Error(fn + " takes name = value fields only, got a " + type + " key");
    }
    const std::string key = lua_tostring(L, -1);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      lua_pop(L, 1);
      std::string msg = fn + ": unknown field '" + key + "'";
      if (const std::string near = closest_name(key, known); !near.empty()) msg += " (did you mean '" + near + "'?)";
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw Error(msg + "; its fields are: " + list);
    }
  }
}

bool field(lua_State* L, int idx, const char* key) {
  if (lua_getfield(L, idx, key) == LUA_TNIL) {
    lua_pop(L, 1);
    return false;
  }
  return true;
}

namespace {
[[noreturn]] void wrong_type(lua_State* L, int idx, const std::string& what, const char* expected) {
  throw Error(what + " must be " + expected + ", got " +
              (lua_type(L, idx) == LUA_TSTRING ? "the string " + quote_input(lua_tostring(L, idx))
                                               : std::string("a ") + luaL_typename(L, idx)));
}
}  // namespace

int64_t to_integer(lua_State* L, int idx, const std::string& what) {
  if (lua_type(L, idx) != LUA_TNUMBER) wrong_type(L, idx, what, "a whole number");
  if (lua_isinteger(L, idx)) return lua_tointeger(L, idx);
  const double d = lua_tonumber(L, idx);
  if (!(std::floor(d) == d && std::fabs(d) < 9.2e18)) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", d);
    throw Error(what + " must be a whole number, got " + text);
  }
  return static_cast<int64_t>(d);
}

std::string to_string(lua_State* L, int idx, const std::string& what) {
  if (lua_type(L, idx) != LUA_TSTRING) wrong_type(L, idx, what, "a string");
  size_t n = 0;
  const char* s = lua_tolstring(L, idx, &n);
  return std::string(s, n);
}

bool to_boolean(lua_State* L, int idx, const std::string& what) {
  if (lua_type(L, idx) != LUA_TBOOLEAN) wrong_type(L, idx, what, "true or false");
  return lua_toboolean(L, idx);
}

BoxCoxChoice to_box_cox(lua_State* L, int idx, const std::string& what, bool exponents) {
  const char* expected = exponents ? "true (Guerrero's exponent), false, \"checked\" or an exponent in [0, 1]"
                                   : "true (Guerrero's exponent), false or \"checked\"";
  if (lua_type(L, idx) == LUA_TBOOLEAN)
    return lua_toboolean(L, idx) ? BoxCoxChoice{std::numeric_limits<double>::quiet_NaN()} : BoxCoxChoice{};
  if (lua_type(L, idx) == LUA_TSTRING && std::string(lua_tostring(L, idx)) == "checked")
    return {std::numeric_limits<double>::quiet_NaN(), true};
  if (exponents && lua_type(L, idx) == LUA_TNUMBER && !std::isnan(lua_tonumber(L, idx))) return {lua_tonumber(L, idx)};
  if (lua_type(L, idx) == LUA_TNUMBER)
    throw Error(what + " must be " + expected + ", got " + (exponents ? std::string("NaN") : "a number"));
  wrong_type(L, idx, what, expected);
}

std::vector<double> to_numbers(lua_State* L, int idx, const std::string& what) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE) wrong_type(L, idx, what, "a list of numbers");
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, idx));
  std::vector<double> out(static_cast<size_t>(n));
  for (lua_Integer i = 1; i <= n; ++i) {
    if (lua_rawgeti(L, idx, i) != LUA_TNUMBER) {
      const std::string type = luaL_typename(L, -1);
      lua_pop(L, 1);
      throw Error(what + "[" + std::to_string(i) + "] is a " + type + ", not a number");
    }
    out[static_cast<size_t>(i - 1)] = lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  return out;
}

std::vector<std::string> to_strings(lua_State* L, int idx, const std::string& what) {
  if (lua_type(L, idx) != LUA_TTABLE) throw Error(what + " must be a list of names");
  std::vector<std::string> out;
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, idx));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, idx, i);
    out.push_back(to_string(L, -1, what + "[" + std::to_string(i) + "]"));
    lua_pop(L, 1);
  }
  return out;
}

std::vector<int64_t> to_integers(lua_State* L, int idx, const std::string& what) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TNUMBER) return {to_integer(L, idx, what)};
  if (lua_type(L, idx) != LUA_TTABLE) wrong_type(L, idx, what, "a whole number or a list of them");
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, idx));
  std::vector<int64_t> out;
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, idx, i);
    out.push_back(to_integer(L, -1, what + "[" + std::to_string(i) + "]"));
    lua_pop(L, 1);
  }
  return out;
}

std::optional<int64_t> integer_field(lua_State* L, int idx, const char* key, const std::string& fn) {
  if (!field(L, idx, key)) return std::nullopt;
  const int64_t v = to_integer(L, -1, fn + ": " + key);
  lua_pop(L, 1);
  return v;
}

std::optional<double> number_field(lua_State* L, int idx, const char* key, const std::string& fn) {
  if (!field(L, idx, key)) return std::nullopt;
  if (lua_type(L, -1) != LUA_TNUMBER) wrong_type(L, -1, fn + ": " + key, "a number");
  const double v = lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v;
}

std::optional<std::string> string_field(lua_State* L, int idx, const char* key, const std::string& fn) {
  if (!field(L, idx, key)) return std::nullopt;
  std::string v = to_string(L, -1, fn + ": " + key);
  lua_pop(L, 1);
  return v;
}

std::optional<bool> boolean_field(lua_State* L, int idx, const char* key, const std::string& fn) {
  if (!field(L, idx, key)) return std::nullopt;
  const bool v = to_boolean(L, -1, fn + ": " + key);
  lua_pop(L, 1);
  return v;
}

PluginSpec to_plugin_spec(lua_State* L, int idx, const std::string& what) {
  idx = lua_absindex(L, idx);
  PluginSpec spec;
  if (lua_type(L, idx) == LUA_TSTRING) {
    spec.name = lua_tostring(L, idx);
    return spec;
  }
  if (lua_type(L, idx) != LUA_TTABLE)
    wrong_type(L, idx, what, "a plugin name or a table like {\"name\", option = value}");
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) == LUA_TNUMBER && lua_isinteger(L, -2) && lua_tointeger(L, -2) == 1) {
      if (lua_type(L, -1) != LUA_TSTRING) {
        lua_pop(L, 2);
        throw Error(what + ": its first entry must be the plugin's name (a string)");
      }
      spec.name = lua_tostring(L, -1);
    } else if (lua_type(L, -2) == LUA_TSTRING) {
      const std::string key = lua_tostring(L, -2);
      spec.options[key] = lua_to_json(L, -1, what + "." + key);
    } else {
      lua_pop(L, 2);
      throw Error(what + ": only the plugin name may be a list entry");
    }
    lua_pop(L, 1);
  }
  if (spec.name.empty()) throw Error(what + " needs the plugin name as its first entry");
  return spec;
}

}  // namespace orrery
