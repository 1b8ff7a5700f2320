// The studentt_mixture head (Toto 1.0): its loss against hand-computed values, and its quantiles
// (numeric inversion of the mixture CDF) against closed forms of the Student-T distribution.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "orrery/head.h"
#include "support.h"

using orrery::Json;

namespace {

struct StudentHead {
  std::unique_ptr<orrery::Parametrisation> param =
      orrery::Registry::global().create<orrery::PluginKind::parametrisation>("sp", Json::object());
  std::unique_ptr<orrery::ParamFactory> factory = std::make_unique<orrery::ParamFactory>(
      *param, at::make_generator<at::CPUGeneratorImpl>(0), at::TensorOptions());
  std::unique_ptr<orrery::Head> head;
  explicit StudentHead(int k) {
    orrery::HeadContext ctx{*factory, 8, 2};
    head = orrery::Registry::global().create<orrery::PluginKind::head>("studentt_mixture", Json{{"components", k}}, ctx);
  }
};

// A head output (1, 1, 1, P = 1, 4, k) for one step: rows df, loc, scale, log weight.
at::Tensor params(std::vector<double> df, std::vector<double> loc, std::vector<double> scale,
                  std::vector<double> w) {
  std::vector<double> log_w;
  for (double x : w) log_w.push_back(std::log(x));
  const int64_t k = static_cast<int64_t>(df.size());
  return at::stack({at::tensor(df), at::tensor(loc), at::tensor(scale), at::tensor(log_w)})
      .to(at::kFloat).view({1, 1, 1, 1, 4, k});
}

double quantile(orrery::Head& h, const at::Tensor& out, double level) {
  return h.quantiles(out, {level}).flatten()[0].item<double>();
}

}  // namespace

TEST_CASE("the Student-T mixture loss equals a hand-computed value") {
  StudentHead s(1);
  // One component t_3(0, 1) at y = 1: pdf = Gamma(2)/(Gamma(1.5) sqrt(3 pi)) (4/3)^-2 = 0.206748,
  // NLL = 1.576253; robust term on the mean 0: log1p(0.5 (1/0.1)^2) = ln 51 = 3.931826.
  // 0.575 * 1.576253 + 0.425 * 3.931826 = 2.577371.
  at::Tensor out = params({3}, {0}, {1}, {1});
  at::Tensor y = at::ones({1, 1, 1, 1});
  CHECK(s.head->loss(out, y, at::ones({1, 1, 1, 1})).item<double>() == Approx(2.577371).epsilon(1e-5));
  // An unweighted point does not count.
  CHECK(s.head->loss(out, y, at::zeros({1, 1, 1, 1})).item<double>() == 0.0);
}

TEST_CASE("Student-T mixture quantiles invert the CDF") {
  StudentHead one(1), two(2);
  // Closed forms: t_2 has Q(u) = (2u - 1)/sqrt(2u(1 - u)); t_3's 0.9 quantile is 1.637744.
  CHECK(quantile(*one.head, params({2}, {0}, {1}, {1}), 0.9) == Approx(0.8 / std::sqrt(0.18)).epsilon(1e-6));
  CHECK(quantile(*one.head, params({2}, {0}, {1}, {1}), 0.25) == Approx(-0.5 / std::sqrt(0.375)).epsilon(1e-6));
  CHECK(quantile(*one.head, params({3}, {2}, {3}, {1}), 0.9) == Approx(2 + 3 * 1.637744).epsilon(1e-6));
  // A very large df is a normal: z_0.9 = 1.281552 (beyond df = 1e5 by the normal CDF itself);
  // below that the continued fraction must still converge: t_50000's 0.9 quantile is
  // z (1 + (1 + z^2)/(4 df)) to first order = 1.281569.
  CHECK(quantile(*one.head, params({1e6}, {0}, {1}, {1}), 0.9) == Approx(1.281552).epsilon(1e-5));
  CHECK(quantile(*one.head, params({5e4}, {0}, {1}, {1}), 0.9) == Approx(1.281569).epsilon(2e-6));
  // A symmetric two-component mixture has median 0, and q(u) = -q(1 - u).
  at::Tensor mix = params({3, 3}, {-5, 5}, {1, 1}, {0.5, 0.5});
  CHECK(std::fabs(quantile(*two.head, mix, 0.5)) < 1e-5);
  CHECK(quantile(*two.head, mix, 0.8) == Approx(-quantile(*two.head, mix, 0.2)).epsilon(1e-6));
  // Quantiles at several levels come back sorted, one row per level.
  at::Tensor q = two.head->quantiles(mix, {0.1, 0.3, 0.5, 0.7, 0.9});
  CHECK(q.size(0) == 5);
  CHECK((q.flatten().diff() > 0).all().item<bool>());
}

TEST_CASE("a model with the Student-T head trains, forecasts and reports median and mean") {
  orrery::ModelSpec spec = test::tiny_spec();
  spec.head = {"studentt_mixture", {{"components", 4}}};
  orrery::Model m(spec, orrery::Registry::global());
  at::Tensor x = at::sin(at::arange(128, at::kFloat) / 4).view({1, 1, 128}) + 5;
  orrery::Batch b{x, at::ones_like(x, at::kBool), at::zeros({1, 1}, at::kLong), 1};
  at::Tensor loss = m.loss(b);
  loss.backward();
  CHECK(std::isfinite(loss.item<double>()));
  orrery::ForecastOptions o;
  o.mean = true;
  auto f = m.forecast(x, b.observed, b.series_ids, 20, o);
  CHECK(f.quantiles.sizes() == at::IntArrayRef({9, 1, 1, 20}));
  CHECK((f.quantiles.diff(1, 0) >= -1e-6).all().item<bool>());
  CHECK(at::allclose(f.median, f.quantiles[4]));
  CHECK(f.mean.sizes() == at::IntArrayRef({1, 1, 20}));
  CHECK(f.mean.isfinite().all().item<bool>());
}

TEST_CASE("every head reports the median and the mean; a point forecast's mean is the point") {
  orrery::ModelSpec spec = test::tiny_spec();
  spec.head = {"point", Json::object()};
  orrery::Model m(spec, orrery::Registry::global());
  at::Tensor x = at::cos(at::arange(96, at::kFloat) / 3).view({1, 1, 96});
  orrery::ForecastOptions o;
  o.mean = true;
  auto f = m.forecast(x, at::ones_like(x, at::kBool), at::zeros({1, 1}, at::kLong), 10, o);
  CHECK(at::allclose(f.mean, f.median, 1e-5, 1e-6));
  // The mean is the midpoint rule over the quantile function at 32 levels.
  auto model = test::tiny_model();
  auto q = model->forecast(x, at::ones_like(x, at::kBool), at::zeros({1, 1}, at::kLong), 10, o);
  std::vector<double> grid;
  for (int i = 0; i < 32; ++i) grid.push_back((i + 0.5) / 32);
  auto g = model->forecast(x, at::ones_like(x, at::kBool), at::zeros({1, 1}, at::kLong), 10, {.levels = grid});
  CHECK(at::allclose(q.mean, g.quantiles.mean(0), 1e-5, 1e-6));
  CHECK(!at::allclose(q.mean, q.median, 1e-4, 1e-4));  // a real integral, not the median
}
