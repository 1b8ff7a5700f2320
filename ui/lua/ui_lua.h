#pragma once
// The dashboard's Lua functions, orrery.plot and orrery.ui, added by the `orrery` program to
// every session it opens (so the core library needs nothing from the dashboard).
#include "orrery/host/lua_session.h"

namespace orrery::ui {
void open_lua_library(lua_State* L, LuaHost& host);
}  // namespace orrery::ui
