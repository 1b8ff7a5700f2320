#include "orrery/host/experiment.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <tuple>

#include "orrery/data_source.h"
#include "orrery/options.h"
#include "orrery/error.h"
#include "orrery/host/data_mixture.h"
#include "orrery/host/events.h"
#include "orrery/host/metrics_bus.h"
#include "orrery/host/model.h"
#include "orrery/host/plugin_guard.h"
#include "orrery/host/process_group.h"
#include "orrery/host/registry.h"
#include "orrery/host/routed_optimizer.h"
#include "orrery/host/seeds.h"
#include "orrery/host/zero.h"
#include "run_start.h"

namespace orrery {

const OptionSchema& RunRequest::schema() {
  static const OptionSchema s = OptionSchema{}
                                    .string("name", "run", "the run's folder name under runs_dir (a taken name gets -1, -2, ...)")
                                    .string("runs_dir", "runs", "where run folders go")
                                    .integer("every", 0, "on_step is called at most every N steps; 0 = at every train event", 0)
                                    .boolean("resume", false, "continue the run `name` from its newest valid checkpoint; a fresh run when it does not exist")
                                    .string("branch", "", "start a new run from another run's checkpoint (runs/r/checkpoints/step-N, or a run folder: its newest) under this run's steps and schedule; \"\" = from scratch")
                                    .extend(TrainConfig::schema());
  return s;
}

void RunRequest::set_options(const Json& options, const std::string& owner,
                             const std::vector<std::string>& also_known) {
  Json o = schema().validate(options, owner, also_known);
  name = o["name"], runs_dir = o["runs_dir"], listen_every = o["every"];
  if (o["resume"].get<bool>()) resume = true;  // `orrery run --resume` may have set it already
  branch = o["branch"];
  for (const char* own : {"name", "runs_dir", "every", "resume", "branch"}) o.erase(own);
  train = TrainConfig::from_json(o, owner);
}


namespace {

// The run's optimizer groups, routed over the model's parameters; data parallel with
// shard_optimizer, each rank keeps the state of its share only (zero.h).
struct RunOptimizer {
  std::unique_ptr<Optimizer> owned;
  ShardedOptimizer* sharded = nullptr;
  Json routing;
};

RunOptimizer make_run_optimizer(const RunRequest& r, const Registry& registry) {
  Model& model = *r.model;
  RunOptimizer o;
  if (r.train.shard_optimizer && r.world) {
    auto s = std::make_unique<ShardedOptimizer>(registry, optimizer_groups_from_json(r.optimizer), model.params(),
                                                model.parametrisation(), *r.world);
    o.sharded = s.get(), o.routing = s->describe(), o.owned = std::move(s);
  } else {
    auto routed = std::make_unique<RoutedOptimizer>(registry, optimizer_groups_from_json(r.optimizer), model.params(),
                                                    model.parametrisation());
    o.routing = routed->describe(), o.owned = std::move(routed);
  }
  return o;
}

// Every factor the parametrisation puts on a parameter, one row per kind of parameter (role,
// inside the depth-scaled stack or not, fan-in), and the residual weights of the stack's first
// and last branches: what config.json records so that a sweep's runs show what changed with
// width or depth.
Json scale_table(Model& model) {
  const Parametrisation& p = model.parametrisation();
  std::map<std::tuple<std::string, bool, int64_t>, Json> rows;
  int layers = 0;
  for (const auto& param : model.params()) {
    const ParamInfo& info = param.info;
    layers = std::max(layers, info.stack_depth);
    Json& row = rows[{role_name(info.role), info.stack_depth > 0, info.fan_in}];
    if (row.is_null())
      row = {{"role", role_name(info.role)}, {"in_stack", info.stack_depth > 0}, {"fan_in", info.fan_in},
             {"example", info.name}, {"tensors", 0},
             {"lr_adam", p.lr_multiplier(info, OptimizerFamily::adam_like)},
             {"lr_muon", p.lr_multiplier(info, OptimizerFamily::muon_like)},
             {"eps", p.eps_multiplier(info)}};
    row["tensors"] = row["tensors"].get<int64_t>() + 1;
  }
  Json table = Json::array();
  for (auto& [key, row] : rows) table.push_back(std::move(row));
  Json out = {{"parameters", table}};
  if (layers > 0) {
    const auto [b0, s0] = p.residual_weights(0, 2 * layers);
    const auto [b1, s1] = p.residual_weights(2 * layers - 1, 2 * layers);
    out["residual"] = {{"layers", layers}, {"first", {{"branch", b0}, {"skip", s0}}},
                       {"last", {{"branch", b1}, {"skip", s1}}}};
  }
  return out;
}
// What would make a validation split long enough: a file source split in time holds out the last
// `holdout` share of each series, so a larger share gives longer series; or no validation at all.
std::string validation_hint(const DataSource& validation, const DataSource& train, int64_t needed) {
  const std::string without = "; or train without validation: val_batches = 0 and forecast_series = 0";
  const Json about = validation.describe();
  const auto held = validation.longest_series(), kept = train.longest_series();
  if (!about.contains("holdout") || !about.contains("time_split_files") || about["time_split_files"].empty() ||
      !held || !kept)
    return without;
  const double total = static_cast<double>(*held + *kept);
  const double share = std::ceil(100.0 * static_cast<double>(needed + 1) / total) / 100.0;
  if (share > 0.5) return without;
  std::ostringstream text;
  text << "; its files are split in time, the last " << about["holdout"].get<double>() << " of each series held out "
       << "(the data's option holdout): holdout = " << share << " holds out about " << needed + 1 << " steps" << without;
  return text.str();
}

}  // namespace

Json run_training(const RunRequest& r, const Registry& registry,
                  const std::function<void(const Json&)>& listener, const Interrupt* interrupt) {
  if (!r.model) throw Error("a run needs a model");
  Model& model = *r.model;
  const TrainConfig& cfg = r.train;
  const RunSeeds seeds = RunSeeds::of(cfg.seed);
  std::shared_ptr<DataSource> data = r.source;
  if (!data) {
    DataContext context{seeds.data};
    context.interrupt = interrupt;
    if (r.world) context.rank = r.world->rank(), context.world_size = r.world->size();
    data = make_data_source(registry, r.data, context);
  }
  // Validation and forecast snapshots: the same kind of data under its own seed and from the
  // validation split, so held-out series the training never sees.
  std::unique_ptr<DataSource> validation;
  if ((cfg.val_batches > 0 || cfg.forecast_series > 0) && (!r.world || r.world->rank() == 0))
    validation = make_data_source(registry, r.data, DataContext{seeds.validation, 0, 1, Split::validation, interrupt});
  // Series too short for the loss to score anything would train on nothing, with a loss of 0.
  const auto check_lengths = [&](const DataSource& source, const char* split) {
    const std::optional<int64_t> longest = source.longest_series();
    if (longest && *longest < model.min_training_length())
      throw Error("data plugin '" + r.data.name + "': the longest series of the " + split + " split has " +
                  std::to_string(*longest) + " step" + (*longest == 1 ? "" : "s") + ", too short to train on: this "
                  "model needs series of at least " + std::to_string(model.min_training_length()) +
                  " steps (a patch of " + std::to_string(model.patch_size()) +
                  " to predict and two observations before it)" +
                  (std::string(split) == "validation" ? validation_hint(source, *data, model.min_training_length()) : ""));
  };
  check_lengths(*data, "train");
  // Static covariates name for name: a model reading "size, urban" from data giving "urban, size"
  // would learn each from the other's values.
  if (const auto given = data->static_covariates(), read = model.static_covariates(); given != read)
    throw Error(read.empty() ? "data plugin '" + r.data.name + "' gives static covariates (" + join_names(given) +
                                   ") but the model reads none: add static_covariates = \"" + join_names(given) +
                                   "\" to its architecture's options, or leave them out of the data's"
                : "the model reads static covariates (" + join_names(read) + ") but data plugin '" + r.data.name +
                      "' gives " + (given.empty() ? std::string("none") : "(" + join_names(given) + ")") +
                      ": name the same columns, in the same order, in the data's static_covariates");
  if (validation) check_lengths(*validation, "validation");
  RunOptimizer run_optimizer = make_run_optimizer(r, registry);
  ShardedOptimizer* sharded = run_optimizer.sharded;
  Json& routing = run_optimizer.routing;
  Optimizer& optimizer = *run_optimizer.owned;
  for (auto& g : routing) g.erase("names");  // the names are in model:describe()
  const bool share = sharded != nullptr;  // a checkpoint holds the whole state; a rank loads its share
  Json data_json = r.data.to_json();
  if (Json d = data->describe(); !d.empty()) data_json["describe"] = d;
  const int64_t world_size = r.world ? r.world->size() : 1;
  Json config = {{"model", model.describe()}, {"data", data_json}, {"optimizer", r.optimizer},
                 {"routing", routing}, {"train", cfg.to_json()}, {"world_size", world_size},
                 {"seed_streams", kSeedStreams}, {"scales", scale_table(model)}};
  if (!r.branch.empty()) config["branch"] = r.branch;
  // Data parallel: rank 0 leads (it claims and writes the run folder, logs and checkpoints);
  // the other ranks train alongside it and write nothing.
  const bool lead = !r.world || r.world->rank() == 0;
  RunStart start = start_run(r, config, model, optimizer, share);
  const std::string& run_dir = start.run_dir;
  std::unique_ptr<RunStore>& store = start.store;
  const std::optional<Checkpoint>& from = start.from;
  if (!start.finished.is_null()) {
    if (lead) {
      std::printf("run %s finished before (%lld steps): its final checkpoint is loaded, nothing to train\n",
                  run_dir.c_str(), static_cast<long long>(start.finished.value("steps", int64_t{0})));
      std::fflush(stdout);
    }
    return start.finished;
  }
  if (lead && from)  // said even when quiet: where a run goes on from is not a progress line
    std::printf("run %s: %s at step %lld/%lld from %s\n", r.name.c_str(), start.branched ? "branching" : "resuming",
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
                         {"resumed_from", from && !start.branched ? Json(from->state.step) : Json(nullptr)},
                         {"branched_from", from && start.branched ? Json(from->dir) : Json(nullptr)},
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
                         {st, store->metrics_bytes(), store->forecasts_bytes(), config, cfg.checkpoint_at},
                         cfg.checkpoint_keep);
    };
  TrainConfig own = cfg;  // the other ranks print nothing and leave validation to rank 0
  if (!lead) own.quiet = true, own.val_batches = 0, own.forecast_series = 0;
  TrainResult result;
  const auto fail = [&](const std::string& why) {  // leave a summary that says why the run stopped
    Json failed = identity;
    failed["error"] = why;
    if (store) store->write_summary(failed);
  };
  try {
    result = train(model, *data, optimizer, own, bus, lead ? validation.get() : nullptr, interrupt, hooks);
  } catch (const TrainingDiverged& d) {
    // Checkpoints of the weights that gave the non-finite losses would only diverge again.
    std::string why = d.what();
    if (store) {
      const std::vector<int64_t> moved = set_aside_checkpoints(store->dir(), d.suspect_from);
      const std::vector<std::string> left = list_checkpoints(store->dir());
      std::string steps;
      for (int64_t k : moved) steps += (steps.empty() ? "" : ", ") + std::to_string(k);
      if (moved.size() == 1)
        why += ". The checkpoint of step " + steps + " holds those weights and was set aside (checkpoints/diverged-step-*)";
      else if (!moved.empty())
        why += ". The checkpoints of steps " + steps + " hold those weights and were set aside (checkpoints/diverged-step-*)";
      why += left.empty() ? "; no checkpoint from before step " + std::to_string(d.suspect_from + 1) +
                                " remains, so --resume starts the run over"
                          : "; --resume goes on from " + std::filesystem::path(left.back()).filename().string();
    }
    fail(why);
    throw TrainingDiverged(why, d.suspect_from);
  } catch (...) {
    fail(current_exception_text());
    throw;
  }

  Json summary = result.to_json();
  summary.update(identity);
  if (store) summary["checkpoints"] = list_checkpoints(store->dir());  // kept, oldest first: to average
  if (store) store->write_summary(summary);
  // No rank leaves before rank 0 has written its last checkpoint and the summary: a launcher
  // takes a rank's exit (an interrupted script's too) as the end of the job.
  if (r.world) r.world->barrier();
  return summary;
}

}  // namespace orrery
