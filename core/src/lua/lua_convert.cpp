#include <lua.hpp>

#include <cmath>

#include "orrery/error.h"
#include "orrery/host/lua_session.h"
#include "orrery/utf8.h"

namespace orrery {

namespace {
Json to_json(lua_State* L, int index, const std::string& what, int depth);

// The Lua string at `index`, whole (NUL bytes included). JSON holds text only: bytes that are not
// UTF-8 would fail much later, when the JSON is written (nlohmann's dump throws), far from here.
std::string text(lua_State* L, int index, const std::string& what) {
  size_t n = 0;
  const char* s = lua_tolstring(L, index, &n);
  std::string out(s, n);
  if (!is_utf8(out)) throw Error(what + " is not UTF-8 text: " + quote_input(out));
  return out;
}
}

Json lua_to_json(lua_State* L, int index, const std::string& what) { return to_json(L, index, what, 0); }

namespace {
Json to_json(lua_State* L, int index, const std::string& what, int depth) {
  if (depth > 64 || !lua_checkstack(L, 4))
    throw Error(what + " is nested too deeply (or refers to itself)");
  index = lua_absindex(L, index);
  switch (lua_type(L, index)) {
    case LUA_TNIL: return nullptr;
    case LUA_TBOOLEAN: return static_cast<bool>(lua_toboolean(L, index));
    case LUA_TNUMBER:
      if (lua_isinteger(L, index)) return static_cast<long long>(lua_tointeger(L, index));
      return lua_tonumber(L, index);
    case LUA_TSTRING: return text(L, index, what);
    case LUA_TTABLE: {
      const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, index));
      size_t keys = 0;
      lua_pushnil(L);
      while (lua_next(L, index)) ++keys, lua_pop(L, 1);
      if (keys == 0) return Json::object();
      if (static_cast<size_t>(n) == keys) {  // a sequence 1..n
        Json arr = Json::array();
        for (lua_Integer i = 1; i <= n; ++i) {
          lua_rawgeti(L, index, i);
          arr.push_back(to_json(L, -1, what + "[" + std::to_string(i) + "]", depth + 1));
          lua_pop(L, 1);
        }
        return arr;
      }
      // A plugin choice nested in options, {"name", option = value} (a mixture's sources):
      // the JSON form of a PluginSpec, {"name": ..., "options": {...}}.
      lua_rawgeti(L, index, 1);
      const bool choice = n == 1 && lua_type(L, -1) == LUA_TSTRING;
      Json obj = Json::object();
      if (choice) obj = {{"name", text(L, -1, what + "[1]")}, {"options", Json::object()}};
      lua_pop(L, 1);
      lua_pushnil(L);
      while (lua_next(L, index)) {
        if (choice && lua_type(L, -2) == LUA_TNUMBER && lua_isinteger(L, -2) && lua_tointeger(L, -2) == 1) {
          lua_pop(L, 1);
          continue;
        }
        if (choice && lua_type(L, -2) == LUA_TSTRING) {
          const std::string key = text(L, -2, "a key of " + what);
          obj["options"][key] = to_json(L, -1, what + "." + key, depth + 1);
          lua_pop(L, 1);
          continue;
        }
        if (lua_type(L, -2) != LUA_TSTRING) {
          lua_pop(L, 2);
          throw Error(what + " mixes list entries and name = value pairs");
        }
        const std::string key = text(L, -2, "a key of " + what);
        obj[key] = to_json(L, -1, what + "." + key, depth + 1);
        lua_pop(L, 1);
      }
      return obj;
    }
    default:
      throw Error(what + " cannot hold a " + std::string(luaL_typename(L, index)));
  }
}
}  // namespace

void push_json(lua_State* L, const Json& j) {
  luaL_checkstack(L, 4, "push_json");
  switch (j.type()) {
    case Json::value_t::null: lua_pushnil(L); break;
    case Json::value_t::boolean: lua_pushboolean(L, j.get<bool>()); break;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: lua_pushinteger(L, j.get<long long>()); break;
    case Json::value_t::number_float: lua_pushnumber(L, j.get<double>()); break;
    case Json::value_t::string: {
      const std::string& s = j.get_ref<const std::string&>();
      lua_pushlstring(L, s.data(), s.size());
      break;
    }
    case Json::value_t::array: {
      lua_createtable(L, static_cast<int>(j.size()), 0);
      lua_Integer i = 1;
      for (const auto& e : j) push_json(L, e), lua_rawseti(L, -2, i++);
      break;
    }
    case Json::value_t::object: {
      lua_createtable(L, 0, static_cast<int>(j.size()));
      for (const auto& [k, v] : j.items()) {  // keys whole, NUL bytes included
        lua_pushlstring(L, k.data(), k.size());
        push_json(L, v);
        lua_rawset(L, -3);
      }
      break;
    }
    default: lua_pushnil(L);
  }
}

}  // namespace orrery
