#pragma once
// A study's record: one JSON object per line in <dir>/journal.jsonl, only ever appended. Every
// change happens inside transact(): an exclusive lock on the journal (flock, which Linux also
// takes over NFS), the events other workers appended since, the caller's decision, its events
// appended and fsynced, then the lock released. So worker processes on one machine, or on many
// sharing a filesystem, see one order of events, never take the same trial twice, and a kill -9
// loses at most the line it was writing (a torn last line is ignored, and cut by the next writer).
//
// Each worker also holds a lock on a file of its own (workers/<id>.lock) for as long as it lives:
// another process tells a dead worker (its trials left running) from a live one by trying that
// lock, with no clocks or heartbeats involved.
#include <functional>
#include <string>
#include <vector>

#include "orrery/json.h"

namespace orrery::search {

class Journal {
 public:
  explicit Journal(std::string dir);  // creates the folder; the journal appears with the first event
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Under the journal's lock: `decide` sees every event so far and returns the events to append.
  void transact(const std::function<std::vector<Json>(const std::vector<Json>& events)>& decide);
  // Every event so far, under the lock (a consistent snapshot).
  std::vector<Json> events();
  // Called with every event, still under the lock, after each transaction that appended some:
  // what keeps a derived file (the study's study.json) in the order of the journal's changes.
  void on_append(std::function<void(const std::vector<Json>& events)> after) { after_ = std::move(after); }

  const std::string& dir() const { return dir_; }
  const std::string& path() const { return path_; }
  // This journal's worker id (host name, process id, start time and a random tag); its lock is
  // held from the first call on.
  const std::string& worker();
  // Is the worker with this id still running? (Its lock file is held.) A dead worker's lock
  // file is removed.
  bool alive(const std::string& worker) const;

 private:
  void catch_up(int fd);  // reads events appended since the last call; cuts a torn last line

  std::string dir_, path_, worker_;
  int worker_fd_ = -1;
  std::vector<Json> events_;
  long long offset_ = 0;  // bytes of the journal read into events_
  std::function<void(const std::vector<Json>&)> after_;
};

}  // namespace orrery::search
