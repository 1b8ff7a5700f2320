// Option validation on any JSON document: OptionSchema::validate either returns the options
// with defaults filled in or throws an orrery::Error naming the option. The first byte picks
// the schema: the trainer's (then also TrainConfig::from_json, which reads the schedules), the
// csv data plugin's, or one with every option type, range and choice list. What validate
// returns must validate again to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "file_source.h"
#include "fuzz_support.h"
#include "orrery/error.h"
#include "orrery/options.h"
#include "orrery/host/trainer.h"

namespace {
using orrery::Json;
using orrery::OptionSchema;

const OptionSchema& every_type() {
  static const OptionSchema s = OptionSchema{}
                                    .integer("count", 3, "an int in a range", 1, 1 << 20)
                                    .integer("seed", 0, "an int with a floor only", 0)
                                    .integer("offset", -5, "an int, any")
                                    .number("rate", 0.5, "a number in [0, 1]", 0.0, 1.0)
                                    .number("scale", 1.0, "a number, any")
                                    .boolean("flag", false, "a bool")
                                    .string("kind", "a", "a choice", {"a", "bb", "ccc"})
                                    .string("name", "", "a string")
                                    .number_list("levels", {0.1, 0.5, 0.9}, "numbers")
                                    .table("schedule", "a table")
                                    .list("sources", "a list")
                                    .strings("files", "x.csv", "strings");
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const Json user = Json::parse(data + 1, data + size, nullptr, /*allow_exceptions=*/false);
  if (user.is_discarded()) return 0;  // not JSON: the parser's business, not validate's
  static const OptionSchema csv = orrery::data::file_source_schema("a CSV", "csv");
  const int pick = data[0] % 3;
  const OptionSchema& schema = pick == 0 ? orrery::TrainConfig::schema() : pick == 1 ? csv : every_type();
  Json valid;
  try {
    valid = schema.validate(user, "fuzz", {"also_known"});
  } catch (const orrery::Error& e) {
    orrery::fuzz::refused(e);
    return 0;
  }
  if (schema.validate(valid, "fuzz") != valid) std::abort();  // validating twice changed the options
  if (pick == 0) {
    try {
      orrery::TrainConfig::from_json(user);
    } catch (const orrery::Error& e) {
      orrery::fuzz::refused(e);
    }
  }
  return 0;
}
