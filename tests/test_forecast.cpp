#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cmath>

#include "support.h"

TEST_CASE("forecasts have shape (Q, B, V, H), sorted quantiles, values in data units") {
  auto model = test::tiny_model(3);
  const int64_t T = 100, H = 40;  // T not a multiple of 32: left-padded; H spans two patches
  at::Tensor t = at::arange(T, at::kFloat);
  at::Tensor values = (1000 + 20 * at::sin(t * 0.5)).view({1, 1, T}).repeat({2, 1, 1});
  values[1] *= 0.001;  // a second series on another scale
  at::Tensor observed = at::ones({2, 1, T}, at::kBool);
  auto f = model->forecast(values, observed, at::zeros({2, 1}, at::kLong), H);
  REQUIRE(f.levels.size() == 9);
  CHECK(f.quantiles.sizes() == at::IntArrayRef({9, 2, 1, H}));
  CHECK(f.quantiles.isfinite().all().item<bool>());
  CHECK((f.quantiles.diff(1, 0) >= 0).all().item<bool>());
  // Read back through the scaler: centred near each series' own level, on its own scale.
  at::Tensor median = f.quantiles[4];
  CHECK((median[0] - 1000).abs().max().item<double>() < 20 * 20);
  CHECK((median[1] - 1).abs().max().item<double>() < 0.02 * 20);
}

TEST_CASE("forecasting other levels interpolates, and missing values are tolerated") {
  auto model = test::tiny_model();
  at::Tensor values = at::randn({1, 1, 64}) + 10;
  values[0][0][10] = std::nan("");
  at::Tensor observed = at::ones({1, 1, 64}, at::kBool);
  auto f = model->forecast(values, observed, at::zeros({1, 1}, at::kLong), 5, {.levels = {0.9, 0.05, 0.5}});
  CHECK(f.levels == std::vector<double>{0.05, 0.5, 0.9});
  CHECK(f.quantiles.sizes() == at::IntArrayRef({3, 1, 1, 5}));
  CHECK(f.quantiles.isfinite().all().item<bool>());
}

TEST_CASE("a bad horizon is refused") {
  auto model = test::tiny_model();
  CHECK_THROWS_WITH(model->forecast(at::ones({1, 1, 32}), at::ones({1, 1, 32}, at::kBool),
                                    at::zeros({1, 1}, at::kLong), 0),
                    Catch::Contains("horizon must be at least 1"));
}

TEST_CASE("forecasts are affine-equivariant: forecast(a*x + b) = a*forecast(x) + b for a > 0") {
  auto model = test::tiny_model(7);
  at::Tensor x = at::randn({2, 1, 96}, at::kDouble).to(at::kFloat) * 3 + 10;
  at::Tensor obs = at::ones({2, 1, 96}, at::kBool);
  at::Tensor ids = at::zeros({2, 1}, at::kLong);
  const double a = 7.5, b = -300;
  at::Tensor base = model->forecast(x, obs, ids, 40).quantiles;
  at::Tensor moved = model->forecast(x * a + b, obs, ids, 40).quantiles;
  // float32 inputs: compare relative to the moved series' scale.
  CHECK(at::allclose(moved, base * a + b, 1e-4, 1e-3 * a));
}

