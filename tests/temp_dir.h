#pragma once
// A test's own folder under the temporary folder, removed when the test program exits: every
// program's models, caches and runs would otherwise pile up over a whole `make test`, on CI
// machines whose disk may be small. ORRERY_KEEP_TEST_DIRS=1 keeps them to look at; a crashed
// program leaves its own behind.
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "orrery/host/file_tree.h"

namespace test {

struct TempDirs {
  std::vector<std::string> made;
  pid_t owner = ::getpid();  // a forked child that exits leaves them to its parent
  ~TempDirs() {
    if (std::getenv("ORRERY_KEEP_TEST_DIRS") || ::getpid() != owner) return;
    for (const auto& dir : made) {
      std::error_code ec;
      orrery::remove_tree(dir, ec);
    }
  }
};

// TMPDIR/orrery-test-NAME-PID, created empty.
inline std::string temp_dir(const std::string& name) {
  static TempDirs dirs;
  std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                    "/orrery-test-" + name + "-" + std::to_string(::getpid());
  std::string cmd = "rm -rf '" + dir + "' && mkdir -p '" + dir + "'";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("cannot create " + dir);
  dirs.made.push_back(dir);
  return dir;
}

}  // namespace test
