#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "orrery/data_source.h"
#include "orrery/host/metrics_bus.h"
#include "orrery/optimizer.h"
#include "orrery/host/routed_optimizer.h"
#include "orrery/host/run_store.h"
#include "orrery/host/trainer.h"
#include "support.h"

using orrery::Json;
using orrery::PluginKind;

TEST_CASE("200 seeded steps on the synthetic source lower the loss clearly") {
  auto& reg = orrery::Registry::global();
  auto model = test::tiny_model(1);
  auto data = reg.create<PluginKind::data>("synthetic", Json{{"seed", 1}}, orrery::DataContext{});
  auto opt = reg.create<PluginKind::optimizer>("adamw", Json{{"lr", 3e-3}}, model->params(),
                                               model->parametrisation());
  orrery::TrainConfig cfg;
  cfg.steps = 200;
  cfg.batch_size = 16;
  cfg.context_length = 128;
  cfg.log_every = 20;
  cfg.quiet = true;
  orrery::MetricsBus bus;
  std::vector<Json> events;
  bus.subscribe([&](const Json& e) { events.push_back(e); });
  auto r = orrery::train(*model, *data, *opt, cfg, bus);
  CHECK(r.steps == 200);
  INFO("first " << r.first_loss << " final " << r.final_loss);
  CHECK(r.final_loss < 0.75 * r.first_loss);
  REQUIRE(events.size() == 11);  // 10 train events + end
  CHECK(events[0]["event"] == "train");
  CHECK(events[0].contains("series_per_s"));
  CHECK(events.back()["event"] == "end");
}

TEST_CASE("training is reproducible for a seed") {
  auto& reg = orrery::Registry::global();
  auto run = [&] {
    auto model = test::tiny_model(5);
    auto data = reg.create<PluginKind::data>("synthetic", Json{{"seed", 5}}, orrery::DataContext{});
    auto opt = reg.create<PluginKind::optimizer>("adamw", Json::object(), model->params(),
                                                 model->parametrisation());
    orrery::TrainConfig cfg;
    cfg.steps = 5, cfg.batch_size = 4, cfg.context_length = 64, cfg.quiet = true, cfg.log_every = 5;
    orrery::MetricsBus bus;
    return orrery::train(*model, *data, *opt, cfg, bus).final_loss;
  };
  CHECK(run() == run());
}

TEST_CASE("the schedule warms up, holds and decays to its floor") {
  orrery::Schedule s;
  s.warmup = 10, s.decay = 0.5, s.min_lr = 0.1;
  CHECK(s.factor(0, 0.0, 100) == Approx(0.1));
  CHECK(s.factor(20, 0.2, 100) == 1.0);
  CHECK(s.factor(75, 0.75, 100) == Approx(0.1 + 0.9 * 0.5));
  CHECK(s.factor(100, 1.0, 100) == Approx(0.1));
  CHECK_THROWS_WITH(orrery::Schedule::from_json({{"warmpu", 3}}), Catch::Contains("unknown option 'warmpu' for the learning-rate schedule"));
}

TEST_CASE("1-sqrt and cosine decays, constant, and their errors") {
  orrery::Schedule s;
  s.warmup = 0, s.decay = 0.5, s.decay_shape = orrery::DecayShape::one_minus_sqrt;
  CHECK(s.factor(40, 0.4, 100) == 1.0);
  CHECK(s.factor(75, 0.75, 100) == Approx(1.0 - std::sqrt(0.5)));  // halfway through the decay
  CHECK(s.factor(100, 1.0, 100) == Approx(0.0).margin(1e-12));
  orrery::Schedule c;
  c.kind = orrery::ScheduleKind::cosine, c.warmup = 0, c.min_lr = 0.1;
  CHECK(c.factor(0, 0.0, 100) == Approx(1.0));
  CHECK(c.factor(50, 0.5, 100) == Approx(0.55));
  CHECK(c.factor(100, 1.0, 100) == Approx(0.1));
  orrery::Schedule k;
  k.kind = orrery::ScheduleKind::constant, k.warmup = 4;
  CHECK(k.factor(1, 0.01, 100) == Approx(0.5));
  CHECK(k.factor(99, 0.99, 100) == 1.0);
  CHECK_THROWS_WITH(orrery::Schedule::from_json({{"kind", "cosin"}}), Catch::Contains("option 'kind' of the learning-rate schedule must be one of wsd, cosine, constant"));
  CHECK_THROWS_WITH(orrery::Schedule::from_json({{"decay_shape", "sqrt"}}), Catch::Contains("linear, 1-sqrt"));
}

