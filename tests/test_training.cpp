#include <catch2/catch.hpp>

#include "orrery/data_source.h"
#include "orrery/metrics_bus.h"
#include "orrery/optimizer.h"
#include "orrery/routed_optimizer.h"
#include "orrery/trainer.h"
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
  CHECK_THROWS_WITH(orrery::Schedule::from_json({{"warmpu", 3}}), Catch::Contains("unknown schedule option 'warmpu'"));
}

TEST_CASE("1-sqrt and cosine decays, constant, and their errors") {
  orrery::Schedule s;
  s.warmup = 0, s.decay = 0.5, s.decay_shape = "1-sqrt";
  CHECK(s.factor(40, 0.4, 100) == 1.0);
  CHECK(s.factor(75, 0.75, 100) == Approx(1.0 - std::sqrt(0.5)));  // halfway through the decay
  CHECK(s.factor(100, 1.0, 100) == Approx(0.0).margin(1e-12));
  orrery::Schedule c;
  c.kind = "cosine", c.warmup = 0, c.min_lr = 0.1;
  CHECK(c.factor(0, 0.0, 100) == Approx(1.0));
  CHECK(c.factor(50, 0.5, 100) == Approx(0.55));
  CHECK(c.factor(100, 1.0, 100) == Approx(0.1));
  orrery::Schedule k;
  k.kind = "constant", k.warmup = 4;
  CHECK(k.factor(1, 0.01, 100) == Approx(0.5));
  CHECK(k.factor(99, 0.99, 100) == 1.0);
  CHECK_THROWS_WITH(orrery::Schedule::from_json({{"kind", "cosin"}}), Catch::Contains("schedule.kind 'cosin' is unknown"));
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
  CHECK_THROWS_WITH(orrery::TrainConfig::from_json({{"momentun", 1}}), Catch::Contains("unknown training option 'momentun'"));
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
  model->loss(data->sample(4, 128)).backward();
  opt.step(orrery::StepScalars{});
  for (size_t i = 0; i < before.size(); ++i) {
    const auto& p = model->params()[i];
    INFO(p.info.name);
    const bool frozen = p.info.role == orrery::Role::hidden && p.info.stack_depth > 0;  // lr 0
    CHECK(at::equal(before[i], p.tensor.detach()) == frozen);
  }
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
    std::vector<orrery::Batch> batches;
    orrery::Batch sample(int64_t b, int64_t len) override {
      batches.push_back(inner->sample(b, len));
      return batches.back();
    }
  } data;
  data.inner = reg.create<PluginKind::data>("synthetic", Json::object(), orrery::DataContext{});
  auto model = test::tiny_model();
  auto reference = test::tiny_model();  // the same weights: the loss before the first update
  auto opt = reg.create<PluginKind::optimizer>("adamw", Json{{"lr", 3e-3}}, model->params(), model->parametrisation());
  auto cfg = orrery::TrainConfig::from_json({{"steps", 1}, {"batch_size", 4}, {"accumulate", 3},
                                             {"context_length", 128}, {"cpm", false}, {"quiet", true}});
  orrery::MetricsBus bus;
  auto r = orrery::train(*model, data, *opt, cfg, bus);
  REQUIRE(data.batches.size() == 3);
  double mean = 0;
  for (const auto& b : data.batches) {
    CHECK(b.values.size(0) == 4);
    mean += reference->loss(b).item<double>() / 3;
  }
  CHECK(r.final_loss == Approx(mean).epsilon(1e-5));
  CHECK_THROWS_WITH(orrery::TrainConfig::from_json({{"accumulate", 0}}), Catch::Contains("'accumulate' must be >= 1"));
}
