#include <catch2/catch.hpp>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "orrery/head.h"
#include "orrery/ops.h"
#include "orrery/precision.h"
#include "orrery/host/patching.h"
#include "support.h"


using orrery::Json;

namespace {

// A quantile head with levels {0.1, 0.5, 0.9} over patches of 2 steps.
std::unique_ptr<orrery::Head> small_head(std::vector<orrery::Param>& keep_params) {
  static auto param = orrery::Registry::global().create<orrery::PluginKind::parametrisation>("sp", Json::object());
  orrery::ParamFactory f(*param, at::make_generator<at::CPUGeneratorImpl>(0), at::TensorOptions());
  orrery::HeadContext ctx{f, 8, 2};
  auto head = orrery::Registry::global().create<orrery::PluginKind::head>(
      "quantile", Json{{"levels", {0.1, 0.5, 0.9}}}, ctx);
  keep_params = f.params();
  return head;
}

}  // namespace

TEST_CASE("pinball loss equals hand-computed values") {
  std::vector<orrery::Param> params;
  auto head = small_head(params);
  // out (1,1,1,P=2,Q=3); targets y = (1, 2).
  at::Tensor out = at::tensor({0.0, 1.0, 2.0, 3.0, 3.0, 3.0}, at::kFloat).view({1, 1, 1, 2, 3});
  at::Tensor y = at::tensor({1.0, 2.0}, at::kFloat).view({1, 1, 1, 2});
  // step 1: rho_.1(1)=0.1, rho_.5(0)=0, rho_.9(-1)=0.1 -> mean 1/15
  // step 2: rho_.1(-1)=0.9, rho_.5(-1)=0.5, rho_.9(-1)=0.1 -> mean 0.5
  at::Tensor both = at::ones({1, 1, 1, 2});
  CHECK(head->loss(out, y, both).item<double>() == Approx((1.0 / 15 + 0.5) / 2));
  at::Tensor first = at::tensor({1.0, 0.0}, at::kFloat).view({1, 1, 1, 2});
  CHECK(head->loss(out, y, first).item<double>() == Approx(1.0 / 15));
}

TEST_CASE("quantiles are sorted and interpolated between knots") {
  std::vector<orrery::Param> params;
  auto head = small_head(params);
  at::Tensor out = at::tensor({2.0, 0.0, 1.0, 5.0, 4.0, 3.0}, at::kFloat).view({1, 1, 1, 2, 3});
  at::Tensor q = head->quantiles(out, {0.1, 0.3, 0.5, 0.9});  // (4,1,1,1,2)
  CHECK(q[0].flatten()[0].item<double>() == 0.0);
  CHECK(q[1].flatten()[0].item<double>() == Approx(0.5));
  CHECK(q[2].flatten()[1].item<double>() == 4.0);
  CHECK(q[3].flatten()[1].item<double>() == 5.0);
}

TEST_CASE("the causal patch scaler matches a direct computation and ignores the future") {
  const int64_t P = 4, T = 16;
  at::Tensor x = at::randn({1, 1, T}, at::kDouble).to(at::kFloat) * 3 + 100;
  at::Tensor obs = at::ones({1, 1, T}, at::kBool);
  obs[0][0][1] = false;
  obs[0][0][9] = false;
  auto s = orrery::causal_patch_scale(x, obs, P);
  for (int64_t n = 0; n < T / P; ++n) {  // direct mean / Bessel std up to the patch's end
    double sum = 0, sq = 0;
    int cnt = 0;
    for (int64_t t = 0; t < (n + 1) * P; ++t)
      if (obs[0][0][t].item<bool>()) sum += x[0][0][t].item<double>(), ++cnt;
    const double mean = sum / cnt;
    for (int64_t t = 0; t < (n + 1) * P; ++t)
      if (obs[0][0][t].item<bool>()) sq += std::pow(x[0][0][t].item<double>() - mean, 2);
    CHECK(s.loc[0][0][n].item<double>() == Approx(mean).epsilon(1e-6));
    CHECK(s.scale[0][0][n].item<double>() == Approx(std::sqrt(sq / (cnt - 1))).epsilon(1e-5));
  }
  CHECK(s.z[0][0][1].item<double>() == 0.0);  // unobserved -> 0

  at::Tensor later = x.clone();
  later[0][0][13] += 1000;  // patch 3
  auto s2 = orrery::causal_patch_scale(later, obs, P);
  CHECK(at::equal(s.loc.narrow(-1, 0, 3), s2.loc.narrow(-1, 0, 3)));
  CHECK(at::equal(s.scale.narrow(-1, 0, 3), s2.scale.narrow(-1, 0, 3)));
  CHECK(at::equal(s.z.narrow(-1, 0, 12), s2.z.narrow(-1, 0, 12)));
  CHECK(s.loc[0][0][3].item<double>() != s2.loc[0][0][3].item<double>());
}

