#include "run_watcher.h"

#include "study.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>

namespace fs = std::filesystem;

namespace orrery::ui {

namespace {

// A file's identity for change detection: size and modification time ("" when absent).
std::string stamp(const fs::path& p, double* mtime = nullptr) {
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) return "";
  const double secs = static_cast<double>(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec * 1e-9;
  if (mtime) *mtime = secs;
  return std::to_string(st.st_size) + "@" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

Json read_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return nullptr;
  return Json::parse(in, nullptr, /*allow_exceptions=*/false);  // discarded on a parse error
}

bool is_training_run(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p / "metrics.jsonl", ec) || fs::exists(p / "config.json", ec);
}

// A training run, or a folder `orrery eval` wrote on its own (runs/eval, runs/eval-1).
bool is_run_dir(const fs::path& p) {
  std::error_code ec;
  return is_training_run(p) || fs::exists(p / "eval.json", ec);
}

// Result files an experiment writes whole (coord_check.json, study.json, scaling.json): each
// parsed again when its stamp changes, and left out while it is not the layout `parse` reads.
// Returns whether anything changed; `into` is the newest set, oldest written first.
template <class T>
bool refresh_results(const std::vector<fs::path>& files, const fs::path& root, ResultCache<T>& cache,
                     T (*parse)(const Json&, std::string), std::vector<std::shared_ptr<const T>>& into) {
  bool changed = false;
  ResultCache<T> kept;
  std::error_code ec;
  for (const auto& f : files) {
    const std::string key = f.string(), s = stamp(f);
    auto it = cache.find(key);
    if (it != cache.end() && it->second.first == s) {
      kept[key] = it->second;
      continue;
    }
    Json j = read_json(f);
    if (j.is_discarded() || j.is_null()) continue;  // half-written: tried again next poll
    const std::string name = fs::relative(f.parent_path(), root, ec).string();
    try {
      auto r = std::make_shared<T>(parse(j, name.empty() ? "." : name));
      stamp(f, &r->written);
      kept[key] = {s, r};
      changed = true;
    } catch (const std::exception&) {
    }
  }
  changed |= kept.size() != cache.size();
  cache = std::move(kept);
  into.clear();
  for (const auto& [key, c] : cache) into.push_back(c.second);
  std::sort(into.begin(), into.end(), [](const auto& a, const auto& b) {
    return a->written != b->written ? a->written < b->written : a->name < b->name;
  });
  return changed;
}

}  // namespace

// The lines appended to a file since the last read; a file that shrank or was replaced (a new
// inode) is read again from the start. At most kMaxRead bytes a poll, so a huge file streams in.
struct RunWatcher::FileState {
  static constexpr uint64_t kMaxRead = 16u << 20;
  fs::path path;
  uint64_t offset = 0;
  ino_t inode = 0;
  std::string head;     // the file's first bytes, to recognise a replacement
  std::string partial;  // an incomplete last line, finished by a later write
  bool read_lines(std::vector<std::string>& lines, bool& rewound) {
    rewound = false;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return false;
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    // Replaced: shorter, another inode, or (inodes are reused at once) other first bytes.
    bool replaced = size < offset || (inode != 0 && st.st_ino != inode);
    if (!replaced && size > offset && !head.empty()) {
      std::string now(head.size(), '\0');
      in.read(now.data(), static_cast<std::streamsize>(now.size()));
      replaced = now != head;
    }
    if (replaced) offset = 0, partial.clear(), head.clear(), rewound = true;
    inode = st.st_ino;
    if (size == offset) return rewound;
    in.clear();
    in.seekg(static_cast<std::streamoff>(offset));
    std::string chunk(std::min(size - offset, kMaxRead), '\0');
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    chunk.resize(static_cast<size_t>(in.gcount()));
    if (offset == 0) head = chunk.substr(0, 64);
    offset += chunk.size();
    partial += chunk;
    size_t start = 0;
    for (size_t nl; (nl = partial.find('\n', start)) != std::string::npos; start = nl + 1)
      if (nl > start) lines.emplace_back(partial, start, nl - start);
    partial.erase(0, start);
    return true;
  }
};

