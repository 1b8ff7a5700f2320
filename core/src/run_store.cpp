#include "orrery/run_store.h"

#include <filesystem>

#include "orrery/atomic_file.h"
#include "orrery/error.h"
#include "orrery/events.h"

namespace fs = std::filesystem;

namespace orrery {

void write_json_file(const std::string& path, const Json& j) {
  write_file_atomically(path, [&](std::ostream& out) { out << j.dump(2) << "\n"; });
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
  write_json_file(dir_ + "/config.json", config);
  metrics_.open(dir_ + "/metrics.jsonl", std::ios::app);
  if (!metrics_) throw Error("cannot open " + dir_ + "/metrics.jsonl");
}

void RunStore::append_metrics(const Json& event) {
  const bool forecast = event_kind(event) == EventKind::forecast;
  if (forecast && !forecasts_.is_open()) {
    forecasts_.open(dir_ + "/forecasts.jsonl", std::ios::app);
    if (!forecasts_) throw Error("cannot open " + dir_ + "/forecasts.jsonl");
  }
  std::ofstream& out = forecast ? forecasts_ : metrics_;
  out << event.dump() << "\n";
  out.flush();  // readers (the dashboard) tail these files while the run goes on
}

void RunStore::write_summary(const Json& summary) { write_json("summary.json", summary); }

void RunStore::write_json(const std::string& file, const Json& j) const {
  write_json_file(dir_ + "/" + file, j);
}

}  // namespace orrery