TEST_CASE("a windowed scaler takes each patch's last W patches, the whole history's where they say too little") {
  const int64_t P = 4, T = 40, W = 2;
  at::Tensor x = (at::arange(T, at::kDouble) * 0.5 + at::sin(at::arange(T, at::kDouble) * 1.3)).view({1, 1, T}) + 50;
  x.narrow(-1, 32, 8).fill_(7.0);  // patches 8 and 9: flat, so the window of patch 9 has no spread
  at::Tensor obs = at::ones({1, 1, T}, at::kBool);
  obs[0][0][2] = false;
  obs.narrow(-1, 16, 11).fill_(false);  // patches 4 and 5 unobserved, patch 6 holds one point
  auto s = orrery::causal_patch_scale(x, obs, P, 1e-6, W);
  auto whole = orrery::causal_patch_scale(x, obs, P);
  CHECK(at::equal(s.count, whole.count));  // the whole history's count either way
  auto stats = [&](int64_t from, int64_t to) {  // direct mean and Bessel std over observed steps [from, to)
    double sum = 0, sq = 0;
    int cnt = 0;
    for (int64_t t = from; t < to; ++t)
      if (obs[0][0][t].item<bool>()) sum += x[0][0][t].item<double>(), ++cnt;
    for (int64_t t = from; t < to; ++t)
      if (obs[0][0][t].item<bool>()) sq += std::pow(x[0][0][t].item<double>() - sum / cnt, 2);
    return std::tuple{cnt, sum / cnt, std::sqrt(sq / std::max(cnt - 1, 1))};
  };
  // Patches 0-3 and 7-8: their window; 4 and 5 (nothing observed): patch 3's; 6 (one point in
  // its window) and 9 (a flat window): the whole history's.
  const std::vector<int64_t> source = {0, 1, 2, 3, 3, 3, 6, 7, 8, 9};
  for (int64_t n = 0; n < T / P; ++n) {
    INFO("patch " << n);
    const int64_t k = source[static_cast<size_t>(n)];
    const bool whole_history = k == 6 || k == 9;
    auto [cnt, mean, sd] = stats(whole_history ? 0 : std::max<int64_t>(0, k + 1 - W) * P, (k + 1) * P);
    CHECK(cnt >= 2);
    CHECK(s.loc[0][0][n].item<double>() == Approx(mean).epsilon(1e-12));
    CHECK(s.scale[0][0][n].item<double>() == Approx(sd).epsilon(1e-9));
    if (whole_history) CHECK(s.loc[0][0][n].item<double>() == whole.loc[0][0][n].item<double>());
  }
  // A window as long as the series is the whole history, bit for bit.
  auto all = orrery::causal_patch_scale(x, obs, P, 1e-6, T / P);
  CHECK(at::equal(all.loc, whole.loc));
  CHECK(at::equal(all.scale, whole.scale));
  CHECK(at::equal(all.z, whole.z));
}

TEST_CASE("a windowed scaler keeps a small spread after a large level shift") {
  // A level 1e9 above the series' start with a spread of 1e-3: differences of running sums over
  // the whole history would lose it; the window's own two passes do not.
  const int64_t P = 4, T = 32;
  at::Tensor x = at::zeros({1, 1, T}, at::kDouble);
  x.narrow(-1, 16, 16).copy_(1e9 + 1e-3 * at::sin(at::arange(16, at::kDouble)));
  at::Tensor obs = at::ones({1, 1, T}, at::kBool);
  auto s = orrery::causal_patch_scale(x, obs, P, 1e-6, 2);
  const at::Tensor last = x.narrow(-1, 24, 8).flatten();
  CHECK(s.loc[0][0][7].item<double>() == Approx(last.mean().item<double>()).epsilon(1e-14));
  CHECK(s.scale[0][0][7].item<double>() == Approx(last.std().item<double>()).epsilon(1e-4));
}

TEST_CASE("the scaler gives loc 0 and the minimum scale before any observation") {
  at::Tensor x = at::full({1, 1, 8}, 5.0);
  at::Tensor obs = at::zeros({1, 1, 8}, at::kBool);
  obs[0][0][6] = true;
  auto s = orrery::causal_patch_scale(x, obs, 4);
  CHECK(s.loc[0][0][0].item<double>() == 0.0);
  CHECK(s.scale[0][0][0].item<double>() == Approx(1e-6));
  CHECK(s.loc[0][0][1].item<double>() == 5.0);
}

TEST_CASE("the model is causal over patches, with and without missing patches") {
  const bool with_gap = GENERATE(false, true);  // a gap takes the explicit attention-mask path
  INFO("with a fully unobserved patch: " << with_gap);
  auto model = test::tiny_model();
  orrery::Batch b;
  b.values = at::randn({2, 1, 128});
  b.observed = at::ones({2, 1, 128}, at::kBool);
  if (with_gap) b.observed.narrow(-1, 32, 32).fill_(false);
  b.series_ids = at::zeros({2, 1}, at::kLong);
  at::NoGradGuard g;
  at::Tensor h1 = model->hidden(b);
  b.values.narrow(-1, 96, 32).add_(50.0);  // change the last patch only
  at::Tensor h2 = model->hidden(b);
  CHECK(at::allclose(h1.narrow(2, 0, 3), h2.narrow(2, 0, 3), 1e-5, 1e-6));
  CHECK(!at::allclose(h1.narrow(2, 3, 1), h2.narrow(2, 3, 1)));
}