struct RunWatcher::Tracked {
  std::shared_ptr<const Run> published;
  Run working;
  FileState metrics, forecasts;
  std::string config_stamp, summary_stamp, evaluation_stamp, eval_stamp;
  std::vector<std::shared_ptr<const ForecastSnapshot>> training_forecasts;
  std::shared_ptr<const ForecastSnapshot> evaluation;
};

RunWatcher::RunWatcher(std::string root) : root_(std::move(root)) {
  snapshot_ = std::make_shared<Workspace>(Workspace{root_, {}, {}, {}, {}, 0});
}

RunWatcher::~RunWatcher() { stop(); }

bool RunWatcher::refresh(Tracked& t) {
  Run& run = t.working;
  const fs::path dir(run.dir);
  bool changed = false;
  double mtime = 0;
  auto reread = [&](const char* file, std::string& seen) -> Json {
    const std::string s = stamp(dir / file, &mtime);
    if (s == seen) return nullptr;
    Json j = s.empty() ? Json() : read_json(dir / file);
    if (!s.empty() && j.is_discarded()) return nullptr;  // mid-copy on a shared disk: next time
    seen = s;
    changed = true;
    run.last_write = std::max(run.last_write, mtime);
    return j.is_null() ? Json::object() : j;
  };
  // A file whose JSON has unexpected types counts as a bad line; it never stops the watcher.
  auto guarded = [&](auto&& fn) {
    try {
      fn();
    } catch (const std::exception&) {
      ++run.bad_lines;
    }
  };
  if (Json c = reread("config.json", t.config_stamp); !c.is_null()) guarded([&] { apply_config(run, c); });

  std::vector<std::string> lines;
  bool rewound = false;
  if (t.metrics.read_lines(lines, rewound)) {
    changed = true;
    if (rewound) {  // replaced: start over, keeping what config.json said
      Run fresh;
      fresh.name = run.name, fresh.dir = run.dir;
      apply_config(fresh, run.config);
      run = std::move(fresh);
      t.summary_stamp.clear(), t.eval_stamp.clear();  // read again into the fresh run
    }
    for (const auto& line : lines) {
      Json e = Json::parse(line, nullptr, false);
      if (e.is_discarded()) ++run.bad_lines;
      else guarded([&] { apply_metrics_event(run, e); });
    }
    stamp(t.metrics.path, &mtime);
    run.last_write = std::max(run.last_write, mtime);
  }
  lines.clear();
  if (t.forecasts.read_lines(lines, rewound)) {
    changed = true;
    if (rewound) t.training_forecasts.clear();
    for (const auto& line : lines)
      guarded([&] {
        if (auto snap = parse_forecast_event(Json::parse(line, nullptr, false))) t.training_forecasts.push_back(snap);
      });
    stamp(t.forecasts.path, &mtime);
    run.last_write = std::max(run.last_write, mtime);
  }
  if (Json s = reread("summary.json", t.summary_stamp); !s.is_null()) guarded([&] { apply_summary(run, s); });
  if (Json e = reread("evaluation.json", t.evaluation_stamp); !e.is_null())
    guarded([&] { t.evaluation = parse_evaluation(e); });
  // Half-written (mid-copy) is retried next poll; gone is no evaluation.
  if (Json e = reread("eval.json", t.eval_stamp); !e.is_null()) guarded([&] { run.eval = parse_eval(e); });
  if (changed) {
    run.forecasts = t.training_forecasts;
    if (t.evaluation) run.forecasts.push_back(t.evaluation);
    t.published = std::make_shared<const Run>(run);
  }
  return changed;
}

