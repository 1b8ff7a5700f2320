#pragma once
#include <nlohmann/json.hpp>

namespace orrery {
// Options, configs, metrics events and plugin schemas are all JSON objects; Lua tables
// convert to and from it at the script boundary.
using Json = nlohmann::json;

// JSON text of `j` for a file: a string holding bytes that are not UTF-8 (a file name, a
// header cell, an error quoting them) is written with U+FFFD for each, never an exception
// halfway through a file. `indent` as Json::dump's (-1: one line).
inline std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}
}  // namespace orrery
