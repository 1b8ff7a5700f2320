#include "orrery/host/run_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "orrery/atomic_file.h"
#include "orrery/error.h"
#include "orrery/host/events.h"

namespace fs = std::filesystem;

namespace orrery {

void write_json_file(const std::string& path, const Json& j) {
  write_file_atomically(path, [&](std::ostream& out) { out << json_text(j, 2) << "\n"; });
}

Json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open " + path + ": " + std::strerror(errno));
  try {
    return Json::parse(in);
  } catch (const std::exception& e) {
    throw Error(path + ": not valid JSON: " + e.what());
  }
}

std::string claim_run_dir(const std::string& runs_dir, const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    throw Error("run name '" + name + "' must be a plain folder name");
  std::error_code ec;
  fs::create_directories(runs_dir, ec);
  if (ec) throw Error("cannot create runs folder " + runs_dir + ": " + ec.message());
  // Claim a fresh folder: create_directory fails if it exists, so concurrent runs never share.
  for (int i = 0;; ++i) {
    fs::path p = fs::path(runs_dir) / (i ? name + "-" + std::to_string(i) : name);
    if (fs::create_directory(p, ec)) return p.string();
    if (ec) throw Error("cannot create run folder " + p.string() + ": " + ec.message());
  }
}

RunStore::RunStore(const std::string& runs_dir, const std::string& name, const Json& config)
    : dir_(claim_run_dir(runs_dir, name)) {
  lock();
  write_json_file(dir_ + "/config.json", config);
  metrics_.open(dir_ + "/metrics.jsonl", std::ios::app);
  if (!metrics_) throw Error("cannot open " + dir_ + "/metrics.jsonl");
}

RunStore::RunStore(const std::string& dir) : dir_(dir) { lock(); }

void RunStore::cut_back(int64_t metrics_bytes, int64_t forecasts_bytes) {
  auto cut = [&](const std::string& file, int64_t bytes) {
    const fs::path p = fs::path(dir_) / file;
    std::error_code ec;
    const auto have = fs::exists(p, ec) ? static_cast<int64_t>(fs::file_size(p, ec)) : int64_t{0};
    if (have < bytes)
      throw Error(p.string() + " has " + std::to_string(have) + " bytes, fewer than the " + std::to_string(bytes) +
                  " its checkpoint recorded: it was changed since, so the run cannot go on from there");
    if (have > bytes) fs::resize_file(p, static_cast<uintmax_t>(bytes), ec);
    if (ec) throw Error("cannot cut " + p.string() + " back to its checkpoint: " + ec.message());
  };
  cut("metrics.jsonl", metrics_bytes);
  cut("forecasts.jsonl", forecasts_bytes);
  std::error_code ec;
  fs::remove(fs::path(dir_) / "summary.json", ec);
  metrics_.open(dir_ + "/metrics.jsonl", std::ios::app);
  if (!metrics_) throw Error("cannot open " + dir_ + "/metrics.jsonl");
  if (forecasts_bytes > 0) {
    forecasts_.open(dir_ + "/forecasts.jsonl", std::ios::app);
    if (!forecasts_) throw Error("cannot open " + dir_ + "/forecasts.jsonl");
  }
}

RunStore::Lock::~Lock() {
  if (fd >= 0) ::close(fd);
}

void RunStore::lock() {
  const std::string path = dir_ + "/.lock";
  lock_.fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_.fd < 0) throw Error("cannot write in run folder " + dir_ + ": " + std::strerror(errno));
  if (::flock(lock_.fd, LOCK_EX | LOCK_NB) != 0)
    throw Error("run folder " + dir_ + " is in use: another process is training this run");
}

int64_t RunStore::metrics_bytes() const {
  std::error_code ec;
  const auto n = fs::file_size(fs::path(dir_) / "metrics.jsonl", ec);
  return ec ? 0 : static_cast<int64_t>(n);
}

int64_t RunStore::forecasts_bytes() const {
  std::error_code ec;
  const auto n = fs::file_size(fs::path(dir_) / "forecasts.jsonl", ec);
  return ec ? 0 : static_cast<int64_t>(n);
}

void RunStore::append_metrics(const Json& event) {
  if (!metrics_.is_open()) throw Error("run " + dir_ + ": an event before the run was cut back to its checkpoint");
  const bool forecast = event_kind(event) == EventKind::forecast;
  if (forecast && !forecasts_.is_open()) {
    forecasts_.open(dir_ + "/forecasts.jsonl", std::ios::app);
    if (!forecasts_) throw Error("cannot open " + dir_ + "/forecasts.jsonl");
  }
  std::ofstream& out = forecast ? forecasts_ : metrics_;
  out << json_text(event) << "\n";
  out.flush();  // readers (the dashboard) tail these files while the run goes on
}

void RunStore::write_summary(const Json& summary) { write_json("summary.json", summary); }

void RunStore::write_json(const std::string& file, const Json& j) const {
  write_json_file(dir_ + "/" + file, j);
}

}  // namespace orrery