TEST_CASE("momentum warmup and cooldown, weight-decay schedules") {
  auto m = orrery::MomentumSchedule::from_json({{"from", 0.85}, {"to", 0.95}, {"warmup", 10}, {"cooldown", 0.5}, {"final", 0.9}});
  CHECK(m.value(0, 0.0) == Approx(0.86));
  CHECK(m.value(9, 0.09) == Approx(0.95));
  CHECK(m.value(75, 0.75) == Approx(0.925));
  CHECK(orrery::MomentumSchedule{}.value(3, 0.5) < 0);  // off: the optimizer's own
  CHECK_THROWS_WITH(orrery::MomentumSchedule::from_json({{"to", 1.0}}), Catch::Contains("below 1"));
  CHECK(orrery::WeightDecaySchedule::from_json("linear").factor(0.25) == Approx(0.75));
  CHECK(orrery::WeightDecaySchedule::from_json("cosine").factor(0.5) == Approx(0.5));
  CHECK(orrery::WeightDecaySchedule::from_json(nullptr).factor(0.9) == 1.0);
  CHECK_THROWS_WITH(orrery::TrainConfig::from_json({{"momentun", 1}}), Catch::Contains("unknown option 'momentun' for training (did you mean 'momentum'?)"));
}

TEST_CASE("a bad context length names the patch size") {
  auto& reg = orrery::Registry::global();
  auto model = test::tiny_model();
  auto data = reg.create<PluginKind::data>("synthetic", Json::object(), orrery::DataContext{});
  auto opt = reg.create<PluginKind::optimizer>("adamw", Json::object(), model->params(), model->parametrisation());
  orrery::TrainConfig cfg;
  cfg.context_length = 100;
  orrery::MetricsBus bus;
  CHECK_THROWS_WITH(orrery::train(*model, *data, *opt, cfg, bus), Catch::Contains("multiple of the patch size 32"));
}

TEST_CASE("a fractional warmup never exceeds the base rate, even for very short runs") {
  orrery::Schedule s;
  s.warmup = 0.05, s.decay = 0.2, s.min_lr = 0.0;
  for (int64_t steps : {1, 5, 6, 30})
    for (int64_t i = 0; i < steps; ++i) CHECK(s.factor(i, double(i) / steps, steps) <= 1.0);
  CHECK(s.factor(0, 0.0, 100) == Approx(0.2));  // step 1 of 5 warmup steps
}

TEST_CASE("targets without anchor statistics are not scored") {
  // Values far from zero: a target read with placeholder statistics (loc 0, scale 1e-6) would
  // be asinh(~1e9) ~ 21 and dominate the loss. Masking the first two of four patches leaves the
  // targets of positions 0 and 1 without statistics; they must carry no weight.
  auto model = test::tiny_model(2);
  orrery::Batch b;
  b.values = at::randn({4, 1, 128}) + 1000;
  b.observed = at::ones({4, 1, 128}, at::kBool);
  b.series_ids = at::zeros({4, 1}, at::kLong);
  at::Tensor keep = at::ones({4, 1, 4}, at::kBool);
  keep.narrow(-1, 0, 2).fill_(false);
  at::NoGradGuard g;
  const double masked = model->loss(b, keep).item<double>();
  const double plain = model->loss(b).item<double>();
  INFO("masked " << masked << " plain " << plain);
  CHECK(masked < 3 * plain + 1);
  CHECK(masked < 5.0);
}

