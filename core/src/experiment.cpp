#include "orrery/experiment.h"

#include <c10/util/Exception.h>

#include <cstdio>

#include "orrery/data_mixture.h"
#include "orrery/data_source.h"
#include "orrery/error.h"
#include "orrery/events.h"
#include "orrery/metrics_bus.h"
#include "orrery/model.h"
#include "orrery/registry.h"
#include "orrery/routed_optimizer.h"
#include "orrery/run_store.h"

namespace orrery {

const OptionSchema& RunRequest::schema() {
  static const OptionSchema s = OptionSchema{}
                                    .string("name", "run", "the run's folder name under runs_dir (a taken name gets -1, -2, ...)")
                                    .string("runs_dir", "runs", "where run folders go")
                                    .integer("every", 0, "on_step is called at most every N steps; 0 = at every train event", 0)
                                    .extend(TrainConfig::schema());
  return s;
}

void RunRequest::set_options(const Json& options, const std::string& owner,
                             const std::vector<std::string>& also_known) {
  Json o = schema().validate(options, owner, also_known);
  name = o["name"], runs_dir = o["runs_dir"], listen_every = o["every"];
  for (const char* own : {"name", "runs_dir", "every"}) o.erase(own);
  train = TrainConfig::from_json(o, owner);
}

namespace {

std::string what_of(const std::exception& e) {
  const auto* ce = dynamic_cast<const c10::Error*>(&e);
  return ce ? ce->what_without_backtrace() : e.what();
}

}  // namespace

Json run_training(const RunRequest& r, const Registry& registry,
                  const std::function<void(const Json&)>& listener, const Interrupt* interrupt) {
  if (!r.model) throw Error("a run needs a model");
  Model& model = *r.model;
  const TrainConfig& cfg = r.train;
  std::shared_ptr<DataSource> data = r.source;
  if (!data) data = make_data_source(registry, r.data, DataContext{cfg.seed});
  // Validation and forecast snapshots: the same kind of data under another seed and from the
  // validation split, so held-out series the training never sees.
  std::unique_ptr<DataSource> validation;
  if (cfg.val_batches > 0 || cfg.forecast_series > 0) {
    DataContext held_out{cfg.seed + 1000003};
    held_out.split = Split::validation;
    validation = make_data_source(registry, r.data, held_out);
  }

  RoutedOptimizer optimizer(registry, optimizer_groups_from_json(r.optimizer), model.params(),
                            model.parametrisation());
  Json routing = optimizer.describe();
  for (auto& g : routing) g.erase("names");  // the names are in model:describe()
  Json data_json = r.data.to_json();
  if (Json d = data->describe(); !d.empty()) data_json["describe"] = d;
  const Json config = {{"model", model.describe()}, {"data", data_json}, {"optimizer", r.optimizer},
                       {"routing", routing}, {"train", cfg.to_json()}};
  RunStore store(r.runs_dir, r.name, config);
  if (!cfg.quiet)
    std::printf("run %s: %lld parameters, writing %s\n", r.name.c_str(),
                static_cast<long long>(model.num_parameters()), store.dir().c_str());

  MetricsBus bus;
  bus.subscribe([&](const Json& ev) { store.append_metrics(ev); });
  if (listener)
    bus.subscribe([&, last = int64_t{0}](const Json& ev) mutable {
      if (event_kind(ev) != EventKind::train || (interrupt && interrupt->requested())) return;
      const int64_t step = ev["step"];
      if (step - last < r.listen_every && step != cfg.steps) return;
      last = step;
      listener(ev);
    });
  const Json identity = {{"parameters", model.num_parameters()}, {"run_dir", store.dir()}};
  TrainResult result;
  try {
    result = train(model, *data, optimizer, cfg, bus, validation.get(), interrupt);
  } catch (const std::exception& e) {  // leave a summary that says why the run stopped
    Json failed = identity;
    failed["error"] = what_of(e);
    store.write_summary(failed);
    throw;
  }
  Json summary = result.to_json();
  summary.update(identity);
  store.write_summary(summary);
  return summary;
}

}  // namespace orrery
