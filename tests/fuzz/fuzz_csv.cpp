// The csv data plugin's reader on any bytes: a file either reads as series or is refused with
// an orrery::Error naming the file and line. The first two bytes pick the options, so one
// corpus covers the wide and long layouts, the three time formats, multivariate series, rows
// cut by tiny read chunks, and rows spilled to the temporary file by a tiny memory budget.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "csv_reader.h"
#include "fuzz_support.h"
#include "orrery/error.h"

namespace {
using orrery::Json;

Json options(uint8_t a, uint8_t b) {
  static const char* const kLayouts[] = {"auto", "wide", "long", "auto"};
  static const char* const kFormats[] = {"iso", "unix", "year", "iso"};
  static const char* const kFrequencies[] = {"", "", "D", "H", "M", "B", "10S", "W"};
  Json o = Json::object();
  o["layout"] = kLayouts[a & 3];
  o["timestamp_format"] = kFormats[(a >> 2) & 3];
  o["multivariate"] = (a & 16) != 0;
  if (a & 32) o["chunk_bytes"] = 1 + (b & 15);
  if (a & 64) o["buffer_bytes"] = 64;
  if (a & 128) o["timestamp"] = "none";
  o["frequency"] = kFrequencies[(b >> 4) & 7];
  if (b & 128) o[o["layout"] == "long" ? "value" : "columns"] = "v, w";
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const Json o = options(data[0], data[1]);
  const std::string path = orrery::fuzz::write_input(data + 2, size - 2, "input.csv");
  std::ostringstream values;
  try {
    orrery::data::read_csv(path, o, values, orrery::fuzz::scratch_dir());
  } catch (const orrery::Error& e) {
    orrery::fuzz::refused(e);  // the contract; any other exception escapes: a crash
  }
  return 0;
}
