// The safetensors reader on any bytes: a file either loads or is refused with an orrery::Error
// naming the file. A file that loads must survive a round trip: saved again and reloaded, it
// holds the same tensors (names, dtypes, shapes, bytes) and metadata.
//
// An input is the file as it is, except one that starts with '{': that is the JSON header, then
// a NUL byte and the data, and the harness writes the 8-byte header length itself, so that
// mutations of the header's JSON reach the checks behind the length (whose mismatch would
// refuse almost every one of them first).
#include <ATen/ATen.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz_support.h"
#include "orrery/error.h"
#include "orrery/safetensors.h"

namespace {

bool same(const orrery::SafetensorsFile& a, const orrery::SafetensorsFile& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const auto& [na, ta] = a.tensors[i];
    const auto& [nb, tb] = b.tensors[i];
    // Bytes, not values: a BOOL tensor may hold any byte, and NaN != NaN.
    if (na != nb || ta.scalar_type() != tb.scalar_type() || ta.sizes() != tb.sizes() ||
        (ta.nbytes() > 0 && std::memcmp(ta.data_ptr(), tb.data_ptr(), ta.nbytes()) != 0))
      return false;
  }
  return true;
}

// The input as a file: as it is, or (starting with '{') header, NUL, data with the length added.
std::string file_of(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  if (input.empty() || input[0] != '{') return input;
  const size_t nul = std::min(input.find('\0'), input.size());
  const uint64_t n = nul;  // little-endian, as the format says (and as this machine is)
  std::string file(reinterpret_cast<const char*>(&n), 8);
  file += input.substr(0, nul);
  if (nul < input.size()) file += input.substr(nul + 1);
  return file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes = file_of(data, size);
  const std::string path =
      orrery::fuzz::write_input(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "input.safetensors");
  try {
    orrery::read_safetensors_metadata(path);
  } catch (const orrery::Error& e) {
    orrery::fuzz::refused(e);
  }
  orrery::SafetensorsFile file;
  try {
    file = orrery::load_safetensors(path);
  } catch (const orrery::Error& e) {
    orrery::fuzz::refused(e);
    return 0;
  }
  const std::string again = orrery::fuzz::scratch_dir() + "/again.safetensors";
  orrery::save_safetensors(again, file.tensors, file.metadata);
  if (!same(file, orrery::load_safetensors(again))) std::abort();  // the round trip lost something
  return 0;
}
