#include "orrery/host/experiment.h"

#include <c10/util/Exception.h>

#include <ATen/Parallel.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "orrery/host/checkpoint.h"
#include "orrery/host/data_mixture.h"
#include "orrery/data_source.h"
#include "orrery/error.h"
#include "orrery/host/events.h"
#include "orrery/host/metrics_bus.h"
#include "orrery/host/model.h"
#include "orrery/host/process_group.h"
#include "orrery/host/registry.h"
#include "orrery/host/routed_optimizer.h"
#include "orrery/host/run_store.h"
#include "orrery/host/zero.h"

namespace fs = std::filesystem;

namespace orrery {

const OptionSchema& RunRequest::schema() {
  static const OptionSchema s = OptionSchema{}
                                    .string("name", "run", "the run's folder name under runs_dir (a taken name gets -1, -2, ...)")
                                    .string("runs_dir", "runs", "where run folders go")
                                    .integer("every", 0, "on_step is called at most every N steps; 0 = at every train event", 0)
                                    .boolean("resume", false, "continue the run `name` from its newest valid checkpoint; a fresh run when it does not exist")
                                    .extend(TrainConfig::schema());
  return s;
}

void RunRequest::set_options(const Json& options, const std::string& owner,
                             const std::vector<std::string>& also_known) {
  Json o = schema().validate(options, owner, also_known);
  name = o["name"], runs_dir = o["runs_dir"], listen_every = o["every"];
  if (o["resume"].get<bool>()) resume = true;  // `orrery run --resume` may have set it already
  for (const char* own : {"name", "runs_dir", "every", "resume"}) o.erase(own);
  train = TrainConfig::from_json(o, owner);
}

namespace {

std::string what_of(const std::exception& e) {
  const auto* ce = dynamic_cast<const c10::Error*>(&e);
  return ce ? ce->what_without_backtrace() : e.what();
}

// How a resumed run's request differs from its config.json. Options that shape the saved state
// or the data stream (model, data, optimizer groups, batch geometry, masking, seed) must match:
// the checkpoint means nothing otherwise. Logging, checkpoint and worker options may change
// freely. The rest (steps, learning rates and other optimizer options, schedules, clipping) may
// change too, as a researcher lowering the learning rate after a NaN storm wants, but the run then
// no longer reproduces an uninterrupted one: those are reported.
const std::set<std::string> kFreeOnResume = {
    "quiet", "log_every", "val_every", "val_batches", "forecast_every", "forecast_series", "data_workers", "prefetch",
    "checkpoint_every", "checkpoint_minutes", "checkpoint_keep", "max_skipped_steps", "spike_factor", "accumulate",
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

void warn(const std::string& message) {
  std::fprintf(stderr, "warning: %s\n", message.c_str());
  std::fflush(stderr);
}

}  // namespace

Json run_training(const RunRequest& r, const Registry& registry,
                  const std::function<void(const Json&)>& listener, const Interrupt* interrupt) {
  if (!r.model) throw Error("a run needs a model");
  Model& model = *r.model;
  const TrainConfig& cfg = r.train;
  std::shared_ptr<DataSource> data = r.source;
  if (!data) {
    DataContext context{cfg.seed};
    if (r.world) context.rank = r.world->rank(), context.world_size = r.world->size();
    data = make_data_source(registry, r.data, context);
  }
  // Validation and forecast snapshots: the same kind of data under another seed and from the
  // validation split, so held-out series the training never sees.
  std::unique_ptr<DataSource> validation;
  if ((cfg.val_batches > 0 || cfg.forecast_series > 0) && (!r.world || r.world->rank() == 0)) {
    DataContext held_out{cfg.seed + 1000003};
    held_out.split = Split::validation;
    validation = make_data_source(registry, r.data, held_out);
  }

  // Data parallel with shard_optimizer, each rank keeps its share of the state (zero.h).
  std::unique_ptr<Optimizer> owned_optimizer;
  ShardedOptimizer* sharded = nullptr;
  Json routing;
  if (cfg.shard_optimizer && r.world) {
    auto s = std::make_unique<ShardedOptimizer>(registry, optimizer_groups_from_json(r.optimizer), model.params(),
                                                model.parametrisation(), *r.world);
    sharded = s.get(), routing = s->describe(), owned_optimizer = std::move(s);
  } else {
    auto o = std::make_unique<RoutedOptimizer>(registry, optimizer_groups_from_json(r.optimizer), model.params(),
                                               model.parametrisation());
    routing = o->describe(), owned_optimizer = std::move(o);
  }
  Optimizer& optimizer = *owned_optimizer;
  for (auto& g : routing) g.erase("names");  // the names are in model:describe()
  const bool share = sharded != nullptr;  // a checkpoint holds the whole state; a rank loads its share
  Json data_json = r.data.to_json();
  if (Json d = data->describe(); !d.empty()) data_json["describe"] = d;
  const int64_t world_size = r.world ? r.world->size() : 1;
  const Json config = {{"model", model.describe()}, {"data", data_json}, {"optimizer", r.optimizer},
                       {"routing", routing}, {"train", cfg.to_json()}, {"world_size", world_size}};
  // Data parallel: rank 0 leads (it claims and writes the run folder, logs and checkpoints);
  // the other ranks train alongside it and write nothing.
  const bool lead = !r.world || r.world->rank() == 0;
  // A resumed run reopens its folder; any other claims a fresh one. Rank 0 decides, on its
  // filesystem, and tells the other ranks: the folder, whether it resumes, whether the run had
  // already finished (then its summary), or the error that stopped it.
  const fs::path existing = fs::path(r.runs_dir) / r.name;
  std::error_code ec;
  std::unique_ptr<RunStore> store;
  std::optional<Checkpoint> from;
  Json decision;
  if (lead) {
    try {
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
          if (!from) {
            warn("run " + dir + " has no checkpoint to resume from: it starts over");
          } else if (from->threads != at::get_num_threads()) {
            warn("checkpoint " + from->dir + " was written with " + std::to_string(from->threads) +
                 " LibTorch threads, this process has " + std::to_string(at::get_num_threads()) +
                 ": losses may differ from an uninterrupted run's in their last bits");
          }
          write_json_file(dir + "/config.json", config);  // the options that may change, as they now are
        }
      } else {
        store = std::make_unique<RunStore>(r.runs_dir, r.name, config);
      }
      if (store) decision = {{"run_dir", store->dir()}, {"resume", from.has_value()}, {"finished", nullptr}};
    } catch (const std::exception& e) {
      if (r.world) r.world->share(Json{{"error", what_of(e)}}.dump());  // the others stop too
      throw;
    }
    if (r.world) r.world->share(decision.dump());
  } else {
    decision = Json::parse(r.world->share(""));
    if (decision.contains("error"))
      throw Error("rank 0 could not start the run: " + decision["error"].get<std::string>());
    // The checkpoint rank 0 loaded: on a shared filesystem, the same folder (start_together
    // checks the step).
    if (!decision["finished"].is_null() || decision.value("resume", false))
      from = load_latest_checkpoint(decision["run_dir"].get<std::string>(), model, optimizer, {}, share);
  }
  const std::string run_dir = decision["run_dir"].get<std::string>();
  if (!decision["finished"].is_null()) {
    const int64_t steps = decision["finished"].value("steps", int64_t{0});
    if (!from || from->state.step != steps)
      throw Error("run " + run_dir + " finished at step " + std::to_string(steps) + " but has no checkpoint of that " +
                  "step to load its model from (it ran with checkpoints off); give the script another name to train anew");
    if (lead) {
      std::printf("run %s finished before (%lld steps): its final checkpoint is loaded, nothing to train\n",
                  run_dir.c_str(), static_cast<long long>(steps));
      std::fflush(stdout);
    }
    return decision["finished"];
  }
  if (lead && from)  // said even when quiet: where a run goes on from is not a progress line
    std::printf("run %s: resuming at step %lld/%lld from %s\n", r.name.c_str(),
                static_cast<long long>(from->state.step), static_cast<long long>(cfg.steps), from->dir.c_str());
  else if (lead && !cfg.quiet)
    std::printf("run %s: %lld parameters%s, writing %s\n", r.name.c_str(),
                static_cast<long long>(model.num_parameters()),
                world_size > 1 ? (", " + std::to_string(world_size) + " processes").c_str() : "", run_dir.c_str());
  std::fflush(stdout);