TEST_CASE("a routed optimizer sends each parameter to the first group that matches") {
  auto& reg = orrery::Registry::global();
  auto model = test::tiny_model();
  auto groups = orrery::optimizer_groups_from_json(Json::array({
      {{"name", "adamw"}, {"options", {{"lr", 0.0}}}, {"params", {{"role", "hidden"}, {"stack", true}}}},
      {{"name", "adamw"}, {"options", {{"lr", 1e-2}}}}}));
  orrery::RoutedOptimizer opt(reg, groups, model->params(), model->parametrisation());
  auto routing = opt.describe();
  REQUIRE(routing.size() == 2);
  int64_t hidden_in_stack = 0;
  for (const auto& p : model->params())
    hidden_in_stack += p.info.role == orrery::Role::hidden && p.info.stack_depth > 0;
  CHECK(routing[0]["tensors"].get<int64_t>() == hidden_in_stack);
  CHECK(routing[0]["tensors"].get<int64_t>() + routing[1]["tensors"].get<int64_t>() ==
        static_cast<int64_t>(model->params().size()));

  std::vector<at::Tensor> before;
  for (const auto& p : model->params()) before.push_back(p.tensor.detach().clone());
  auto data = reg.create<PluginKind::data>("synthetic", Json::object(), orrery::DataContext{});
  model->loss(data->sample({4, 128, 0})).backward();
  opt.step(orrery::StepScalars{});
  for (size_t i = 0; i < before.size(); ++i) {
    const auto& p = model->params()[i];
    INFO(p.info.name);
    const bool frozen = p.info.role == orrery::Role::hidden && p.info.stack_depth > 0;  // lr 0
    CHECK(at::equal(before[i], p.tensor.detach()) == frozen);
  }
}

TEST_CASE("a group follows only the run schedules it names") {
  // nanochat's AdamW groups keep their own betas and decay (schedules = {"lr"}): at a schedule
  // multiplier of 0 the group that follows the learning-rate schedule stands still while the
  // one that follows none still moves; applied() shows which scalars each keeps.
  auto& reg = orrery::Registry::global();
  auto model = test::tiny_model();
  auto groups = orrery::optimizer_groups_from_json(Json::array({
      {{"name", "adamw"}, {"options", {{"lr", 1e-2}}}, {"params", {{"role", "hidden"}}}, {"schedules", Json::array({"lr"})}},
      {{"name", "adamw"}, {"options", {{"lr", 1e-2}}}, {"schedules", Json::array()}}}));
  orrery::RoutedOptimizer opt(reg, groups, model->params(), model->parametrisation());
  CHECK(opt.describe()[0]["schedules"] == Json::array({"lr"}));
  CHECK(opt.describe()[1]["schedules"] == Json::array());
  std::vector<at::Tensor> before;
  for (const auto& p : model->params()) before.push_back(p.tensor.detach().clone());
  auto data = reg.create<PluginKind::data>("synthetic", Json::object(), orrery::DataContext{});
  model->loss(data->sample({4, 128, 0})).backward();
  opt.step(orrery::StepScalars{0.0, 0.0, 0.5});
  for (size_t i = 0; i < before.size(); ++i) {
    const auto& p = model->params()[i];
    INFO(p.info.name);
    CHECK(at::equal(before[i], p.tensor.detach()) == (p.info.role == orrery::Role::hidden));
  }
  // The rate each group logs is the rate it steps at: the group without "lr" keeps its base.
  CHECK(opt.groups()[0].lr(0.25) == 0.25e-2);
  CHECK(opt.groups()[1].lr(0.25) == 1e-2);
  auto cfg = orrery::TrainConfig::from_json({{"steps", 2}, {"batch_size", 4}, {"context_length", 64}, {"clip", 0},
                                             {"log_every", 1}, {"quiet", true},
                                             {"schedule", {{"kind", "constant"}, {"warmup", 2}}}});
  orrery::MetricsBus bus;
  std::vector<Json> events;
  bus.subscribe([&](const Json& e) {
    if (e["event"] == "train") events.push_back(e);
  });
  orrery::train(*model, *data, opt, cfg, bus);
  REQUIRE(events.size() == 2);
  CHECK(events[0]["lr"]["adamw:hidden"].get<double>() < 1e-2);  // warming up
  CHECK(events[0]["lr"]["adamw:rest"].get<double>() == 1e-2);
  CHECK(events[1]["lr"]["adamw:rest"].get<double>() == 1e-2);

  const orrery::ScheduleSet lr_only = orrery::ScheduleSet::from_json(Json::array({"lr"}), "g");
  const orrery::StepScalars s = lr_only.applied({0.25, 0.5, 0.9});
  CHECK(s.lr_factor == 0.25);
  CHECK(s.wd_factor == 1.0);
  CHECK(s.momentum < 0);
  CHECK(orrery::ScheduleSet{}.applied({0.25, 0.5, 0.9}).momentum == 0.9);
  CHECK_THROWS_WITH(orrery::ScheduleSet::from_json(Json::array({"lr", "momentun"}), "optimizer group 1.schedules"),
                    Catch::Contains("optimizer group 1.schedules: unknown schedule 'momentun'"));
  CHECK_THROWS_WITH(orrery::ScheduleSet::from_json(Json::array({"lr", "lr"}), "g"), Catch::Contains("named twice"));
  CHECK_THROWS_WITH(orrery::ScheduleSet::from_json("lr", "g"), Catch::Contains("must be a list of schedule names"));
}

