// orrery.data and the methods of a data object.
#include "orrery/host/lua_binding.h"


#include <ATen/ATen.h>

#include <cmath>

#include "orrery/host/data_mixture.h"
#include "orrery/data_source.h"
#include "orrery/host/process_group.h"
#include "orrery/host/registry.h"

namespace orrery {

DataArgument to_data(lua_State* L, int idx, const std::string& what) {
  idx = lua_absindex(L, idx);
  if (!luaL_testudata(L, idx, kDataMeta)) return {to_plugin_spec(L, idx, what), nullptr};
  DataArgument d;
  d.source = check_box<DataSource>(L, idx, kDataMeta, what);
  lua_getiuservalue(L, idx, 1);  // the plugin choice it was made from, as JSON text
  const Json j = Json::parse(lua_tostring(L, -1));
  lua_pop(L, 1);
  d.spec = PluginSpec{j["name"].get<std::string>(), j["options"]};
  return d;
}

namespace {

// A data object for `spec`'s `split`, remembering the spec (for errors and data:held_out) and the
// batches drawn so far.
int push_data(lua_State* L, const PluginSpec& spec, Split split) {
  DataContext context;  // a rank's share of the files, with shard_files
  context.split = split;
  context.interrupt = &host(L).interrupt;
  if (const ProcessGroup* w = host(L).world) context.rank = w->rank(), context.world_size = w->size();
  push_box(L, std::shared_ptr<DataSource>(make_data_source(host(L).registry, spec, context)), kDataMeta, 2);
  lua_pushstring(L, spec.to_json().dump().c_str());
  lua_setiuservalue(L, -2, 1);
  lua_pushinteger(L, 0);  // batches drawn so far: the next call's default seed
  lua_setiuservalue(L, -2, 2);
  return 1;
}

// orrery.data{"name", option = value} or orrery.data("name", {option = value})
int l_data(lua_State* L) {
  if (luaL_testudata(L, 1, kDataMeta)) throw Error("orrery.data takes a plugin choice, not a data object");
  PluginSpec spec;
  if (lua_type(L, 1) == LUA_TSTRING && !lua_isnoneornil(L, 2)) {  // orrery.data("name", {opts})
    spec.name = lua_tostring(L, 1);
    spec.options = lua_to_json(L, 2, "orrery.data options");
    if (!spec.options.is_object()) throw Error("orrery.data(name, options): options must be a table of name = value pairs");
  } else {
    spec = to_plugin_spec(L, 1, "orrery.data");
  }
  return push_data(L, spec, Split::train);
}

// data:sample([batch [, length [, seed]]]): a table [sample][variate][step], NaN where
// unobserved, and for a source that draws covariates their roles [sample][variate] (0 target,
// 1 past-only, 2 known-future covariate). Without a seed, successive calls draw successive
// batches (seeds 0, 1, ...).
int d_sample(lua_State* L) {
  auto data = check_box<DataSource>(L, 1, kDataMeta, "data:sample's self (call it with ':')");
  const int64_t batch = lua_isnoneornil(L, 2) ? 1 : to_integer(L, 2, "data:sample: batch");
  const int64_t length = lua_isnoneornil(L, 3) ? 256 : to_integer(L, 3, "data:sample: length");
  if (batch < 1 || length < 1 || batch > (int64_t{1} << 24) / length)
    throw Error("data:sample(batch, length) needs positive sizes of at most 2^24 values in all");
  lua_getiuservalue(L, 1, 2);
  const lua_Integer drawn = lua_tointeger(L, -1);
  lua_pop(L, 1);
  int64_t seed = drawn;
  if (!lua_isnoneornil(L, 4)) {
    seed = to_integer(L, 4, "data:sample: seed");
    if (seed < 0) throw Error("data:sample: seed must be a whole number >= 0, got " + std::to_string(seed));
  }
  lua_pushinteger(L, drawn + 1);
  lua_setiuservalue(L, 1, 2);
  Batch b = data->sample({batch, length, static_cast<uint64_t>(seed)});
  at::Tensor v = at::where(b.observed, b.values, at::full({}, std::nan(""), b.values.options()));
  v = v.to(at::kCPU, at::kDouble).contiguous();
  auto a = v.accessor<double, 3>();
  lua_createtable(L, static_cast<int>(a.size(0)), 0);
  for (int64_t i = 0; i < a.size(0); ++i) {
    lua_createtable(L, static_cast<int>(a.size(1)), 0);
    for (int64_t j = 0; j < a.size(1); ++j) {
      lua_createtable(L, static_cast<int>(a.size(2)), 0);
      for (int64_t t = 0; t < a.size(2); ++t) lua_pushnumber(L, a[i][j][t]), lua_rawseti(L, -2, t + 1);
      lua_rawseti(L, -2, j + 1);
    }
    lua_rawseti(L, -2, i + 1);
  }
  if (!b.roles.defined()) return 1;
  const at::Tensor roles = b.roles.to(at::kCPU).contiguous();
  const auto r = roles.accessor<int64_t, 2>();
  lua_createtable(L, static_cast<int>(r.size(0)), 0);
  for (int64_t i = 0; i < r.size(0); ++i) {
    lua_createtable(L, static_cast<int>(r.size(1)), 0);
    for (int64_t j = 0; j < r.size(1); ++j) lua_pushinteger(L, r[i][j]), lua_rawseti(L, -2, j + 1);
    lua_rawseti(L, -2, i + 1);
  }
  return 2;
}

// data:describe(): what the source holds or generates (files, series, families and weights).
int d_describe(lua_State* L) {
  auto data = check_box<DataSource>(L, 1, kDataMeta, "data:describe's self (call it with ':')");
  push_json(L, data->describe());
  return 1;
}

// The plugin a data object was made from, for errors.
std::string plugin_name(lua_State* L) {
  lua_getiuservalue(L, 1, 1);
  const std::string name = Json::parse(lua_tostring(L, -1))["name"];
  lua_pop(L, 1);
  return name;
}

// data:encode(text): the token ids of a text source for `text`, BOS first (a list of numbers).
int d_encode(lua_State* L) {
  auto data = check_box<DataSource>(L, 1, kDataMeta, "data:encode's self (call it with ':')");
  const std::string text = to_string(L, 2, "data:encode: text");
  at::Tensor ids;
  try {
    ids = data->encode_text(text).to(at::kCPU, at::kDouble).contiguous();
  } catch (const Error& e) {
    throw Error("data:encode: data plugin '" + plugin_name(L) + "': " + e.what());
  }
  lua_createtable(L, static_cast<int>(ids.numel()), 0);
  const double* p = ids.data_ptr<double>();
  for (int64_t i = 0; i < ids.numel(); ++i) lua_pushnumber(L, p[i]), lua_rawseti(L, -2, i + 1);
  return 1;
}

// data:decode(ids): the text a list of token ids stands for (special tokens by their names).
int d_decode(lua_State* L) {
  auto data = check_box<DataSource>(L, 1, kDataMeta, "data:decode's self (call it with ':')");
  const std::vector<double> ids = to_numbers(L, 2, "data:decode: ids");
  std::string text;
  try {
    text = data->decode_text(at::tensor(ids, at::kDouble));
  } catch (const Error& e) {
    throw Error("data:decode: data plugin '" + plugin_name(L) + "': " + e.what());
  }
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

// data:held_out(): the same plugin choice's validation split, what orrery.train validates on
// (the held-out documents or series of a source that stores them; a generator's draws).
int d_held_out(lua_State* L) {
  check_box<DataSource>(L, 1, kDataMeta, "data:held_out's self (call it with ':')");
  lua_getiuservalue(L, 1, 1);
  const Json j = Json::parse(lua_tostring(L, -1));
  lua_pop(L, 1);
  return push_data(L, PluginSpec{j["name"].get<std::string>(), j["options"]}, Split::validation);
}

}  // namespace

void open_data_library(lua_State* L, LuaHost& h) {
  static const luaL_Reg methods[] = {{"sample", ORRERY_LUA(d_sample)}, {"describe", ORRERY_LUA(d_describe)},
                                     {"encode", ORRERY_LUA(d_encode)}, {"decode", ORRERY_LUA(d_decode)},
                                     {"held_out", ORRERY_LUA(d_held_out)}, {nullptr, nullptr}};
  new_metatable(L, h, kDataMeta, gc_box<DataSource, kDataMeta>, methods, nullptr);
  static const luaL_Reg functions[] = {{"data", ORRERY_LUA(l_data)}, {nullptr, nullptr}};
  set_functions(L, h, functions);
}

}  // namespace orrery
