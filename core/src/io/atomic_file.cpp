#include "orrery/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "orrery/error.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

// This machine's name, so a temporary names its writer's host: on a shared disk a process id
// means something only on the machine that wrote it.
std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || !name[0]) return "localhost";
  std::string out = name;
  for (char& c : out)
    if (c == '/' || c == '.') c = '_';
  return out;
}

// Temporaries "<file>.tmp.<host>.<pid>" of this host beside `path` whose writer has died
// (killed mid-write): no one will rename them, so they are removed. A live process's
// temporary, or another host's, is left alone.
void remove_stale_temporaries(const fs::path& path, const std::string& host) {
  std::error_code ec;
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const std::string prefix = path.filename().string() + ".tmp." + host + ".";
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    fs::remove(entry.path(), ec);
  }
}

}  // namespace

void sync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open " + path + " to sync it to disk: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // Some file systems cannot sync a folder (EINVAL); their renames are as durable as they get.
  if (rc != 0 && err != EINVAL) throw Error("cannot sync " + path + " to disk: " + std::strerror(err));
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw Error("cannot write " + path + ": it is a folder");
  // A device, pipe or socket is not replaced by a regular file (as root, a rename over
  // /dev/full would do just that).
  if (fs::exists(fs::symlink_status(path, ec)) && !fs::is_regular_file(fs::symlink_status(path, ec)) &&
      !fs::is_symlink(fs::symlink_status(path, ec)))
    throw Error("cannot write " + path + ": it is not a regular file");
  const std::string host = host_name();
  remove_stale_temporaries(path, host);
  // A per-process temporary name: concurrent writers of one path never share a temporary.
  const std::string tmp = path + ".tmp." + host + "." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write " + path + ": " + std::strerror(errno));
    errno = 0;
    try {
      write(out);
    } catch (...) {  // a writer that fails (an unencodable value, a full disk) leaves nothing behind
      out.close();
      fs::remove(tmp, ec);
      throw;
    }
    if (!out.flush()) {
      const int err = errno;
      out.close();
      fs::remove(tmp, ec);
      throw Error("cannot write " + path + (err ? ": " + std::string(std::strerror(err)) : " (disk full?)"));
    }
  }
  // On disk before the rename, and the rename on disk before returning: after a power cut the
  // path holds the old bytes or the new ones, never an empty file.
  try {
    sync_path(tmp);
  } catch (const Error&) {
    fs::remove(tmp, ec);
    throw;
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    throw Error("cannot replace " + path + ": " + why);
  }
  const fs::path parent = fs::path(path).parent_path();
  sync_path(parent.empty() ? "." : parent.string());
}

}  // namespace orrery
