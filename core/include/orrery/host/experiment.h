#pragma once
// A training run as an experiment script asks for one: a model, a data source, optimizer
// groups and training options in; a run folder (config.json, metrics.jsonl, forecasts.jsonl,
// summary.json) and a summary out. Front ends (the Lua binding) only translate their
// arguments into a RunRequest.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "orrery/interrupt.h"
#include "orrery/json.h"
#include "orrery/model_spec.h"
#include "orrery/options.h"
#include "orrery/host/trainer.h"

namespace orrery {
class DataSource;
class Model;
class ProcessGroup;
class Registry;

struct RunRequest {
  std::shared_ptr<Model> model;          // trained in place
  PluginSpec data{"synthetic"};          // the data's plugin choice; held-out series for
                                         // validation come from it under another seed
  std::shared_ptr<DataSource> source;    // an existing source to train on; null = made from
                                         // `data` with the run's seed
  Json optimizer = PluginSpec{"adamw"}.to_json();  // a plugin spec, or a list of routed groups
  TrainConfig train;
  std::string name = "run", runs_dir = "runs";
  int64_t listen_every = 0;              // train events reach the listener at most every N
                                         // steps (0 = every one logged) and at the last step
  bool resume = false;                   // continue runs_dir/name from its newest valid
                                         // checkpoint (a fresh run when there is no such folder)
  std::string branch;                    // a new run that starts from another run's checkpoint
                                         // (a step-<N> folder, or a run folder: its newest)
  ProcessGroup* world = nullptr;         // data parallel: the processes training together
                                         // (trainer.h); null = this one alone

  // The named options beside the objects: name, runs_dir, every, then every training option
  // (TrainConfig::schema()). The one list orrery.train checks and the docs test reads.
  static const OptionSchema& schema();
  // Reads those options, checked against schema(); `also_known` are the caller's own fields
  // (e.g. model, data), offered when a name is misspelt.
  void set_options(const Json& options, const std::string& owner,
                   const std::vector<std::string>& also_known = {});
};

// Claims runs_dir/name (or name-1, -2, ... when taken: no run is overwritten), writes
// config.json (model, optimizer, routing, training options), trains with every event appended
// to the run's files and checkpoints as the options ask (checkpoint.h), and writes summary.json,
// also when training fails (with the error) or is interrupted. Returns the summary {steps,
// first_loss, final_loss, skipped_steps, seconds, interrupted, parameters, run_dir, resumed_from,
// world_size}. Data parallel (`world`), rank 0 does all of the writing; every rank returns the
// summary with rank 0's run_dir.
// `listener` gets the train events (see listen_every); an exception it throws ends the run and
// propagates.
//
// With `resume`, an existing runs_dir/name is continued instead: its config must match the
// request in what shapes the saved state and the data stream (model, data, optimizer groups,
// batch geometry, masking, seed); steps, optimizer options, schedules and clipping may change,
// with a warning that the run no longer reproduces an uninterrupted one (logging, checkpoint and
// worker options change silently). The newest checkpoint
// that passes its checks is loaded into the model and optimizer (damaged ones are skipped with a
// warning naming them), metrics.jsonl and forecasts.jsonl are cut back to it, and training goes
// on from its step: on the CPU the losses and final weights are the uninterrupted run's, bit for
// bit, with the same thread count. Without a checkpoint the run starts over in its folder. A run
// whose summary says it finished its steps is not trained again: its final checkpoint is loaded
// into the model and its summary returned; asking for more steps trains it on from there.
//
// With `branch`, a new run starts where another run's checkpoint stands: its weights, optimizer
// state, step, data position and masks, under this request's steps and schedules. The same
// things must match as for a resume. The decays of a warmup-stable-decay schedule branch this
// way off one stable run (a WSD schedule holds its rate until its decay, so the branch's first
// steps see the rate the stable run saw); the source run is only read. Resumed, a branched run
// goes on from its own newest checkpoint, or from the branch point when it has none.
Json run_training(const RunRequest& request, const Registry& registry,
                  const std::function<void(const Json&)>& listener = {},
                  const Interrupt* interrupt = nullptr);

}  // namespace orrery
