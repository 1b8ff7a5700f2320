// The parquet data plugin's reader (Parquet, Arrow IPC files and streams) on any bytes: a file
// either reads as series or is refused with an orrery::Error naming the file. The first byte
// picks the options (layout, time format, multivariate, rows per batch); the rest is the file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "arrow_reader.h"
#include "fuzz_support.h"
#include "orrery/error.h"

// Arrow allocates what a damaged header claims before it reads that much, and turns a failed
// malloc into an error status: let malloc fail as it does outside ASan (which would abort).
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Arrow's own allocator (jemalloc or mimalloc in the wheel) hides overflows from ASan.
  ::setenv("ARROW_DEFAULT_MEMORY_POOL", "system", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t a = data[0];
  static const char* const kLayouts[] = {"auto", "wide", "long", "auto"};
  static const char* const kFormats[] = {"iso", "unix", "year", "iso"};
  orrery::Json o = orrery::Json::object();
  o["layout"] = kLayouts[a & 3];
  o["timestamp_format"] = kFormats[(a >> 2) & 3];
  o["multivariate"] = (a & 16) != 0;
  if (a & 32) o["batch_rows"] = 3;
  if (a & 64) o["buffer_bytes"] = 64;
  if (a & 128) o["timestamp"] = "none";
  const std::string path = orrery::fuzz::write_input(data + 1, size - 1, "input.parquet");
  std::ostringstream values;
  try {
    orrery::data::read_arrow_file(path, o, values, orrery::fuzz::scratch_dir());
  } catch (const orrery::Error& e) {
    orrery::fuzz::refused(e);  // the contract; any other exception escapes: a crash
  }
  return 0;
}