TEST_CASE("routing errors name the parameter or the group") {
  auto& reg = orrery::Registry::global();
  auto model = test::tiny_model();
  auto only_hidden = orrery::optimizer_groups_from_json(Json::array({
      {{"name", "adamw"}, {"params", {{"role", "hidden"}}}}}));
  CHECK_THROWS_WITH(orrery::RoutedOptimizer(reg, only_hidden, model->params(), model->parametrisation()),
                    Catch::Contains("matches no optimizer group") && Catch::Contains("patch_proj.linear1.weight"));
  auto empty = orrery::optimizer_groups_from_json(Json::array({
      {{"name", "adamw"}}, {{"name", "adamw"}, {"params", {{"name", "*.weight"}}}}}));
  CHECK_THROWS_WITH(orrery::RoutedOptimizer(reg, empty, model->params(), model->parametrisation()),
                    Catch::Contains("optimizer group 2 (adamw) matches no parameter"));
  CHECK_THROWS_WITH(orrery::optimizer_groups_from_json(Json::array({{{"name", "adamw"}, {"params", {{"role", "hiden"}}}}})),
                    Catch::Contains("unknown role 'hiden'"));
  CHECK_THROWS_WITH(orrery::optimizer_groups_from_json(Json::array({{{"name", "adamw"}, {"params", {{"rolle", "hidden"}}}}})),
                    Catch::Contains("unknown selector 'rolle'"));
}

TEST_CASE("gradient accumulation draws accumulate micro-batches per step and averages their loss") {
  auto& reg = orrery::Registry::global();
  // Records every batch it hands out, so the test can recompute the step's loss.
  struct Recording : orrery::DataSource {
    std::unique_ptr<orrery::DataSource> inner;
    mutable std::vector<orrery::Batch> batches;  // data_workers = 0: drawn on the step's thread
    orrery::Batch sample(const orrery::SampleRequest& r) const override {
      batches.push_back(inner->sample(r));
      return batches.back();
    }
  } data;
  data.inner = reg.create<PluginKind::data>("synthetic", Json::object(), orrery::DataContext{});
  auto model = test::tiny_model();
  auto reference = test::tiny_model();  // the same weights: the loss before the first update
  auto opt = reg.create<PluginKind::optimizer>("adamw", Json{{"lr", 3e-3}}, model->params(), model->parametrisation());
  auto cfg = orrery::TrainConfig::from_json({{"steps", 1}, {"batch_size", 4}, {"accumulate", 3},
                                             {"context_length", 128}, {"cpm", false}, {"quiet", true},
                                             {"data_workers", 0}});  // draws nothing ahead
  orrery::MetricsBus bus;
  auto r = orrery::train(*model, data, *opt, cfg, bus);
  REQUIRE(data.batches.size() == 3);
  double mean = 0;
  for (const auto& b : data.batches) {
    CHECK(b.values.size(0) == 4);
    mean += reference->loss(b).item<double>() / 3;
  }
  CHECK(r.final_loss == Approx(mean).epsilon(1e-5));
  CHECK_THROWS_WITH(orrery::TrainConfig::from_json({{"accumulate", 0}}), Catch::Contains("'accumulate' of training must be >= 1"));
}