TEST_CASE("contiguous patch masks have the right shape and rate bounds") {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1);
  at::Tensor keep = orrery::contiguous_patch_mask(256, 1, 64, 16, 0.4, gen);
  CHECK(keep.sizes() == at::IntArrayRef({256, 1, 64}));
  const double masked = 1.0 - keep.to(at::kFloat).mean().item<double>();
  CHECK(masked > 0.1);  // E[p] = 0.2
  CHECK(masked < 0.3);
  at::Tensor none = orrery::contiguous_patch_mask(8, 1, 64, 16, 0.0, gen);
  CHECK(none.all().item<bool>());
}

TEST_CASE("the point head's MSE and MAE equal hand-computed values and fill every level") {
  static auto param = orrery::Registry::global().create<orrery::PluginKind::parametrisation>("sp", Json::object());
  for (auto [loss, expected] : {std::pair{"mse", 2.5}, {"mae", 1.5}}) {
    orrery::ParamFactory f(*param, at::make_generator<at::CPUGeneratorImpl>(0), at::TensorOptions());
    orrery::HeadContext ctx{f, 8, 2};
    auto head = orrery::Registry::global().create<orrery::PluginKind::head>("point", Json{{"loss", loss}}, ctx);
    at::Tensor out = at::tensor({0.0, 3.0}, at::kFloat).view({1, 1, 1, 2, 1});
    at::Tensor y = at::tensor({1.0, 5.0}, at::kFloat).view({1, 1, 1, 2});
    CHECK(head->loss(out, y, at::ones({1, 1, 1, 2})).item<double>() == Approx(expected));
    at::Tensor q = head->quantiles(out, {0.1, 0.5, 0.9});
    CHECK(q.sizes() == at::IntArrayRef({3, 1, 1, 1, 2}));
    CHECK(q[2][0][0][0][1].item<double>() == 3.0);
  }
}

TEST_CASE("scaled_linear: m (x W^T + b) forward, alpha-scaled products backward, any bias and precision") {
  at::manual_seed(5);
  const double m = 0.37, gx = 1.9, gw = 0.21;
  for (bool with_bias : {true, false}) {
    at::Tensor x = at::randn({2, 3, 8}).set_requires_grad(true), w = at::randn({5, 8}).set_requires_grad(true);
    at::Tensor b = with_bias ? at::randn({5}).set_requires_grad(true) : at::Tensor();
    at::Tensor dy = at::randn({2, 3, 5});
    at::Tensor y = orrery::scaled_linear(x, w, b, m, gx, gw);
    const at::Tensor expect = m * (at::matmul(x, w.t()) + (with_bias ? b : at::zeros({5})));
    CHECK(at::allclose(y, expect, 1e-5, 1e-6));
    y.backward(dy);
    const at::Tensor dy2 = dy.reshape({6, 5}), x2 = x.detach().reshape({6, 8});
    CHECK(at::allclose(x.grad(), gx * at::matmul(dy, w.detach()), 1e-5, 1e-6));
    CHECK(at::allclose(w.grad(), gw * at::matmul(dy2.t(), x2), 1e-5, 1e-6));
    if (with_bias) CHECK(at::allclose(b.grad(), gw * dy2.sum(0), 1e-5, 1e-6));
  }
  // Without a gradient to record: the forward alone.
  {
    at::NoGradGuard no_grad;
    const at::Tensor x = at::randn({4, 8}), w = at::randn({5, 8});
    CHECK(at::allclose(orrery::scaled_linear(x, w, {}, m, gx, gw), m * at::matmul(x, w.t()), 1e-5, 1e-6));
  }
  // Under bf16 autocast the products run in bf16 and every gradient comes back in its input's dtype.
  at::Tensor x = at::randn({4, 8}).set_requires_grad(true), w = at::randn({5, 8}).set_requires_grad(true);
  at::Tensor y;
  {
    orrery::AutocastGuard autocast(c10::DeviceType::CPU, orrery::Precision::bf16);
    y = orrery::scaled_linear(x, w, at::Tensor(), m, gx, gw);
  }
  CHECK(y.scalar_type() == at::kBFloat16);
  y.to(at::kFloat).sum().backward();
  CHECK(x.grad().scalar_type() == at::kFloat);
  CHECK(w.grad().scalar_type() == at::kFloat);
  CHECK(at::allclose(w.grad(), gw * at::ones({4, 5}).t().matmul(x.detach()), 2e-2, 2e-2));
}
