#include <set>
#include <string>
#include <vector>

#include "orrery/error.h"
#include "orrery/json_unique_keys.h"

namespace orrery {

Json parse_json_unique_keys(std::istream& in) {
  // The keys seen in each object still open, innermost last.
  std::vector<std::set<std::string>> open;
  const Json::parser_callback_t check = [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) open.emplace_back();
    else if (event == Json::parse_event_t::object_end) open.pop_back();
    else if (event == Json::parse_event_t::key && !open.back().insert(parsed.get<std::string>()).second)
      throw Error("the key " + quote_input(parsed.get<std::string>()) + " is given twice in one object");
    return true;
  };
  return Json::parse(in, check);
}

}  // namespace orrery