// ---- diagnostics: validation, forecast snapshots, update RMS ----------------------------

namespace {
struct Events {
  std::vector<Json> all;
  std::vector<Json> of(const std::string& kind) const {
    std::vector<Json> out;
    for (const auto& e : all)
      if (e["event"] == kind) out.push_back(e);
    return out;
  }
  std::vector<int64_t> steps(const std::string& kind) const {
    std::vector<int64_t> out;
    for (const auto& e : of(kind)) out.push_back(e["step"].get<int64_t>());
    return out;
  }
};

// Trains the tiny model on synthetic data (held-out source: another context seed) and returns
// every published event.
Events train_with(const Json& options, bool with_validation = true, const Json& optimizer = {}) {
  auto& reg = orrery::Registry::global();
  auto model = test::tiny_model(3);
  auto data = reg.create<PluginKind::data>("synthetic", Json::object(), orrery::DataContext{3});
  auto held_out = reg.create<PluginKind::data>("synthetic", Json::object(), orrery::DataContext{1000006});
  std::unique_ptr<orrery::Optimizer> opt;
  if (optimizer.is_null())
    opt = reg.create<PluginKind::optimizer>("adamw", Json{{"lr", 3e-3}}, model->params(), model->parametrisation());
  else
    opt = std::make_unique<orrery::RoutedOptimizer>(reg, orrery::optimizer_groups_from_json(optimizer),
                                                    model->params(), model->parametrisation());
  Json o = {{"batch_size", 4}, {"context_length", 64}, {"quiet", true}};
  o.update(options);
  orrery::MetricsBus bus;
  Events ev;
  bus.subscribe([&](const Json& e) { ev.all.push_back(e); });
  orrery::train(*model, *data, *opt, orrery::TrainConfig::from_json(o), bus,
                with_validation ? held_out.get() : nullptr);
  return ev;
}
}  // namespace

TEST_CASE("validation runs every val_every steps and at the end, after that step's train event") {
  auto ev = train_with({{"steps", 30}, {"log_every", 5}, {"val_every", 10}, {"forecast_series", 0}});
  CHECK(ev.steps("val") == std::vector<int64_t>{10, 20, 30});
  for (const auto& v : ev.of("val")) {
    CHECK(std::isfinite(v["loss"].get<double>()));
    CHECK(v["loss"].get<double>() > 0);
    CHECK(v.contains("elapsed_s"));
  }
  CHECK(ev.of("forecast").empty());
  CHECK(ev.all.back()["event"] == "end");
  // Order at step 10: the train event, then validation.
  for (size_t i = 1; i < ev.all.size(); ++i)
    if (ev.all[i]["event"] == "val") CHECK(ev.all[i - 1]["event"] == "train");

  SECTION("0 = every 4 x log_every, and the last step when it is not a multiple") {
    auto d = train_with({{"steps", 25}, {"log_every", 5}, {"forecast_series", 0}});
    CHECK(d.steps("val") == std::vector<int64_t>{20, 25});
  }
  SECTION("val_batches = 0 or no held-out source: none") {
    CHECK(train_with({{"steps", 10}, {"log_every", 5}, {"val_every", 5}, {"val_batches", 0},
                      {"forecast_series", 0}}).of("val").empty());
    CHECK(train_with({{"steps", 10}, {"log_every", 5}, {"val_every", 5}}, false).of("val").empty());
  }
}

