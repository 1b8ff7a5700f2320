#pragma once
#include <istream>

#include "orrery/json.h"

namespace orrery {
// JSON text parsed as nlohmann does, except that an object naming a key twice is an error
// (nlohmann keeps the last silently): orrery::Error, which the caller prefixes with the file's
// name. Malformed text throws Json::exception, as Json::parse does.
Json parse_json_unique_keys(std::istream& in);
}  // namespace orrery
