// `orrery repl`: the Lua API interactively, modelled on lua.c. Expressions print their values
// (a leading '=' works too), incomplete input continues on the next line, history persists in
// ~/.orrery_history, Tab completes globals, table fields and methods from the live state (so it
// offers exactly the API that exists), and Ctrl-C interrupts a running call, not the REPL.
#include <lua.hpp>
#include <readline/history.h>
#include <readline/readline.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "orrery/host/lua_session.h"

namespace orrery {
namespace {

lua_State* g_state = nullptr;

const char* const kKeywords[] = {"and", "break", "do", "else", "elseif", "end", "false", "for",
                                 "function", "goto", "if", "in", "local", "nil", "not", "or",
                                 "repeat", "return", "then", "true", "until", "while"};

// Pretty printer for results: nested tables up to three levels, long lists shortened.
const char* const kShow = R"lua(
local function show(v, depth)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) ~= "table" then return tostring(v) end
  if getmetatable(v) and getmetatable(v).__tostring then return tostring(v) end
  if depth > 2 then return "{...}" end
  local parts, len = {}, #v
  for i = 1, math.min(len, 10) do parts[#parts + 1] = show(v[i], depth + 1) end
  if len > 10 then parts[#parts + 1] = "... " .. len .. " items" end
  local keys = {}
  for k in pairs(v) do
    if not (math.type(k) == "integer" and k >= 1 and k <= len) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for i, k in ipairs(keys) do
    if i > 24 then parts[#parts + 1] = "..."; break end
    local name = type(k) == "string" and k:match("^[%a_][%w_]*$") and k or "[" .. show(k, 3) .. "]"
    parts[#parts + 1] = name .. " = " .. show(v[k], depth + 1)
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end
return function(...)
  local out = {}
  for i = 1, select("#", ...) do out[i] = show((select(i, ...)), 0) end
  print(table.concat(out, "\t"))
end
)lua";

// Keys of the value at `path` ("orrery", "m"), including methods reached through __index.
std::vector<std::string> keys_at(lua_State* L, const std::string& path) {
  std::vector<std::string> keys;
  lua_pushglobaltable(L);
  size_t start = 0;
  while (start < path.size()) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!lua_istable(L, -1)) break;
    lua_pushstring(L, part.c_str());
    lua_rawget(L, -2);  // raw: completion must never run a metamethod that could raise
    lua_remove(L, -2);
    start = dot == std::string::npos ? path.size() : dot + 1;
  }
  for (int pass = 0; pass < 2; ++pass) {
    if (lua_istable(L, -1)) {
      lua_pushnil(L);
      while (lua_next(L, -2)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING) keys.push_back(lua_tostring(L, -1));
      }
    }
    if (pass == 0) {  // then the __index table of its metatable (userdata methods)
      if (!lua_getmetatable(L, -1)) break;
      lua_pushstring(L, "__index");
      lua_rawget(L, -2);
      lua_remove(L, -2);
      lua_remove(L, -2);
    }
  }
  lua_pop(L, 1);
  return keys;
}

std::vector<std::string> g_matches;
size_t g_next = 0;

char* generator(const char* text, int state) {
  if (state == 0) {
    g_matches.clear();
    g_next = 0;
    std::string word = text;
    size_t sep = word.find_last_of(".:");
    std::string base = sep == std::string::npos ? "" : word.substr(0, sep);
    std::string head = sep == std::string::npos ? "" : word.substr(0, sep + 1);
    std::string prefix = sep == std::string::npos ? word : word.substr(sep + 1);
    std::vector<std::string> names = keys_at(g_state, base);
    if (base.empty()) names.insert(names.end(), std::begin(kKeywords), std::end(kKeywords));
    for (const auto& n : names)
      if (n.rfind(prefix, 0) == 0 && (n.size() < 2 || n.substr(0, 2) != "__"))
        g_matches.push_back(head + n);
    std::sort(g_matches.begin(), g_matches.end());
    g_matches.erase(std::unique(g_matches.begin(), g_matches.end()), g_matches.end());
  }
  return g_next < g_matches.size() ? strdup(g_matches[g_next++].c_str()) : nullptr;
}

char** complete(const char* text, int, int) {
  rl_attempted_completion_over = 1;  // never fall back to file names
  return rl_completion_matches(text, generator);
}

void on_prompt_sigint(int) {  // Ctrl-C at the prompt: drop the line, keep the REPL
  rl_replace_line("", 0);
  std::printf("\n");
  rl_on_new_line();
  rl_redisplay();
}

std::string history_path() {
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.orrery_history";
}

bool incomplete(lua_State* L, int status) {
  if (status != LUA_ERRSYNTAX) return false;
  std::string msg = lua_tostring(L, -1);
  return msg.size() >= 5 && msg.substr(msg.size() - 5) == "<eof>";
}

}  // namespace

int LuaSession::repl() {
  g_state = L_;
  static char breaks[] = " \t\n\"'`@$><=;|&{(,+-*/%^#~[]";
  rl_completer_word_break_characters = breaks;
  rl_attempted_completion_function = complete;
  rl_readline_name = "orrery";
  const std::string hist = history_path();
  { std::ofstream touch(hist, std::ios::app); }
  read_history(hist.c_str());

  if (luaL_loadstring(L_, kShow) != LUA_OK || lua_pcall(L_, 0, 1, 0) != LUA_OK) return 1;
  const int show = luaL_ref(L_, LUA_REGISTRYINDEX);

  std::printf("Orrery %s REPL. The API is the `orrery` table (docs/lua.md). Tab completes, "
              "=expr prints, Ctrl-C interrupts, Ctrl-D exits.\n", "0.1.0");
  std::string buffer;
  for (;;) {
    auto previous = std::signal(SIGINT, on_prompt_sigint);
    char* raw = readline(buffer.empty() ? "orrery> " : "   ...> ");
    std::signal(SIGINT, previous);
    if (!raw) break;  // Ctrl-D
    std::string line = raw;
    std::free(raw);
    if (buffer.empty() && line.find_first_not_of(" \t") == std::string::npos) continue;
    buffer += (buffer.empty() ? "" : "\n") + line;

    std::string code = buffer[0] == '=' ? "return " + buffer.substr(1) : buffer;
    // First as an expression whose values are printed, then as a statement.
    int status = luaL_loadbuffer(L_, ("return " + code).c_str(), code.size() + 7, "=stdin");
    if (status != LUA_OK) {
      lua_pop(L_, 1);
      status = luaL_loadbuffer(L_, code.c_str(), code.size(), "=stdin");
    }
    if (incomplete(L_, status)) {
      lua_pop(L_, 1);
      continue;  // wait for the rest of a multi-line statement
    }
    add_history(buffer.c_str());
    append_history(1, hist.c_str());
    buffer.clear();
    if (status == LUA_OK) {
      const int base = lua_gettop(L_);
      status = call(0, LUA_MULTRET);
      const int n = lua_gettop(L_) - base + 1;
      if (status == LUA_OK && n > 0) {
        lua_pushvalue(L_, base);
        lua_setglobal(L_, "_");  // the last result, as in trepl
        lua_rawgeti(L_, LUA_REGISTRYINDEX, show);
        lua_insert(L_, base);
        status = lua_pcall(L_, n, 0, 0);
      }
    }
    if (status != LUA_OK) {
      std::fprintf(stderr, "%s\n", lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "error");
      lua_pop(L_, 1);
    }
    std::fflush(stdout);
  }
  history_truncate_file(hist.c_str(), 2000);
  std::printf("\n");
  return 0;
}

}  // namespace orrery