TEST_CASE("a run cut short still validates its last step") {
  auto& reg = orrery::Registry::global();
  auto model = test::tiny_model(4);
  auto data = reg.create<PluginKind::data>("synthetic", Json::object(), orrery::DataContext{4});
  auto held_out = reg.create<PluginKind::data>("synthetic", Json::object(), orrery::DataContext{5});
  auto opt = reg.create<PluginKind::optimizer>("adamw", Json::object(), model->params(), model->parametrisation());
  auto cfg = orrery::TrainConfig::from_json({{"steps", 50}, {"batch_size", 2}, {"context_length", 64},
                                             {"log_every", 1}, {"val_every", 5}, {"quiet", true}});
  orrery::MetricsBus bus;
  orrery::Interrupt interrupt;
  Events ev;
  bus.subscribe([&](const Json& e) {
    ev.all.push_back(e);
    if (e["event"] == "train" && e["step"] == 7) interrupt.request();  // Ctrl-C
  });
  auto r = orrery::train(*model, *data, *opt, cfg, bus, held_out.get(), &interrupt);
  CHECK(r.interrupted);
  CHECK(r.steps == 7);
  CHECK(ev.steps("val") == std::vector<int64_t>{5, 7});
  CHECK(ev.steps("forecast") == std::vector<int64_t>{5, 7});
  CHECK(ev.all.back()["event"] == "end");
}

TEST_CASE("validation and snapshots leave the training bit-identical") {
  auto losses = [](const Events& ev) {
    std::vector<double> out;
    for (const auto& e : ev.of("train")) out.push_back(e["loss"].get<double>()), out.push_back(e["grad_norm"].get<double>());
    return out;
  };
  const Json o = {{"steps", 12}, {"log_every", 1}, {"val_every", 3}, {"forecast_every", 2}};
  auto with = train_with(o, true), without = train_with(o, false);
  REQUIRE(with.of("val").size() == 4);
  REQUIRE(with.of("forecast").size() == 6);
  CHECK(without.of("val").empty());
  REQUIRE(losses(with).size() == 24);
  CHECK(losses(with) == losses(without));  // exact: the same random stream and data
}

TEST_CASE("forecast snapshots: history, target and sorted quantiles of held-out series") {
  auto ev = train_with({{"steps", 20}, {"log_every", 5}, {"val_every", 10}, {"forecast_series", 3},
                        {"context_length", 256}, {"batch_size", 4}});
  auto snaps = ev.of("forecast");
  REQUIRE(snaps.size() == 2);
  CHECK(ev.steps("forecast") == std::vector<int64_t>{10, 20});
  for (const auto& f : snaps) {
    // Valid JSON as written (NaN would not be): a dump parses back.
    const Json back = Json::parse(f.dump());
    CHECK(back["horizon"] == 64);  // context 256 / 4, a multiple of the 32-step patch
    REQUIRE(back["levels"].size() == 9);
    REQUIRE(back["series"].size() == 3);
    for (size_t i = 0; i < 3; ++i) {
      const auto& s = back["series"][i];
      CHECK(s["name"] == "val/" + std::to_string(i));
      CHECK(s["history"].size() == 192);  // min(256 - 64, 4 x 64)
      CHECK(s["target"].size() == 64);
      for (const auto& x : s["history"]) CHECK((x.is_number() || x.is_null()));
      REQUIRE(s["quantiles"].size() == 9);
      for (const auto& row : s["quantiles"]) REQUIRE(row.size() == 64);
      for (size_t h = 0; h < 64; ++h)
        for (size_t q = 1; q < 9; ++q)
          CHECK(s["quantiles"][q][h].get<double>() >= s["quantiles"][q - 1][h].get<double>());
    }
  }
  SECTION("the horizon is at least one patch; forecast_series is capped by the batch") {
    auto e = train_with({{"steps", 2}, {"log_every", 1}, {"forecast_series", 9}, {"batch_size", 2},
                         {"val_batches", 0}});
    REQUIRE(e.of("forecast").size() == 1);  // the end; snapshots need no validation batches
    const auto f = e.of("forecast")[0];
    CHECK(f["horizon"] == 32);
    CHECK(f["series"].size() == 2);
    CHECK(f["series"][0]["history"].size() == 32);
  }
}

