#include "orrery/atomic_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "orrery/error.h"

namespace orrery {

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  // A per-process temporary name: concurrent writers of one path never share a temporary.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write " + tmp);
    write(out);
    if (!out.flush()) {
      out.close();
      std::filesystem::remove(tmp, ec);
      throw Error("cannot write " + path + " (disk full?)");
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error("cannot replace " + path + ": " + ec.message());
  }
}

}  // namespace orrery
