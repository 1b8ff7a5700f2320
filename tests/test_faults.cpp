// Numerical faults in training: a step whose loss or gradient is not finite is skipped and
// counted, too many (in a row, or among the recent steps) stop the run as diverged with the
// checkpoints of the failing weights set aside, and loss spikes far above the running median are
// reported. Faults are injected through the data.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <filesystem>
#include <map>

#include "orrery/host/checkpoint.h"
#include "orrery/error.h"
#include "orrery/host/experiment.h"
#include "orrery/host/metrics_bus.h"
#include "orrery/host/registry.h"
#include "orrery/host/routed_optimizer.h"
#include "orrery/host/trainer.h"
#include "support.h"

namespace fs = std::filesystem;
using orrery::Json;

namespace {

enum class Poison { nan, overflow, huge, shift };

// Synthetic batches, some of them poisoned: the k-th call (data_workers = 0 draws batch k on
// the step's thread, in order) gets NaN values, values beyond float32 (infinite), values of
// 1e30 times their size, or a level shift of 1000 standard deviations over its last quarter.
struct Poisoned : orrery::DataSource {
  std::unique_ptr<orrery::DataSource> inner =
      orrery::Registry::global().create<orrery::PluginKind::data>("synthetic", Json::object(), orrery::DataContext{});
  std::map<int64_t, Poison> at;
  mutable int64_t calls = 0;
  orrery::Batch sample(const orrery::SampleRequest& r) const override {
    orrery::Batch b = inner->sample(r);
    const auto it = at.find(calls++);
    if (it == at.end()) return b;
    const int64_t T = b.values.size(2);
    if (it->second == Poison::nan) b.values.narrow(2, T / 2, 4).fill_(NAN);
    if (it->second == Poison::overflow) b.values.narrow(2, T / 2, 4).fill_(INFINITY);
    if (it->second == Poison::huge) b.values.mul_(1e30);
    if (it->second == Poison::shift) {
      const at::Tensor scale = b.values.std(-1, true, true) + 1;
      b.values.narrow(2, 3 * T / 4, T / 4).add_(1000 * scale);
    }
    return b;
  }
};

// A tiny model and its AdamW, as each case trains them.
struct Trainee {
  std::unique_ptr<orrery::Model> model = test::tiny_model();
  std::unique_ptr<orrery::Optimizer> opt = orrery::Registry::global().create<orrery::PluginKind::optimizer>(
      "adamw", Json{{"lr", 1e-3}}, model->params(), model->parametrisation());
};

orrery::TrainConfig config(Json extra = Json::object()) {
  Json j = {{"steps", 30}, {"batch_size", 4}, {"context_length", 128}, {"log_every", 1}, {"quiet", true},
            {"data_workers", 0}, {"val_batches", 0}, {"forecast_series", 0}};
  j.update(extra);
  return orrery::TrainConfig::from_json(j);
}

std::vector<at::Tensor> weights(orrery::Model& m) {
  std::vector<at::Tensor> out;
  for (const auto& p : m.params()) out.push_back(p.tensor.detach().clone());
  return out;
}

bool same(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (!at::equal(a[i], b[i])) return false;
  return true;
}

}  // namespace

TEST_CASE("a step with a non-finite loss is skipped and counted, the weights untouched") {
  for (Poison poison : {Poison::nan, Poison::overflow}) {
    INFO((poison == Poison::nan ? "NaN values" : "infinite values"));
    Trainee t;
    auto& model = t.model;
    auto& opt = t.opt;
    Poisoned data;
    data.at = {{9, poison}, {10, poison}, {20, poison}};  // steps 10, 11 and 21
    orrery::MetricsBus bus;
    std::vector<Json> skips, trains;
    std::vector<at::Tensor> last_good;
    bool untouched = true;
    bus.subscribe([&](const Json& e) {
      if (e["event"] == "train") trains.push_back(e), last_good = weights(*model);
      if (e["event"] == "skip") skips.push_back(e), untouched = untouched && same(last_good, weights(*model));
    });
    const auto r = orrery::train(*model, data, *opt, config(), bus);
    CHECK(r.steps == 30);
    CHECK(r.skipped_steps == 3);
    REQUIRE(skips.size() == 3);
    CHECK(skips[0]["step"] == 10);
    CHECK(skips[1]["step"] == 11);
    CHECK(skips[1]["skipped_in_row"] == 2);
    CHECK(skips[2]["step"] == 21);
    CHECK(skips[2]["skipped_in_row"] == 1);
    CHECK(skips[2]["skipped_steps"] == 3);
    CHECK(untouched);
    CHECK(trains.size() == 27);  // a skipped step logs no loss
    CHECK(trains.back()["skipped_steps"] == 3);
    for (const auto& w : weights(*model)) CHECK(at::isfinite(w).all().item<bool>());
  }
}

