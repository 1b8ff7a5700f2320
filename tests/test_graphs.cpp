// Recorded-and-replayed work (graphed_call.h): the contract, forecasts and training steps through
// it. On this CPU a replay runs the recorded work again, so what these tests check is everything
// but the CUDA graph itself: inputs copied into place, results read from where the work leaves
// them, gradients kept and zeroed in place, and ops that never read device values on the host.
#include <catch2/catch.hpp>

#include "orrery/data_source.h"
#include "orrery/host/graphed_call.h"
#include "orrery/host/metrics_bus.h"
#include "orrery/optimizer.h"
#include "orrery/host/trainer.h"
#include "support.h"

using orrery::Json;
using orrery::PluginKind;

namespace {

orrery::Batch seeded_batch(int64_t rows, int64_t steps, uint64_t seed) {
  auto data = orrery::Registry::global().create<PluginKind::data>("synthetic", Json{{"seed", 3}}, orrery::DataContext{});
  return data->sample({rows, steps, seed});
}

double relative_gap(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs().max() / (b.max() - b.min())).item<double>();
}

}  // namespace

TEST_CASE("a graphed call records once, replays the work, and refuses misuse") {
  auto call = orrery::make_graphed_call(c10::Device("cpu"));
  CHECK_THROWS_WITH(call->replay(), Catch::Contains("before it was captured"));
  int runs = 0;
  call->capture([&] { ++runs; });
  CHECK(runs >= 1);
  const int after_capture = runs;
  call->replay();
  call->replay();
  CHECK(runs == after_capture + 2);
  CHECK_THROWS_WITH(call->capture([] {}), Catch::Contains("captured once"));
}

TEST_CASE("CUDA graphs in a build without ORRERY_CUDA are an error that says so") {
  if (std::string(ORRERY_CUDA_BUILD) == "ON") return;  // a CUDA build records real graphs
  CHECK_THROWS_WITH(orrery::make_graphed_call(c10::Device("cuda")), Catch::Contains("ORRERY_CUDA"));
}

TEST_CASE("without host reads toto2 builds its masks, with the same outputs as the fused path") {
  auto model = test::tiny_model(3);
  const orrery::Batch b = seeded_batch(3, 256, 1);
  const at::Tensor values = b.values, observed = at::ones_like(b.observed);  // nothing missing: fused path
  orrery::ForecastOptions eager, graphed;
  graphed.graph = true;
  const auto e = model->forecast(values, observed, b.series_ids, 64, eager);
  const auto g = model->forecast(values, observed, b.series_ids, 64, graphed);
  INFO("gap " << relative_gap(g.quantiles, e.quantiles));
  CHECK(relative_gap(g.quantiles, e.quantiles) < 1e-5);
}

TEST_CASE("graphed forecasts equal eager ones for every input of a recorded shape") {
  auto model = test::tiny_model(4);
  orrery::ForecastOptions eager, graphed;
  graphed.graph = true;
  // Two batches of one shape (the second must not see the first's values), another shape, then
  // the first again; with missing values, both paths attend through the same masks.
  for (auto [rows, steps, seed] : {std::tuple{3, 256, 1}, {3, 256, 2}, {2, 192, 3}, {3, 256, 4}}) {
    const orrery::Batch b = seeded_batch(rows, steps, seed);
    const auto e = model->forecast(b.values, b.observed, b.series_ids, 48, eager);
    const auto g = model->forecast(b.values, b.observed, b.series_ids, 48, graphed);
    INFO("batch " << rows << " x " << steps << " seed " << seed << ": gap " << relative_gap(g.quantiles, e.quantiles));
    CHECK(relative_gap(g.quantiles, e.quantiles) < 1e-5);
  }
  // More shapes than the model keeps: the oldest recordings go, answers stay right.
  for (int64_t steps = 64; steps <= 64 + 32 * 9; steps += 32) {
    const orrery::Batch b = seeded_batch(1, steps, 7);
    const auto e = model->forecast(b.values, b.observed, b.series_ids, 32, eager);
    const auto g = model->forecast(b.values, b.observed, b.series_ids, 32, graphed);
    CHECK(relative_gap(g.quantiles, e.quantiles) < 1e-5);
  }
}

TEST_CASE("graphed training follows eager training, with accumulation and patch masking") {
  auto& reg = orrery::Registry::global();
  auto run = [&](bool graph, std::vector<double>& losses) {
    auto model = test::tiny_model(8);
    auto data = reg.create<PluginKind::data>("synthetic", Json{{"seed", 8}}, orrery::DataContext{});
    auto opt = reg.create<PluginKind::optimizer>("adamw", Json{{"lr", 3e-3}}, model->params(), model->parametrisation());
    orrery::TrainConfig cfg;
    cfg.steps = 30, cfg.batch_size = 4, cfg.accumulate = 2, cfg.context_length = 128, cfg.log_every = 1;
    cfg.quiet = true, cfg.graph = graph;
    orrery::MetricsBus bus;
    bus.subscribe([&](const Json& e) {
      if (e["event"] == "train") losses.push_back(e["loss"]);
    });
    orrery::train(*model, *data, *opt, cfg, bus);
    std::vector<at::Tensor> weights;
    for (auto& p : model->params()) weights.push_back(p.tensor.detach().clone());
    return weights;
  };
  std::vector<double> eager_losses, graph_losses;
  const auto eager = run(false, eager_losses);
  const auto graphed = run(true, graph_losses);
  REQUIRE(graph_losses.size() == 30);
  REQUIRE(eager_losses.size() == 30);
  for (size_t i = 0; i < eager_losses.size(); ++i) {
    INFO("step " << i + 1);
    CHECK(graph_losses[i] == Approx(eager_losses[i]).epsilon(1e-4));
  }
  for (size_t i = 0; i < eager.size(); ++i) CHECK(at::allclose(graphed[i], eager[i], 1e-3, 1e-5));
  CHECK(graph_losses.back() < graph_losses.front());
}