  MetricsBus bus;
  if (store) bus.subscribe([&](const Json& ev) { store->append_metrics(ev); });
  if (listener)
    bus.subscribe([&, last = int64_t{0}](const Json& ev) mutable {
      if (event_kind(ev) != EventKind::train || (interrupt && interrupt->requested())) return;
      const int64_t step = ev["step"];
      if (step - last < r.listen_every && step != cfg.steps) return;
      last = step;
      listener(ev);
    });
  if (from) bus.publish(make_event(EventKind::resume, {{"step", from->state.step}, {"checkpoint", from->dir}}));
  const Json identity = {{"parameters", model.num_parameters()}, {"run_dir", run_dir},
                         {"resumed_from", from ? Json(from->state.step) : Json(nullptr)},
                         {"world_size", world_size}};
  TrainHooks hooks;
  if (from) hooks.resume = &from->state;
  hooks.world = r.world;
  // Rank 0 writes; a sharded optimizer's state is gathered onto it first, every rank taking part.
  if (store || sharded)
    hooks.checkpoint = [&](const TrainState& st) {
      const NamedTensors state = sharded ? sharded->gather_state() : optimizer.state_tensors();
      if (store)
        write_checkpoint(store->dir(), model, state, optimizer.counters(),
                         {st, store->metrics_bytes(), store->forecasts_bytes(), config}, cfg.checkpoint_keep);
    };
  TrainConfig own = cfg;  // the other ranks print nothing and leave validation to rank 0
  if (!lead) own.quiet = true, own.val_batches = 0, own.forecast_series = 0;
  TrainResult result;
  try {
    result = train(model, *data, optimizer, own, bus, lead ? validation.get() : nullptr, interrupt, hooks);
  } catch (const std::exception& e) {  // leave a summary that says why the run stopped
    Json failed = identity;
    failed["error"] = what_of(e);
    if (store) store->write_summary(failed);
    throw;
  }
  Json summary = result.to_json();
  summary.update(identity);
  if (store) store->write_summary(summary);
  // No rank leaves before rank 0 has written its last checkpoint and the summary: a launcher
  // takes a rank's exit (an interrupted script's too) as the end of the job.
  if (r.world) r.world->barrier();
  return summary;
}

}  // namespace orrery
