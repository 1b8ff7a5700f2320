#pragma once
#include <nlohmann/json.hpp>

namespace orrery {
// Options, configs, metrics events and plugin schemas are all JSON objects; Lua tables
// convert to and from it at the script boundary.
using Json = nlohmann::json;
}  // namespace orrery
