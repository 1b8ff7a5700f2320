#include "fuzz_support.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "orrery/host/file_tree.h"
#include "orrery/utf8.h"

namespace orrery::fuzz {
namespace {

// Removes the folder when the process exits normally (libFuzzer's -max_total_time, a replay);
// a crash leaves it behind in the temporary folder, next to the crashing input's report.
struct Folder {
  std::string path;
  Folder() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/orrery-fuzz-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create a folder in " + pattern);
    path = pattern;
  }
  ~Folder() {
    std::error_code ec;
    orrery::remove_tree(path, ec);
  }
};

}  // namespace

const std::string& scratch_dir() {
  static const Folder folder;
  return folder.path;
}

std::string write_input(const uint8_t* data, size_t size, const std::string& name) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
  return path;
}

void refused(const std::exception& e) {
  if (is_utf8(e.what())) return;
  std::fprintf(stderr, "an error message that is not UTF-8: %s\n", e.what());
  std::abort();
}

}  // namespace orrery::fuzz
