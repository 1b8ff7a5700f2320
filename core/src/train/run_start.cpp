// Where a run starts: rank 0's decision (a fresh folder, a resumed run, a finished one), told to
// the other ranks.
#include "run_start.h"

#include <ATen/Parallel.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>

#include "orrery/error.h"
#include "orrery/host/plugin_guard.h"
#include "orrery/host/process_group.h"

namespace fs = std::filesystem;

namespace orrery {

namespace {

// How a resumed run's request differs from its config.json. Options that shape the saved state
// or the data stream (model, data, optimizer groups, batch geometry, masking, seed) must match:
// the checkpoint means nothing otherwise. Logging, checkpoint and worker options may change
// freely. The rest (steps, learning rates and other optimizer options, schedules, clipping) may
// change too, as a researcher lowering the learning rate after a NaN storm wants, but the run then
// no longer reproduces an uninterrupted one: those are reported.
const std::set<std::string> kFreeOnResume = {
    "quiet", "log_every", "val_every", "val_batches", "forecast_every", "forecast_series", "sample_tokens",
    "data_workers", "prefetch", "checkpoint_every", "checkpoint_minutes", "checkpoint_keep", "checkpoint_at", "max_skipped_steps", "spike_factor", "accumulate",
    "shard_optimizer"};
const std::set<std::string> kFixedOnResume = {"batch_size", "context_length", "cpm", "cpm_max_span",
                                              "cpm_max_rate", "seed"};

struct RunDifferences {
  std::vector<std::string> refused, changed;
  static std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (size_t i = 0; i < items.size() && i < 4; ++i) {
      std::string d = items[i];
      if (d.size() > 300) d = d.substr(0, 300) + "...";
      out += (i ? "; " : "") + d;
    }
    if (items.size() > 4) out += "; and " + std::to_string(items.size() - 4) + " more";
    return out;
  }
};

RunDifferences compare_runs(const Json& saved, const Json& wanted) {
  RunDifferences d;
  auto differ = [](std::vector<std::string>& into, const std::string& what, const Json& a, const Json& b) {
    if (a != b) into.push_back(what + " was " + a.dump() + ", now " + b.dump());
  };
  differ(d.refused, "model", saved.value("model", Json()), wanted.value("model", Json()));
  // A run started before the named seed streams (seeds.h) drew its data and masks otherwise.
  if (saved.value("seed_streams", std::string("ad hoc")) != wanted.value("seed_streams", std::string()))
    d.refused.push_back("it was started by an earlier Orrery whose random streams came from its seed another way "
                        "(seed_streams was " + saved.value("seed_streams", Json("unrecorded")).dump() +
                        ", now " + wanted.value("seed_streams", Json()).dump() +
                        "): resumed, it would train on other data and masks than it did");
  Json sd = saved.value("data", Json::object()), wd = wanted.value("data", Json::object());
  sd.erase("describe"), wd.erase("describe");  // cache counts and such differ from run to run
  differ(d.refused, "data", sd, wd);
  // The optimizer: its groups (names and parameter selectors) fixed, their options free.
  auto groups = [](Json o) {
    Json shape = o.is_array() ? o : Json::array({o}), options = Json::array();
    for (auto& g : shape) options.push_back(g.value("options", Json::object())), g.erase("options");
    return std::pair{shape, options};
  };
  const auto [saved_groups, saved_options] = groups(saved.value("optimizer", Json()));
  const auto [wanted_groups, wanted_options] = groups(wanted.value("optimizer", Json()));
  differ(d.refused, "optimizer groups", saved_groups, wanted_groups);
  if (saved_groups == wanted_groups)
    for (size_t i = 0; i < saved_options.size(); ++i)
      differ(d.changed, "optimizer group " + std::to_string(i + 1) + " options", saved_options[i], wanted_options[i]);
  const Json st = saved.value("train", Json::object()), wt = wanted.value("train", Json::object());
  // A step's micro-batches: accumulate x world size. Shared out differently over the processes
  // they are the same batches (trainer.h), so only their number must stay.
  const auto micro = [](const Json& config, const Json& train) {
    return train.value("accumulate", int64_t{1}) * config.value("world_size", int64_t{1});
  };
  if (micro(saved, st) != micro(wanted, wt))
    d.refused.push_back("the micro-batches of a step (accumulate x world size) were " +
                        std::to_string(micro(saved, st)) + ", now " + std::to_string(micro(wanted, wt)));
  for (const auto& [k, v] : wt.items())
    if (!kFreeOnResume.count(k)) differ(kFixedOnResume.count(k) ? d.refused : d.changed, "train." + k, st.value(k, Json()), v);
  return d;
}


// The first place two configs differ, "train.steps is 20 on rank 0, 30 on rank 1".
std::string first_difference(const Json& a, const Json& b, const std::string& at, int rank) {
  if (a.is_object() && b.is_object()) {
    for (const auto& [k, v] : a.items()) {
      const std::string d = first_difference(v, b.contains(k) ? b[k] : Json(), at.empty() ? k : at + "." + k, rank);
      if (!d.empty()) return d;
    }
    for (const auto& [k, v] : b.items())
      if (!a.contains(k)) return first_difference(Json(), v, at.empty() ? k : at + "." + k, rank);
    return "";
  }
  if (a == b) return "";
  auto text = [](const Json& j) {
    std::string s = j.is_null() ? "absent" : json_text(j);
    return s.size() > 120 ? s.substr(0, 120) + "..." : s;
  };
  return at + " is " + text(a) + " on rank 0, " + text(b) + " on rank " + std::to_string(rank);
}

// The checkpoint a branch starts from: RunRequest::branch names a step-<N> folder, or a run
// folder (its newest valid checkpoint). Its run must be this one in everything a resume fixes.
Checkpoint load_branch(const std::string& branch, const Json& config, Model& model, Optimizer& optimizer,
                       bool share, const std::function<void(const std::string&)>& warn) {
  std::error_code ec;
  if (!fs::is_directory(branch, ec))
    throw Error("branch: no such folder: " + branch + " (a run's checkpoint, runs/NAME/checkpoints/step-N, "
                "or a run folder to start from its newest)");
  std::string dir = branch;
  if (!fs::exists(fs::path(branch) / "checkpoint.json", ec)) {  // a run folder: its newest valid checkpoint
    const std::vector<std::string> all = list_checkpoints(branch);
    if (all.empty())
      throw Error("branch: " + branch + " holds no checkpoint (give a run folder trained with checkpoints on, "
                  "e.g. checkpoint_every = N, or one of its checkpoints/step-N folders)");
    dir.clear();
    for (auto it = all.rbegin(); it != all.rend() && dir.empty(); ++it) {
      try {
        read_checkpoint_record(*it);
        dir = *it;
      } catch (const Error& e) {
        warn(std::string("skipping ") + e.what());  // e names the checkpoint
      }
    }
    if (dir.empty())
      throw Error("branch: every checkpoint of " + branch + " fails its checks (the warnings above say why); "
                  "branch from another run");
  }
  const Json saved = read_checkpoint_record(dir).config;
  const RunDifferences diff = compare_runs(saved, config);
  if (!diff.refused.empty())
    throw Error("cannot branch from " + dir + ": this run differs from the one it branches off (" +
                RunDifferences::join(diff.refused) + "); a branch changes steps, schedules and optimizer "
                "options only");
  return load_checkpoint(dir, model, optimizer, share);
}

void warn(const std::string& message) {
  std::fprintf(stderr, "warning: %s\n", message.c_str());
  std::fflush(stderr);
}

}  // namespace