TEST_CASE("train events carry update and weight RMS per optimizer group") {
  const Json routed = Json::array({
      {{"name", "normuon"}, {"options", {{"lr", 0.02}}}, {"params", {{"role", "hidden"}, {"stack", true}}}},
      {{"name", "adamw"}, {"options", {{"lr", 3e-3}}}}});
  auto ev = train_with({{"steps", 4}, {"log_every", 2}, {"val_batches", 0}, {"forecast_series", 0}},
                       false, routed);
  auto trains = ev.of("train");
  REQUIRE(trains.size() == 2);
  for (const auto& t : trains) {
    INFO(t.dump());
    for (const char* key : {"update_rms", "param_rms"}) {
      REQUIRE(t[key].size() == 2);
      for (const char* label : {"normuon:hidden", "adamw:rest"}) {
        REQUIRE(t[key].contains(label));
        CHECK(t[key][label].get<double>() > 0);
        CHECK(std::isfinite(t[key][label].get<double>()));
      }
    }
    CHECK(t.contains("loss"));  // the old fields stay
    CHECK(t.contains("series_per_s"));
  }
  SECTION("a plain optimizer is one group, 'all'") {
    auto plain = train_with({{"steps", 2}, {"log_every", 1}, {"forecast_series", 0}}, false);
    for (const auto& t : plain.of("train")) {
      CHECK(t["update_rms"].size() == 1);
      CHECK(t["update_rms"]["all"].get<double>() > 0);
      CHECK(t["param_rms"]["all"].get<double>() > 0);
    }
  }
}

TEST_CASE("group labels name optimizer and roles, unique by group number") {
  auto& reg = orrery::Registry::global();
  auto model = test::tiny_model();
  auto groups = orrery::optimizer_groups_from_json(Json::array({
      {{"name", "adamw"}, {"params", {{"stack", true}}}},
      {{"name", "sgd"}, {"params", {{"role", Json::array({"bias", "gain"})}}}},
      {{"name", "adamw"}, {"params", {{"name", "patch_proj.*"}}}},
      {{"name", "adamw"}}}));
  orrery::RoutedOptimizer opt(reg, groups, model->params(), model->parametrisation());
  std::vector<std::string> labels;
  for (const auto& g : opt.groups()) labels.push_back(g.label);
  CHECK(labels == std::vector<std::string>{"adamw:rest#1", "sgd:bias,gain", "adamw:patch_proj.*", "adamw:rest#4"});
}

TEST_CASE("the update RMS of a plain SGD step is lr x the gradient's RMS") {
  auto& reg = orrery::Registry::global();
  auto model = test::tiny_model(6);
  auto data = reg.create<PluginKind::data>("synthetic", Json::object(), orrery::DataContext{6});
  auto opt = reg.create<PluginKind::optimizer>("sgd", Json{{"lr", 0.05}, {"momentum", 0.0}},
                                               model->params(), model->parametrisation());
  auto cfg = orrery::TrainConfig::from_json({{"steps", 1}, {"batch_size", 4}, {"context_length", 64},
                                             {"clip", 0}, {"log_every", 1}, {"quiet", true},
                                             {"schedule", {{"kind", "constant"}, {"warmup", 0}}}});
  orrery::MetricsBus bus;
  std::vector<Json> events;
  bus.subscribe([&](const Json& e) { events.push_back(e); });
  orrery::train(*model, *data, *opt, cfg, bus);
  REQUIRE(events.front()["event"] == "train");
  const double lr = events.front()["lr"]["all"];  // every group's rate: one group here
  CHECK(lr == 0.05);
  // The step's gradients are still in .grad(): the update is lr * grad exactly.
  double grad_sq = 0, weight_sq = 0, numel = 0;
  for (const auto& p : model->params()) {
    if (p.tensor.grad().defined()) grad_sq += p.tensor.grad().to(at::kDouble).square().sum().item<double>();
    weight_sq += p.tensor.detach().to(at::kDouble).square().sum().item<double>();
    numel += static_cast<double>(p.tensor.numel());
  }
  CHECK(events.front()["update_rms"]["all"].get<double>() == Approx(lr * std::sqrt(grad_sq / numel)).epsilon(1e-3));
  CHECK(events.front()["param_rms"]["all"].get<double>() == Approx(std::sqrt(weight_sq / numel)).epsilon(1e-9));
}