TEST_CASE("a sign-averaged forecast is f(x) with -f(-x) at mirrored levels, and odd in its input") {
  auto model = test::tiny_model(9);
  at::Tensor x = at::randn({2, 1, 80}, at::kDouble) * 4 + 25;
  at::Tensor obs = at::ones({2, 1, 80}, at::kBool);
  obs[1][0][7] = false;
  at::Tensor ids = at::zeros({2, 1}, at::kLong);
  const std::vector<double> asked{0.1, 0.25, 0.5}, mirrored_set{0.1, 0.25, 0.5, 0.75, 0.9};
  orrery::ForecastOptions averaged{.levels = asked, .mean = true, .sign_average = true};
  const auto f = model->forecast(x, obs, ids, 40, averaged);
  REQUIRE(f.levels == asked);
  REQUIRE(f.quantiles.sizes() == at::IntArrayRef({3, 2, 1, 40}));
  // By hand from two plain forecasts at the closed level set: level i pairs with 1 - level i.
  const auto plus = model->forecast(x, obs, ids, 40, {.levels = mirrored_set, .mean = true});
  const auto minus = model->forecast(-x, obs, ids, 40, {.levels = mirrored_set, .mean = true});
  const int64_t own[] = {0, 1, 2}, other[] = {4, 3, 2};
  for (int i = 0; i < 3; ++i) {
    INFO("level " << asked[i]);
    CHECK(at::equal(f.quantiles[i], (plus.quantiles[own[i]] - minus.quantiles[other[i]]) / 2));
  }
  CHECK(at::equal(f.median, (plus.median - minus.median) / 2));
  CHECK(at::equal(f.mean, (plus.mean - minus.mean) / 2));
  // A model that is not odd (an untrained one is not) gives a different plain forecast.
  CHECK_FALSE(at::allclose(plus.quantiles[0], -minus.quantiles[4]));
  // Odd: the sign-averaged forecast of -x is minus the one of x, level q against 1 - q.
  const auto g = model->forecast(-x, obs, ids, 40, {.levels = mirrored_set, .sign_average = true});
  const auto h = model->forecast(x, obs, ids, 40, {.levels = mirrored_set, .sign_average = true});
  CHECK(at::equal(g.quantiles, -h.quantiles.flip(0)));
  CHECK((h.quantiles.diff(1, 0) >= 0).all().item<bool>());
  // Levels that are each other's mirrors only to within a rounding (1 - 0.8 is not 0.2 in
  // binary): the passes forecast the levels asked for, not their rounded mirrors.
  const auto pair = model->forecast(x, obs, ids, 40, {.levels = {0.2, 0.8}, .sign_average = true});
  const auto plus2 = model->forecast(x, obs, ids, 40, {.levels = {0.2, 0.8}});
  const auto minus2 = model->forecast(-x, obs, ids, 40, {.levels = {0.2, 0.8}});
  CHECK(at::equal(pair.quantiles[0], (plus2.quantiles[0] - minus2.quantiles[1]) / 2));
}

TEST_CASE("missing steps in the last context patch are forward-filled and treated as observed") {
  auto model = test::tiny_model(8);
  at::Tensor x = at::randn({1, 1, 96}) + 20;
  at::Tensor obs = at::ones({1, 1, 96}, at::kBool);
  at::Tensor ids = at::zeros({1, 1}, at::kLong);
  at::Tensor gappy = x.clone(), gappy_obs = obs.clone();
  gappy.narrow(-1, 91, 5).fill_(std::nan(""));
  gappy_obs.narrow(-1, 91, 5).fill_(false);
  at::Tensor filled = x.clone();
  filled.narrow(-1, 91, 5).fill_(x[0][0][90].item<float>());
  CHECK(at::equal(model->forecast(gappy, gappy_obs, ids, 8).quantiles,
                  model->forecast(filled, obs, ids, 8).quantiles));
}

TEST_CASE("values beyond float32's range are forecast in the scaler's float64, not dropped") {
  auto model = test::tiny_model(9);
  at::Tensor x = (at::randn({1, 1, 96}, at::kDouble) * 3 + 10);
  at::Tensor obs = at::ones({1, 1, 96}, at::kBool), ids = at::zeros({1, 1}, at::kLong);
  const double big = 1e38;  // x * big reaches 1e39, beyond float32's 3.4e38
  at::Tensor base = model->forecast(x, obs, ids, 16).quantiles;
  at::Tensor huge = model->forecast(x * big, obs, ids, 16).quantiles;
  CHECK(huge.scalar_type() == at::kDouble);
  CHECK(huge.isfinite().all().item<bool>());
  // Not the ~1e-6 of a series seen as missing. The largest quantile, not the smallest: an
  // untrained model's lowest quantile of values near 10 may sit anywhere near zero.
  CHECK(huge.abs().max().item<double>() > 1e38);
  CHECK(at::allclose(huge / big, base, 1e-5, 1e-5));
}

