#include "cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "orrery/atomic_file.h"
#include "orrery/error.h"
#include "orrery/utf8.h"

namespace fs = std::filesystem;

namespace orrery::data {
namespace {

// 2: the file's state includes its inode and ctime; 3: series count their covariates; 4: an entry
// names its static covariates' categories; 5: untimed series carry a given frequency.
constexpr int kCacheVersion = 5;

std::string hex(uint64_t v, int digits) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return std::string(buf + 16 - digits);
}

// What says a file is the one a cache entry was built from. Size and modification time alone
// are not enough: a file rewritten with its size kept and its time set back (touch -d, rsync -t,
// an editor restoring it) would be read from the stale cache. The status-change time cannot be
// set back by a user, and the inode changes when a file is replaced by another.
struct Identity {
  std::string path;  // absolute, symbolic links resolved
  uint64_t size = 0, inode = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  Json state() const { return {{"size", size}, {"mtime_ns", mtime_ns}, {"ctime_ns", ctime_ns}, {"inode", inode}}; }
};

Identity identify(const std::string& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) throw Error("cannot read " + file + ": " + std::strerror(errno));
  std::error_code ec;
  const fs::path canonical = fs::canonical(file, ec);
  const auto ns = [](const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; };
  return {ec ? fs::absolute(file).string() : canonical.string(), static_cast<uint64_t>(st.st_size),
          static_cast<uint64_t>(st.st_ino), ns(st.st_mtim), ns(st.st_ctim)};
}

bool writable_folder(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  return fs::is_directory(dir, ec) && ::access(dir.c_str(), W_OK | X_OK) == 0;
}

// An exclusive flock, released when destroyed.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw Error("cannot create the cache lock " + path + ": " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) throw Error("cannot lock " + path + ": " + std::strerror(errno));
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

// The stored entry, when its index describes this very file and content and its values file
// is whole; anything unreadable is simply rebuilt.
std::optional<CacheEntry> load(const std::string& index_path, const std::string& folder, const Identity& id,
                               const Json& content) {
  std::ifstream in(index_path, std::ios::binary);
  if (!in) return std::nullopt;
  try {
    const Json j = Json::parse(in);
    if (j.at("orrery_cache").get<int>() != kCacheVersion || j.at("source").get<std::string>() != valid_utf8(id.path) ||
        j.at("state") != id.state() || j.at("content") != content)
      return std::nullopt;
    CacheEntry e;
    e.source = id.path;
    e.index_path = index_path;
    e.values_path = folder + "/" + j.at("values").get<std::string>();
    std::error_code ec;
    if (fs::file_size(e.values_path, ec) != j.at("values_bytes").get<uint64_t>() || ec) return std::nullopt;
    e.rows = j.at("rows").get<int64_t>();
    e.dropped = j.at("dropped").get<int64_t>();
    for (const auto& s : j.at("series")) e.series.push_back(SeriesInfo::from_json(s));
    if (j.contains("static_categories")) e.static_categories = j["static_categories"].get<decltype(e.static_categories)>();
    e.reused = true;
    return e;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Removes a temporary unless released: a failed build leaves nothing behind.
struct TempFile {
  std::string path;
  bool keep = false;
  ~TempFile() {
    std::error_code ec;
    if (!keep) fs::remove(path, ec);
  }
};

}  // namespace

uint64_t stable_hash(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string cache_folder(const std::string& option, const std::string& first_file) {
  if (!option.empty()) {
    if (!writable_folder(option)) throw Error("cannot write the cache folder " + option + " (option cache_dir)");
    return option;
  }
  const fs::path beside = fs::absolute(first_file).parent_path() / ".orrery-cache";
  if (writable_folder(beside)) return beside.string();
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path user = xdg && *xdg ? fs::path(xdg) / "orrery" : home && *home ? fs::path(home) / ".cache" / "orrery" : fs::path();
  if (!user.empty() && writable_folder(user)) return user.string();
  throw Error("no writable cache folder: neither " + beside.string() + " nor " +
              (user.empty() ? std::string("$XDG_CACHE_HOME/orrery") : user.string()) + "; set option cache_dir");
}

CacheEntry cached(const std::string& folder, const std::string& file, const Json& content, const BuildFn& build) {
  const Identity id = identify(file);
  // The cache's own file names are text too (the index names its values file).
  const std::string name = valid_utf8(fs::path(id.path).filename().string());
  const std::string stem = name + "." + hex(stable_hash(id.path + "\n" + json_text(content)), 16);
  const std::string index_path = folder + "/" + stem + ".json";
  FileLock lock(folder + "/" + stem + ".lock");
  if (auto e = load(index_path, folder, id, content)) return *e;

  // Values named by the file's state, so an index never points at another build's values.
  const std::string values_name =
      stem + "." + hex(stable_hash(id.state().dump()), 8) + ".f32";
  const std::string values_path = folder + "/" + values_name;
  TempFile tmp{values_path + ".tmp." + std::to_string(::getpid())};
  BuildResult result;
  {
    std::ofstream out(tmp.path, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write the cache file " + tmp.path + ": " + std::strerror(errno));
    result = build(out, folder);
    if (!out.flush()) throw Error("cannot write the cache file " + tmp.path + " (disk full?)");
  }
  std::error_code ec;
  const uint64_t bytes = fs::file_size(tmp.path, ec);
  fs::rename(tmp.path, values_path, ec);
  if (ec) throw Error("cannot store the cache file " + values_path + ": " + ec.message());
  tmp.keep = true;

  CacheEntry e;
  e.source = id.path;
  e.index_path = index_path;
  e.values_path = values_path;
  e.series = std::move(result.series);
  e.rows = result.rows;
  e.dropped = result.dropped;
  e.static_categories = std::move(result.static_categories);
  Json series = Json::array();
  for (const auto& s : e.series) series.push_back(s.to_json());
  Json index = {{"orrery_cache", kCacheVersion}, {"source", valid_utf8(id.path)},
                      {"state", id.state()},           {"content", content},     {"values", values_name},
                      {"values_bytes", bytes},         {"rows", e.rows},         {"dropped", e.dropped},
                      {"series", series}};
  if (!e.static_categories.empty()) index["static_categories"] = e.static_categories;
  write_file_atomically(index_path, [&](std::ostream& out) { out << json_text(index, 1); });
  // Values of earlier states of the file are no longer referenced.
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string n = entry.path().filename().string();
    if (n != values_name && n.starts_with(stem + ".") && n.ends_with(".f32")) fs::remove(entry.path(), ec);
  }
  return e;
}

}  // namespace orrery::data