TEST_CASE("the validation and snapshot options are checked and written back") {
  using orrery::TrainConfig;
  auto c = TrainConfig::from_json({{"val_every", 7}, {"val_batches", 3}, {"forecast_every", 9}, {"forecast_series", 0}});
  CHECK(c.val_every == 7);
  CHECK(c.val_batches == 3);
  CHECK(c.forecast_every == 9);
  CHECK(c.forecast_series == 0);
  const Json j = c.to_json();
  CHECK(j["val_every"] == 7);
  CHECK(j["val_batches"] == 3);
  CHECK(j["forecast_every"] == 9);
  CHECK(j["forecast_series"] == 0);
  const TrainConfig d;
  CHECK(d.val_every == 0);
  CHECK(d.val_batches == 2);
  CHECK(d.forecast_every == 0);
  CHECK(d.forecast_series == 4);
  CHECK_THROWS_WITH(TrainConfig::from_json({{"val_every", -1}}), Catch::Contains("'val_every' of training must be >= 0"));
  CHECK_THROWS_WITH(TrainConfig::from_json({{"val_batches", -2}}), Catch::Contains("'val_batches' of training must be >= 0"));
  CHECK_THROWS_WITH(TrainConfig::from_json({{"forecast_every", -1}}), Catch::Contains("'forecast_every' of training must be >= 0"));
  CHECK_THROWS_WITH(TrainConfig::from_json({{"forecast_series", -1}}), Catch::Contains("'forecast_series' of training must be >= 0"));
  CHECK_THROWS_WITH(TrainConfig::from_json({{"val_every", "often"}}), Catch::Contains("'val_every' of training must be an integer"));
  CHECK_THROWS_WITH(TrainConfig::from_json({{"val_evry", 3}}),
                    Catch::Contains("unknown option 'val_evry' for training") && Catch::Contains("val_every, val_batches, forecast_every, forecast_series"));
}

TEST_CASE("the run store writes forecast events to forecasts.jsonl, the rest to metrics.jsonl") {
  const std::string runs = test::temp_dir("run-store-forecasts");
  orrery::RunStore store(runs, "r", Json{{"x", 1}});
  auto lines = [&](const std::string& file) {
    std::vector<Json> out;
    std::ifstream in(store.dir() + "/" + file);
    for (std::string line; std::getline(in, line);) out.push_back(Json::parse(line));
    return out;
  };
  store.append_metrics({{"event", "train"}, {"step", 1}, {"loss", 1.5}});
  CHECK_FALSE(std::ifstream(store.dir() + "/forecasts.jsonl").good());  // opened on first use
  store.append_metrics({{"event", "forecast"}, {"step", 1}, {"horizon", 2},
                        {"series", {{{"name", "val/0"}, {"history", {1.0, std::nan("")}}}}}});
  store.append_metrics({{"event", "val"}, {"step", 1}, {"loss", 1.25}});
  store.append_metrics({{"event", "forecast"}, {"step", 2}});
  store.append_metrics({{"event", "end"}, {"steps", 2}});
  // Flushed per line: readable while the store is still open.
  auto metrics = lines("metrics.jsonl"), forecasts = lines("forecasts.jsonl");
  REQUIRE(metrics.size() == 3);
  CHECK(metrics[0]["event"] == "train");
  CHECK(metrics[1]["event"] == "val");
  CHECK(metrics[2]["event"] == "end");
  REQUIRE(forecasts.size() == 2);
  CHECK(forecasts[0]["series"][0]["history"][1].is_null());  // NaN is written as null
  CHECK(forecasts[1]["step"] == 2);
}
