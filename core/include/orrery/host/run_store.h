#pragma once
// runs/<name>/: config.json, metrics.jsonl (one event per line, flushed as it happens),
// forecasts.jsonl (the forecast snapshots, likewise; created with the first one) and
// summary.json, and checkpoints/ (checkpoint.h). An existing run is never overwritten: a taken
// name gets a numeric suffix, and only resuming reopens a run's folder. JSON files are written to
// a temporary name and renamed, so a crash never leaves half a file. While a RunStore lives it
// holds a lock on its folder (flock on .lock), so two processes never train one run.
#include <fstream>
#include <string>

#include "orrery/json.h"

namespace orrery {

class RunStore {
 public:
  RunStore(const std::string& runs_dir, const std::string& name, const Json& config);
  // The existing run folder `dir`, locked, to continue; nothing is appended before cut_back.
  explicit RunStore(const std::string& dir);
  // metrics.jsonl and forecasts.jsonl cut back to the lengths a checkpoint recorded (0 and 0 to
  // start over), summary.json removed, and appending opened. Throws naming the file when one is
  // shorter than that: it was changed since, and the run cannot go on from there.
  void cut_back(int64_t metrics_bytes, int64_t forecasts_bytes);
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  const std::string& dir() const { return dir_; }
  // The lengths of metrics.jsonl and forecasts.jsonl so far, everything appended included.
  int64_t metrics_bytes() const;
  int64_t forecasts_bytes() const;
  // Appends one event as a line: {"event": "forecast", ...} to forecasts.jsonl (opened on first
  // use), every other event to metrics.jsonl. Flushed per line: the dashboard tails both files.
  void append_metrics(const Json& event);
  void write_summary(const Json& summary);
  // Writes <run dir>/<file> atomically.
  void write_json(const std::string& file, const Json& j) const;
 private:
  void lock();
  struct Lock {  // the flock on .lock: closing the descriptor releases it, also when a constructor throws
    int fd = -1;
    ~Lock();
  };
  std::string dir_;
  Lock lock_;
  std::ofstream metrics_;
  std::ofstream forecasts_;  // opened with the first forecast event
};

// Creates and returns a fresh folder runs_dir/name, or runs_dir/name-1, -2, ... when taken.
std::string claim_run_dir(const std::string& runs_dir, const std::string& name);

// Writes `j` to `path` atomically (temporary file + rename).
void write_json_file(const std::string& path, const Json& j);
// The JSON in `path`; throws orrery::Error naming the file when it cannot be read or parsed.
Json read_json_file(const std::string& path);

}  // namespace orrery
