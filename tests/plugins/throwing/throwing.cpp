// A data plugin whose factory throws what its option `what` says: an orrery::Error (a message
// for the user, passed on as it is), a std::logic_error (a plugin bug), or an int, which is no
// std::exception at all. The host must name the plugin and its file for the last two.
#include <stdexcept>

#include "orrery/error.h"
#include "orrery/plugin.h"

namespace {
using namespace orrery;

OptionSchema schema() {
  return OptionSchema{}.string("what", "std", "what the factory throws", {"error", "std", "other"});
}

std::unique_ptr<DataSource> make(const Json& options, const DataContext&) {
  const std::string what = options["what"];
  if (what == "error") throw Error("data plugin 'throwing': option what = \"error\" asks for this error");
  if (what == "std") throw std::logic_error("vector::_M_range_check: __n (which is 3) >= this->size() (which is 3)");
  throw 42;
}

}  // namespace

ORRERY_PLUGIN(data, "throwing", "0.1.0", "a test fixture whose factory throws", schema, make)
