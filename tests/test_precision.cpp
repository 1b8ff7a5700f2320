// bf16 autocast (precision.h): the guard's scope, and training and forecasting under it with
// float32 weights, gradients, optimizer state and loss.
#include <catch2/catch.hpp>

#include <ATen/autocast_mode.h>

#include "orrery/data_source.h"
#include "orrery/host/metrics_bus.h"
#include "orrery/optimizer.h"
#include "orrery/precision.h"
#include "orrery/host/trainer.h"
#include "support.h"

using orrery::Json;
using orrery::PluginKind;
using orrery::Precision;

namespace {

orrery::Batch seeded_batch(int64_t rows, int64_t steps) {
  auto data = orrery::Registry::global().create<PluginKind::data>("synthetic", Json{{"seed", 3}}, orrery::DataContext{});
  return data->sample({rows, steps, 11});
}

}  // namespace

TEST_CASE("the autocast guard runs matrix products in bf16 inside its scope only, and nests") {
  const at::Tensor a = at::randn({8, 8}), b = at::randn({8, 8});
  CHECK(at::mm(a, b).scalar_type() == at::kFloat);
  {
    orrery::AutocastGuard outer(c10::DeviceType::CPU, Precision::bf16);
    CHECK(at::mm(a, b).scalar_type() == at::kBFloat16);
    {
      orrery::AutocastGuard inner(c10::DeviceType::CPU, Precision::bf16);
      CHECK(at::mm(a, b).scalar_type() == at::kBFloat16);
    }
    CHECK(at::autocast::is_autocast_enabled(c10::DeviceType::CPU));  // the inner exit keeps the outer
    orrery::AutocastGuard off(c10::DeviceType::CPU, Precision::fp32);  // fp32 changes nothing
    CHECK(at::mm(a, b).scalar_type() == at::kBFloat16);
  }
  CHECK_FALSE(at::autocast::is_autocast_enabled(c10::DeviceType::CPU));
  CHECK(at::mm(a, b).scalar_type() == at::kFloat);
}

TEST_CASE("precision names: fp32 and bf16, anything else names its owner") {
  CHECK(orrery::parse_precision("bf16", "x") == Precision::bf16);
  CHECK(std::string(orrery::precision_name(Precision::fp32)) == "fp32");
  CHECK_THROWS_WITH(orrery::parse_precision("fp16", "orrery.train option 'precision'"),
                    Catch::Contains("orrery.train option 'precision'") && Catch::Contains("fp16") &&
                        Catch::Contains("fp32 or bf16"));
  CHECK_THROWS_WITH(orrery::TrainConfig::from_json(Json{{"precision", "half"}}, "orrery.train"),
                    Catch::Contains("precision"));
  CHECK(orrery::TrainConfig::from_json(Json{{"precision", "bf16"}}).to_json()["precision"] == "bf16");
}

TEST_CASE("a bf16 loss is float32, near the fp32 loss, and its gradients are float32") {
  auto model = test::tiny_model(2);
  const orrery::Batch b = seeded_batch(4, 128);
  const double exact = model->loss(b).item<double>();
  orrery::ForwardContext ctx;
  ctx.precision = Precision::bf16;
  at::Tensor loss = model->loss(b, {}, ctx);
  CHECK(loss.scalar_type() == at::kFloat);
  const double low = loss.item<double>();
  INFO("fp32 " << exact << " bf16 " << low);
  CHECK(low != exact);                                   // autocast really ran
  CHECK(std::abs(low - exact) < 0.02 * std::abs(exact));  // bf16 has 8 bits of mantissa
  loss.backward();
  for (auto& p : model->params()) {
    CHECK(p.tensor.scalar_type() == at::kFloat);
    REQUIRE(p.tensor.grad().defined());
    CHECK(p.tensor.grad().scalar_type() == at::kFloat);
  }
  CHECK_FALSE(at::autocast::is_autocast_enabled(c10::DeviceType::CPU));
}

TEST_CASE("bf16 training follows fp32 training, with float32 optimizer state") {
  auto& reg = orrery::Registry::global();
  auto run = [&](Precision p, std::unique_ptr<orrery::Optimizer>* keep_opt) {
    auto model = test::tiny_model(4);
    auto data = reg.create<PluginKind::data>("synthetic", Json{{"seed", 4}}, orrery::DataContext{});
    auto opt = reg.create<PluginKind::optimizer>("adamw", Json{{"lr", 3e-3}}, model->params(), model->parametrisation());
    orrery::TrainConfig cfg;
    cfg.steps = 120, cfg.batch_size = 8, cfg.context_length = 128, cfg.log_every = 40, cfg.quiet = true;
    cfg.precision = p;
    orrery::MetricsBus bus;
    auto r = orrery::train(*model, *data, *opt, cfg, bus);
    if (keep_opt) {
      for (const auto& [name, t] : opt->state_tensors()) CHECK(t.scalar_type() == at::kFloat);
      *keep_opt = std::move(opt);
    }
    return r;
  };
  const auto exact = run(Precision::fp32, nullptr);
  std::unique_ptr<orrery::Optimizer> opt;
  const auto low = run(Precision::bf16, &opt);
  INFO("fp32 " << exact.first_loss << " -> " << exact.final_loss << ", bf16 " << low.first_loss << " -> "
               << low.final_loss);
  CHECK(low.final_loss < 0.92 * low.first_loss);  // it learns (fp32: -13% in these steps)
  CHECK(std::abs(low.final_loss - exact.final_loss) < 0.01 * exact.final_loss);
  CHECK(low.final_loss != exact.final_loss);
}

TEST_CASE("bf16 forecasts are near fp32's, in one pass and in blocks with the KV cache") {
  auto model = test::tiny_model(6);
  const orrery::Batch b = seeded_batch(3, 256);
  for (int64_t block : {0, 32}) {
    orrery::ForecastOptions o;
    o.decode_block_size = block;
    const auto exact = model->forecast(b.values, b.observed, b.series_ids, 64, o);
    o.precision = Precision::bf16;
    const auto low = model->forecast(b.values, b.observed, b.series_ids, 64, o);
    CHECK(low.quantiles.scalar_type() == at::kDouble);
    const double spread = (exact.quantiles.max() - exact.quantiles.min()).item<double>();
    const double diff = (low.quantiles - exact.quantiles).abs().max().item<double>();
    INFO("block " << block << ": largest difference " << diff << " of a spread " << spread);
    CHECK(diff > 0);
    CHECK(diff < 0.05 * spread);
  }
}
