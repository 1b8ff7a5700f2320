#pragma once
// Follows a runs folder on disk — runs written by this process, by other processes, or by other
// machines on a shared disk — by tailing each run's files. A background thread polls and
// publishes immutable Workspace snapshots; the reader takes the newest one when it likes, so
// neither the writers (training) nor the poller ever wait on the reader.
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "run.h"

namespace orrery::ui {

// A result file's stamp and what was parsed from it, by path.
template <class T>
using ResultCache = std::map<std::string, std::pair<std::string, std::shared_ptr<const T>>>;

class RunWatcher {
 public:
  // `root` is a runs folder (runs and experiment folders below it, up to 3 levels deep) or a
  // single run's folder.
  explicit RunWatcher(std::string root);
  ~RunWatcher();
  RunWatcher(const RunWatcher&) = delete;
  RunWatcher& operator=(const RunWatcher&) = delete;

  // One scan on the calling thread; returns whether anything changed since the last one.
  bool poll();
  // Polls every `interval_s` seconds on a thread of its own, calling `on_change` (from that
  // thread) after a scan that changed something.
  void start(double interval_s, std::function<void()> on_change = {});
  void stop();

  std::shared_ptr<const Workspace> snapshot() const;

 private:
  struct FileState;
  struct Tracked;
  bool refresh(Tracked& t);

  std::string root_;
  std::map<std::string, std::unique_ptr<Tracked>> runs_;                 // by run folder
  ResultCache<CoordCheck> coord_;
  ResultCache<SearchStudy> studies_;
  ResultCache<ScalingStudy> scalings_;
  uint64_t version_ = 0;

  std::mutex poll_mutex_;     // one poll at a time (the thread's, or a caller's)
  mutable std::mutex mutex_;  // guards snapshot_ only
  std::shared_ptr<const Workspace> snapshot_;

  std::mutex wake_mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace orrery::ui