TEST_CASE("max_skipped_steps non-finite steps in a row stop the run; the failing weights' checkpoints set aside") {
  auto& reg = orrery::Registry::global();
  const std::string dir = test::temp_dir("faults-storm");
  auto data = std::make_shared<Poisoned>();
  for (int64_t k = 6; k < 30; ++k) data->at[k] = Poison::nan;  // from step 7 on, every step
  orrery::RunRequest req;
  req.model = test::tiny_model();
  req.source = data;
  req.runs_dir = dir, req.name = "storm";
  req.train = config({{"checkpoint_every", 2}, {"max_skipped_steps", 4}});
  CHECK_THROWS_WITH(orrery::run_training(req, reg),
                    Catch::Contains("training stopped at step 10: 4 steps in a row had a non-finite loss or gradient "
                                    "(max_skipped_steps = 4") &&
                        Catch::Contains("The weights are those after step 6; step 7 was the first to fail") &&
                        Catch::Contains("The checkpoint of step 6 holds those weights and was set aside "
                                        "(checkpoints/diverged-step-*); --resume goes on from step-000000004"));
  const Json summary = Json::parse(test::read_text(dir + "/storm/summary.json"));
  CHECK_THAT(summary["error"].get<std::string>(), Catch::Contains("training stopped at step 10"));
  // No checkpoint at step 8 (its newest step was skipped); step 6's, whose weights gave the first
  // non-finite loss, kept aside, never resumed from.
  CHECK(fs::is_directory(dir + "/storm/checkpoints/diverged-step-000000006"));
  CHECK(!fs::exists(dir + "/storm/checkpoints/step-000000008"));
  auto check = test::tiny_model();
  orrery::RoutedOptimizer opt(reg, orrery::optimizer_groups_from_json({{"name", "adamw"}}), check->params(),
                              check->parametrisation());
  std::vector<std::string> warnings;
  const auto newest = orrery::load_latest_checkpoint(dir + "/storm", *check, opt,
                                                     [&](const std::string& w) { warnings.push_back(w); });
  REQUIRE(newest);
  CHECK(warnings.empty());
  CHECK(newest->state.step == 4);
  CHECK(newest->state.skipped_in_row == 0);
}

TEST_CASE("a diverging run that skips most steps, never max_skipped_steps in a row, stops") {
  Trainee t;
  Poisoned data;
  // Two steps of three skipped from step 5 on: never 4 in a row (before: the run went on to its
  // end, exit 0, at a loss of 4e10 with lr 1e6), but 4 of the last 8.
  for (int64_t k = 4; k < 30; ++k)
    if (k % 3 != 0) data.at[k] = Poison::nan;
  orrery::MetricsBus bus;
  try {
    orrery::train(*t.model, data, *t.opt, config({{"max_skipped_steps", 4}}), bus);
    FAIL("no error");
  } catch (const orrery::TrainingDiverged& e) {
    CHECK_THAT(e.what(), Catch::Contains("4 of the last 8 steps had a non-finite loss or gradient"));
    CHECK_THAT(e.what(), Catch::Contains("step 5 was the first to fail"));
    CHECK(e.suspect_from == 4);
  }
}

TEST_CASE("a run whose last step is skipped ends with an error, not with weights that give NaN") {
  Trainee t;
  Poisoned data;
  data.at = {{29, Poison::nan}};
  orrery::MetricsBus bus;
  CHECK_THROWS_WITH(orrery::train(*t.model, data, *t.opt, config(), bus),
                    Catch::Contains("training ended at step 30 on 1 skipped step(s)"));
}

TEST_CASE("non-finite weights are never saved, and a diverged model forecasts no NaN") {
  auto model = test::tiny_model();
  const std::string dir = test::temp_dir("faults-save");
  {
    at::NoGradGuard no_grad;
    model->params()[1].tensor.view(-1)[0] = NAN;
  }
  CHECK_THROWS_WITH(model->save_weights(dir + "/m.safetensors"),
                    Catch::Contains("cannot save " + dir + "/m.safetensors: the weights '" + model->params()[1].info.name +
                                    "' hold NaN or infinite values"));
  CHECK(!fs::exists(dir + "/m.safetensors"));
  // Finite but diverged, as an lr of 1e30 leaves them: saved, but forecasting refuses.
  auto diverged = test::tiny_model();
  {
    at::NoGradGuard no_grad;
    for (auto& p : diverged->params()) p.tensor.mul_(1e30);
  }
  at::Tensor x = at::randn({1, 1, 64}), obs = at::ones({1, 1, 64}, at::kBool);
  CHECK_THROWS_WITH(diverged->forecast(x, obs, at::zeros({1, 1}, at::kLong), 8),
                    Catch::Contains("the model's forecast is not finite (NaN)"));
}

TEST_CASE("huge values are no fault: the causal scaler takes them in its stride") {
  Trainee t;
  auto& model = t.model;
  auto& opt = t.opt;
  Poisoned data;
  data.at = {{9, Poison::huge}, {10, Poison::huge}};
  orrery::MetricsBus bus;
  std::vector<Json> faults;
  bus.subscribe([&](const Json& e) {
    if (e["event"] == "skip" || e["event"] == "spike") faults.push_back(e);
  });
  const auto r = orrery::train(*model, data, *opt, config(), bus);
  CHECK(r.skipped_steps == 0);
  CHECK(faults.empty());
  for (const auto& w : weights(*model)) CHECK(at::isfinite(w).all().item<bool>());
}

TEST_CASE("a loss far above the running median is reported as a spike") {
  Trainee t;
  auto& model = t.model;
  auto& opt = t.opt;
  Poisoned data;
  data.at = {{24, Poison::shift}};  // step 25
  orrery::MetricsBus bus;
  std::vector<Json> spikes;
  bus.subscribe([&](const Json& e) {
    if (e["event"] == "spike") spikes.push_back(e);
  });
  orrery::train(*model, data, *opt, config(), bus);
  REQUIRE(spikes.size() == 1);
  CHECK(spikes[0]["step"] == 25);
  CHECK(spikes[0]["loss"].get<double>() > 4 * spikes[0]["median"].get<double>());

  // Off with spike_factor = 0.
  Trainee quiet;
  Poisoned again;
  again.at = data.at;
  spikes.clear();
  orrery::train(*quiet.model, again, *quiet.opt, config({{"spike_factor", 0}}), bus);
  CHECK(spikes.empty());
}
