#pragma once
// runs/<name>/: config.json, metrics.jsonl (one event per line, flushed as it happens),
// forecasts.jsonl (the forecast snapshots, likewise; created with the first one) and
// summary.json. An existing run is never overwritten: a taken name gets a numeric suffix.
// JSON files are written to a temporary name and renamed, so a crash never leaves half a file.
#include <fstream>
#include <string>

#include "orrery/json.h"

namespace orrery {

class RunStore {
 public:
  RunStore(const std::string& runs_dir, const std::string& name, const Json& config);
  const std::string& dir() const { return dir_; }
  // Appends one event as a line: {"event": "forecast", ...} to forecasts.jsonl (opened on first
  // use), every other event to metrics.jsonl. Flushed per line: the dashboard tails both files.
  void append_metrics(const Json& event);
  void write_summary(const Json& summary);
  // Writes <run dir>/<file> atomically.
  void write_json(const std::string& file, const Json& j) const;
 private:
  std::string dir_;
  std::ofstream metrics_;
  std::ofstream forecasts_;  // opened with the first forecast event
};

// Creates and returns a fresh folder runs_dir/name, or runs_dir/name-1, -2, ... when taken.
std::string claim_run_dir(const std::string& runs_dir, const std::string& name);

// Writes `j` to `path` atomically (temporary file + rename).
void write_json_file(const std::string& path, const Json& j);

}  // namespace orrery
