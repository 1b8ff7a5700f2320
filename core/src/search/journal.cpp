#include "orrery/host/search/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>

#include "orrery/atomic_file.h"
#include "orrery/error.h"

namespace fs = std::filesystem;

namespace orrery::search {
namespace {

// A descriptor closed on every path out, which also releases its flock.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string file_name_of(std::string id) {
  for (char& c : id)
    if (c == '/' || c == ':' || c == ' ') c = '-';
  return id;
}

}  // namespace

Journal::Journal(std::string dir) : dir_(std::move(dir)), path_(dir_ + "/journal.jsonl") {
  std::error_code ec;
  fs::create_directories(fs::path(dir_) / "workers", ec);
  if (ec) throw Error("cannot create the study folder " + dir_ + ": " + ec.message());
}

Journal::~Journal() {
  if (worker_fd_ >= 0) {
    std::error_code ec;
    fs::remove(fs::path(dir_) / "workers" / (file_name_of(worker_) + ".lock"), ec);
    ::close(worker_fd_);
  }
}

void Journal::catch_up(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error("cannot read " + path_ + ": " + std::strerror(errno));
  const long long size = st.st_size;
  if (size < offset_)
    throw Error(path_ + " became shorter while this study was open: it was replaced or edited, not appended to");
  if (size == offset_) return;
  std::string text(static_cast<size_t>(size - offset_), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::pread(fd, text.data() + got, text.size() - got, static_cast<off_t>(offset_ + static_cast<long long>(got)));
    if (n <= 0) throw Error("cannot read " + path_ + ": " + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = text.substr(start, end - start);
    if (line.empty()) continue;
    try {
      events_.push_back(Json::parse(line));
    } catch (const std::exception&) {
      throw Error(path_ + " line " + std::to_string(events_.size() + 1) +
                  " is not JSON: the journal was edited; restore it or start a new study");
    }
  }
  offset_ += static_cast<long long>(start);
  // What follows the last newline is a line a killed worker did not finish: never an event.
  // Only a lock holder gets here, so no one is writing it now; cut it so appends start clean.
  if (start < text.size() && ::ftruncate(fd, static_cast<off_t>(offset_)) != 0)
    throw Error("cannot cut the torn last line of " + path_ + ": " + std::strerror(errno));
}

void Journal::transact(const std::function<std::vector<Json>(const std::vector<Json>&)>& decide) {
  const bool created = !fs::exists(path_);
  Fd f{::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)};
  if (f.fd < 0) throw Error("cannot open " + path_ + ": " + std::strerror(errno));
  while (::flock(f.fd, LOCK_EX) != 0)
    if (errno != EINTR) throw Error("cannot lock " + path_ + ": " + std::strerror(errno));
  catch_up(f.fd);
  const std::vector<Json> add = decide(events_);
  if (add.empty()) return;
  std::string text;
  for (const Json& e : add) text += e.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::pwrite(f.fd, text.data() + done, text.size() - done, static_cast<off_t>(offset_ + static_cast<long long>(done)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("cannot append to " + path_ + ": " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  if (::fsync(f.fd) != 0) throw Error("cannot sync " + path_ + ": " + std::strerror(errno));
  if (created) sync_path(dir_);
  offset_ += static_cast<long long>(text.size());
  events_.insert(events_.end(), add.begin(), add.end());
  if (after_) after_(events_);
}

std::vector<Json> Journal::events() {
  transact([](const std::vector<Json>&) { return std::vector<Json>{}; });
  return events_;
}

const std::string& Journal::worker() {
  if (worker_fd_ >= 0) return worker_;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const auto started = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch()).count();
  // A random tag as well: two studies open in one process (or one millisecond) are two workers.
  std::random_device entropy;
  const std::string id = std::string(host) + ":" + std::to_string(::getpid()) + ":" + std::to_string(started) + ":" +
                         std::to_string(entropy() & 0xffffff);
  const std::string lock = dir_ + "/workers/" + file_name_of(id) + ".lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot create " + lock + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    throw Error("cannot lock " + lock + ": " + std::strerror(errno));
  }
  worker_fd_ = fd;
  worker_ = id;
  return worker_;
}

bool Journal::alive(const std::string& worker) const {
  if (worker == worker_) return true;
  const std::string lock = dir_ + "/workers/" + file_name_of(worker) + ".lock";
  Fd f{::open(lock.c_str(), O_RDWR | O_CLOEXEC)};
  if (f.fd < 0) return false;  // never created, or removed by its worker on a clean exit
  if (::flock(f.fd, LOCK_EX | LOCK_NB) == 0) {
    std::error_code ec;
    fs::remove(lock, ec);
    return false;
  }
  return true;  // held (EWOULDBLOCK), or no way to tell: a live worker's trial is never failed
}

}  // namespace orrery::search