TEST_CASE("tiny series are forecast on their own scale, not flattened by the scaler's floor") {
  auto model = test::tiny_model(9);
  at::Tensor x = at::randn({1, 1, 96}, at::kDouble) * 0.1 + 0.5;  // below 1 in size
  at::Tensor obs = at::ones({1, 1, 96}, at::kBool), ids = at::zeros({1, 1}, at::kLong);
  at::Tensor base = model->forecast(x, obs, ids, 16).quantiles;
  // A power of two scales exactly: the quantiles are the series' own, bit for bit.
  const double two100 = std::ldexp(1.0, -100);
  CHECK(at::equal(model->forecast(x * two100, obs, ids, 16).quantiles, base * two100));
  // 1e-30 and 1e-300 likewise, up to the rounding of x * 1e-30 (before: the floor of 1e-6 made
  // both forecast like an all-zero series, a spread of about 1e-6 around the level).
  for (const double tiny : {1e-30, 1e-300}) {
    at::Tensor small = model->forecast(x * tiny, obs, ids, 16).quantiles;
    CHECK(at::allclose(small / tiny, base, 1e-4, 1e-6));
  }
  at::Tensor zeros = model->forecast(at::zeros_like(x), obs, ids, 16).quantiles;
  CHECK((zeros.abs().max().item<double>() > 1e-9));  // the floor's spread: what tiny series got before
  CHECK((model->forecast(x * 1e-30, obs, ids, 16).quantiles.abs().max().item<double>() < 1e-20));
}

TEST_CASE("a series or variate with no observation is refused, not forecast near zero") {
  auto model = test::tiny_model();
  at::Tensor x = at::randn({2, 1, 64}), obs = at::ones({2, 1, 64}, at::kBool);
  obs[1].fill_(false);
  CHECK_THROWS_WITH(model->forecast(x, obs, at::zeros({2, 1}, at::kLong), 4),
                    Catch::Contains("cannot forecast series 2: it has no observed value in its context"));
  at::Tensor nan = at::full({1, 1, 64}, std::nan(""));
  CHECK_THROWS_WITH(model->forecast(nan, at::ones({1, 1, 64}, at::kBool), at::zeros({1, 1}, at::kLong), 4),
                    Catch::Contains("series 1"));
  at::Tensor mv = at::randn({1, 2, 64}), mv_obs = at::ones({1, 2, 64}, at::kBool);
  mv_obs[0][1].fill_(false);
  CHECK_THROWS_WITH(model->forecast(mv, mv_obs, at::zeros({1, 2}, at::kLong), 4),
                    Catch::Contains("series 1, variate 2"));
}

TEST_CASE("many series are forecast in bounded passes with the result of one pass, and Ctrl-C lands between them") {
  auto model = test::tiny_model(10);
  // 600 series x (128 + 32 steps) of patches exceeds one pass's token budget.
  at::Tensor x = at::randn({600, 1, 4096}) + 5, obs = at::ones({600, 1, 4096}, at::kBool);
  at::Tensor ids = at::zeros({600, 1}, at::kLong);
  orrery::ForecastOptions o;
  auto all = model->forecast(x, obs, ids, 32, o);
  auto few = model->forecast(x.narrow(0, 590, 10), obs.narrow(0, 590, 10), ids.narrow(0, 590, 10), 32, o);
  CHECK(at::allclose(all.quantiles.narrow(1, 590, 10), few.quantiles, 1e-5, 1e-5));
  orrery::Interrupt stop;
  stop.request();
  o.interrupt = &stop;
  CHECK_THROWS_AS(model->forecast(x, obs, ids, 32, o), orrery::Interrupted);
}
