// Lua values to JSON on any Lua chunk: the chunk runs in a fresh, bare lua_State (base, table
// and math libraries, no files) with a memory limit and an instruction budget, and what it
// returns goes through lua_to_json, which either gives JSON or throws an orrery::Error naming
// the value. The JSON must then print, convert back to Lua (push_json) and be checked against
// the trainer's options as orrery.train does, each either working or refused with an
// orrery::Error.
#include <lua.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_support.h"
#include "orrery/error.h"
#include "orrery/host/lua_session.h"
#include "orrery/host/trainer.h"

namespace {

constexpr size_t kMemoryLimit = 64 << 20;  // bytes the chunk may hold, so string growth is an error, not an OOM
constexpr int kInstructions = 1 << 20;     // VM instructions the chunk may run, so a loop ends

struct Memory {
  size_t used = 0;
  bool limited = true;  // off once the chunk has run: the conversion must not hit Lua errors
};

void* allocate(void* ud, void* ptr, size_t old_size, size_t new_size) {
  auto* m = static_cast<Memory*>(ud);
  if (!ptr) old_size = 0;  // old_size is a type tag for new blocks
  if (new_size == 0) {
    m->used -= old_size;
    std::free(ptr);
    return nullptr;
  }
  if (m->limited && new_size > old_size && m->used + (new_size - old_size) > kMemoryLimit) return nullptr;
  void* p = std::realloc(ptr, new_size);
  if (p) m->used = m->used - old_size + new_size;
  return p;
}

// Past the budget, every instruction raises an error, so pcall in the chunk cannot loop on.
void out_of_instructions(lua_State* L, lua_Debug*) {
  lua_sethook(L, out_of_instructions, LUA_MASKCOUNT, 1);
  luaL_error(L, "instruction budget spent");
}

void open_bare_libraries(lua_State* L) {
  luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
  luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
  luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
  lua_pop(L, 3);
  // No files, no output, no `load` (Lua does not check binary chunks, by design) and no
  // `setmetatable`: Lua runs __gc metamethods with hooks off, so a loop in one never ends.
  for (const char* name : {"dofile", "loadfile", "load", "print", "warn", "setmetatable"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
}

void convert(lua_State* L) {
  orrery::Json j;
  try {
    j = orrery::lua_to_json(L, -1, "the chunk's value");
  } catch (const orrery::Error& e) {
    orrery::fuzz::refused(e);
    return;
  }
  j.dump();  // JSON that cannot print (say, invalid UTF-8) would fail later, far from its cause
  orrery::push_json(L, j);
  try {
    orrery::lua_to_json(L, -1, "the value pushed back");
  } catch (const orrery::Error& e) {
    orrery::fuzz::refused(e);
  }
  lua_pop(L, 1);
  try {
    orrery::TrainConfig::from_json(j, "fuzz");
  } catch (const orrery::Error& e) {
    orrery::fuzz::refused(e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Memory memory;
  lua_State* L = lua_newstate(allocate, &memory);
  if (!L) return 0;
  open_bare_libraries(L);
  lua_sethook(L, out_of_instructions, LUA_MASKCOUNT, kInstructions);
  const std::string chunk(reinterpret_cast<const char*>(data), size);
  // Text only ("t"): Lua's binary chunks are not checked and can crash the VM by design.
  if (luaL_loadbufferx(L, chunk.data(), chunk.size(), "=fuzz", "t") == LUA_OK && lua_pcall(L, 0, 1, 0) == LUA_OK) {
    memory.limited = false;
    lua_sethook(L, nullptr, 0, 0);
    convert(L);
  }
  lua_close(L);
  return 0;
}