bool RunWatcher::poll() {
  std::lock_guard poll_lock(poll_mutex_);  // the thread's polls and a caller's never overlap
  std::vector<fs::path> run_dirs, coord_files, study_files, scaling_files;
  std::error_code ec;
  const fs::path root(root_);
  if (is_training_run(root)) {
    run_dirs.push_back(root);
  } else if (fs::is_directory(root, ec)) {
    // A folder with eval.json is a run, yet may also hold runs (`orrery eval --out runs`).
    if (is_run_dir(root)) run_dirs.push_back(root);
    // Folder by folder, run folders three levels down at most (not recursive_directory_iterator: see
    // orrery/host/file_tree.h for the LibTorch wheels' copy of it that crashes).
    auto scan = [&](auto& self, const fs::path& dir, int depth) -> void {
      for (fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
           it.increment(ec)) {
        const fs::path& p = it->path();
        const std::string leaf = p.filename().string();
        std::error_code entry_ec;  // a dangling link or an entry deleted mid-scan: skip it alone
        if (it->is_directory(entry_ec)) {
          if (leaf.starts_with(".") || leaf == "plots" || depth >= 3) continue;
          if (is_run_dir(p)) run_dirs.push_back(p);
          else self(self, p, depth + 1);
        } else if (leaf == "coord_check.json") {
          coord_files.push_back(p);
        } else if (leaf == "study.json") {
          study_files.push_back(p);
        } else if (leaf == "scaling.json") {
          scaling_files.push_back(p);
        }
      }
    };
    scan(scan, root, 0);
    if (ec) return false;  // the scan broke off: keep what is known rather than drop runs
  }
  bool changed = false;
  std::map<std::string, std::unique_ptr<Tracked>> kept;
  for (const auto& d : run_dirs) {
    const std::string key = d.string();
    auto it = runs_.find(key);
    std::unique_ptr<Tracked> t;
    if (it != runs_.end()) {
      t = std::move(it->second);
    } else {
      t = std::make_unique<Tracked>();
      t->working.dir = key;
      t->working.name = d == root ? d.filename().string() : fs::relative(d, root, ec).string();
      if (t->working.name.empty()) t->working.name = key;
      t->metrics.path = d / "metrics.jsonl";
      t->forecasts.path = d / "forecasts.jsonl";
      changed = true;
    }
    changed |= refresh(*t);
    kept[key] = std::move(t);
  }
  changed |= kept.size() != runs_.size();
  runs_ = std::move(kept);

  std::vector<std::shared_ptr<const CoordCheck>> coord_checks;
  std::vector<std::shared_ptr<const SearchStudy>> studies;
  std::vector<std::shared_ptr<const ScalingStudy>> scalings;
  changed |= refresh_results(coord_files, root, coord_, &parse_coord_check, coord_checks);
  changed |= refresh_results(study_files, root, studies_, &parse_study, studies);
  changed |= refresh_results(scaling_files, root, scalings_, &parse_scaling, scalings);

  if (!changed) return false;
  auto ws = std::make_shared<Workspace>();
  ws->root = root_;
  ws->version = ++version_;
  for (const auto& [key, t] : runs_)
    if (t->published) ws->runs.push_back(t->published);  // a folder with nothing readable yet waits
  std::sort(ws->runs.begin(), ws->runs.end(), [](const auto& a, const auto& b) { return a->name < b->name; });
  ws->coord_checks = std::move(coord_checks);  // newest last
  ws->studies = std::move(studies);
  ws->scalings = std::move(scalings);
  std::lock_guard lock(mutex_);
  snapshot_ = std::move(ws);
  return true;
}

std::shared_ptr<const Workspace> RunWatcher::snapshot() const {
  std::lock_guard lock(mutex_);
  return snapshot_;
}

void RunWatcher::start(double interval_s, std::function<void()> on_change) {
  stop();
  stopping_ = false;
  thread_ = std::thread([this, interval_s, on_change = std::move(on_change)] {
    std::unique_lock lock(wake_mutex_);
    while (!stopping_) {
      lock.unlock();
      if (poll() && on_change) on_change();
      lock.lock();
      wake_.wait_for(lock, std::chrono::duration<double>(interval_s), [&] { return stopping_; });
    }
  });
}

void RunWatcher::stop() {
  {
    std::lock_guard lock(wake_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace orrery::ui