RunStart start_run(const RunRequest& r, const Json& config, Model& model, Optimizer& optimizer, bool share) {
  // A resumed run reopens its folder; any other claims a fresh one. Rank 0 decides, on its
  // filesystem, and tells the other ranks: the folder, whether it resumes, whether the run had
  // already finished (then its summary), or the error that stopped it.
  const fs::path existing = fs::path(r.runs_dir) / r.name;
  const TrainConfig& cfg = r.train;
  std::error_code ec;
  std::unique_ptr<RunStore> store;
  std::optional<Checkpoint> from;
  bool branched = false;
  Json decision;
  // Every rank must ask for the same run: rank 0 compares their configs before deciding (not
  // what each rank's data source describes: with shard_files each reads files of its own).
  Json asked = config;
  if (asked.contains("data")) asked["data"].erase("describe");
  const std::vector<std::string> configs = r.world ? r.world->gather_text(json_text(asked)) : std::vector<std::string>{};
  if (!r.world || r.world->rank() == 0) {
    try {
      for (size_t k = 1; k < configs.size(); ++k)
        if (const std::string d = first_difference(asked, Json::parse(configs[k]), "", static_cast<int>(k)); !d.empty())
          throw Error("rank " + std::to_string(k) + " asks for another run than rank 0 (" + d +
                      "): every rank must run the same script with the same arguments");
      // A run folder that lost its config.json cannot be checked against this script; starting
      // a new run beside it would leave the user's run behind without a word.
      if (r.resume && fs::is_directory(existing, ec) && !fs::exists(existing / "config.json", ec))
        throw Error("cannot resume run " + existing.string() + ": its config.json is missing, so its checkpoints "
                    "cannot be checked against this script. Restore it (each checkpoint keeps a copy: the \"config\" "
                    "of checkpoints/step-N/checkpoint.json), or give the script another name to start a new run");
      if (r.resume && fs::exists(existing / "config.json", ec)) {
        const std::string dir = existing.string();
        const RunDifferences diff = compare_runs(read_json_file((existing / "config.json").string()), config);
        if (!diff.refused.empty())
          throw Error("cannot resume run " + dir + ": this script asks for another run (" +
                      RunDifferences::join(diff.refused) + "). Give it another name to start a new run");
        if (!diff.changed.empty())
          warn("run " + dir + " goes on with other settings (" + RunDifferences::join(diff.changed) +
               "): it will not reproduce an uninterrupted run");
        Json done = fs::exists(existing / "summary.json", ec) ? read_json_file((existing / "summary.json").string()) : Json();
        if (done.is_object() && !done.contains("error") && !done.value("interrupted", false) &&
            done.value("steps", int64_t{0}) >= cfg.steps) {
          // Not trained again; the script goes on with the model as the run left it.
          RunStore held(dir);  // only for its lock: no other process trains the run meanwhile
          from = load_latest_checkpoint(dir, model, optimizer, warn, share);
          done["run_dir"] = dir;
          decision = {{"run_dir", dir}, {"finished", done}};
        } else {
          store = std::make_unique<RunStore>(dir);
          from = load_latest_checkpoint(dir, model, optimizer, warn, share);
          store->cut_back(from ? from->metrics_bytes : 0, from ? from->forecasts_bytes : 0);
          if (!from && !r.branch.empty()) {  // a branch killed before its first checkpoint
            from = load_branch(r.branch, config, model, optimizer, share, warn);
            branched = true;
          } else if (!from) {
            warn("run " + dir + " has no checkpoint to resume from: it starts over");
          } else if (from->threads != at::get_num_threads()) {
            warn("checkpoint " + from->dir + " was written with " + std::to_string(from->threads) +
                 " LibTorch threads, this process has " + std::to_string(at::get_num_threads()) +
                 ": losses may differ from an uninterrupted run's in their last bits");
          }
          write_json_file(dir + "/config.json", config);  // the options that may change, as they now are
        }
      } else {
        if (!r.branch.empty()) from = load_branch(r.branch, config, model, optimizer, share, warn), branched = true;
        store = std::make_unique<RunStore>(r.runs_dir, r.name, config);
      }
      if (store)
        decision = {{"run_dir", store->dir()}, {"resume", from.has_value()}, {"finished", nullptr},
                    {"checkpoint", from ? Json(from->dir) : Json(nullptr)}, {"branched", branched}};
    } catch (...) {
      if (r.world) r.world->share(Json{{"error", current_exception_text()}}.dump());  // the others stop too
      throw;
    }
    if (r.world) r.world->share(decision.dump());
  } else {
    decision = Json::parse(r.world->share(""));
    if (decision.contains("error"))
      throw Error("rank 0 could not start the run: " + decision["error"].get<std::string>());
    // The checkpoint rank 0 loaded: on a shared filesystem, the same folder (start_together
    // checks the step).
    if (!decision["finished"].is_null())
      from = load_latest_checkpoint(decision["run_dir"].get<std::string>(), model, optimizer, {}, share);
    else if (decision.value("resume", false))  // the checkpoint rank 0 loaded, its own or a branch's
      from = load_checkpoint(decision["checkpoint"].get<std::string>(), model, optimizer, share);
    branched = decision.value("branched", false);
  }
  const std::string run_dir = decision["run_dir"].get<std::string>();
  if (!decision["finished"].is_null()) {
    const int64_t steps = decision["finished"].value("steps", int64_t{0});
    if (!from || from->state.step != steps)
      throw Error("run " + run_dir + " finished at step " + std::to_string(steps) + " but has no checkpoint of that " +
                  "step to load its model from (it ran with checkpoints off); give the script another name to train anew");
  }
  return {run_dir, std::move(store), std::move(from), branched, decision["finished"]};
}

}  // namespace orrery
