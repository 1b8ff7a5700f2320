// The umup parametrisation as Toto 2.0 uses it: the tau residual rule, unit-scaled multipliers,
// backward scales and learning-rate rules of u-muP (Blake et al. 2024) with Toto 2.0's
// residual constants.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "orrery/data_source.h"
#include "orrery/ops.h"
#include "support.h"

using orrery::Json;

namespace {
std::unique_ptr<orrery::Parametrisation> umup(Json o = Json::object()) {
  return orrery::Registry::global().create<orrery::PluginKind::parametrisation>("umup", o);
}
double tau(const orrery::Parametrisation& p, int i, int layers) {
  auto [branch, skip] = p.residual_weights(i, 2 * layers);
  CHECK(branch * branch + skip * skip == Approx(1.0));  // residual_add keeps unit variance
  return branch / skip;
}
}  // namespace

TEST_CASE("the tau rule reproduces the reference table (residual_mult 0.75, ratio sqrt(128/ln 128))") {
  auto p = umup();
  auto [layers, first_attn, first_mlp, last_attn, last_mlp] = GENERATE(table<int, double, double, double, double>({
      {4, 0.5206, 0.0899, 0.3834, 0.0697},
      {12, 0.3005, 0.0560, 0.2109, 0.0402},
      {24, 0.2125, 0.0405, 0.1474, 0.0284},
      {48, 0.1503, 0.0289, 0.1037, 0.0201},
  }));
  INFO("L = " << layers);
  CHECK(tau(*p, 0, layers) == Approx(first_attn).margin(5e-5));
  CHECK(tau(*p, 1, layers) == Approx(first_mlp).margin(5e-5));
  CHECK(tau(*p, 2 * layers - 2, layers) == Approx(last_attn).margin(5e-5));
  CHECK(tau(*p, 2 * layers - 1, layers) == Approx(last_mlp).margin(5e-5));
  // Outside the stack (the patch MLPs) tau = 1: an even mix.
  auto [branch, skip] = p->residual_weights(-1, 0);
  CHECK(branch == Approx(std::sqrt(0.5)));
  CHECK(skip == Approx(std::sqrt(0.5)));
}

TEST_CASE("umup multipliers, init and learning-rate rules") {
  auto p = umup(Json{{"muon_rule", "toto2"}});
  orrery::ParamInfo hidden{"w", orrery::Role::hidden, 256, 1024, 2, 4, 0, {1024, 256}};
  orrery::ParamInfo readout{"r", orrery::Role::readout, 1024, 288, -1, 0, 0, {288, 1024}};
  CHECK(p->linear_multiplier(hidden) == Approx(1.0 / 16));
  CHECK(p->linear_multiplier(readout) == Approx(1.0 / 1024));
  CHECK(p->activation_scale("silu") == Approx(1.766783).epsilon(1e-6));
  CHECK(p->attention_scale(64) == Approx(1.0 / 64));
  // Adam: weights fan_in^-1/2 * depth^-1/2; Muon-family (toto2 rule): depth only; outside a stack: 1.
  using F = orrery::OptimizerFamily;
  CHECK(p->lr_multiplier(hidden, F::adam_like) == Approx(1.0 / 16 / 2));
  CHECK(p->lr_multiplier(hidden, F::muon_like) == Approx(0.5));
  CHECK(p->lr_multiplier(readout, F::adam_like) == Approx(1.0));
  orrery::ParamInfo bias{"b", orrery::Role::bias, 256, 1024, 2, 4, 0, {1024}};
  CHECK(p->lr_multiplier(bias, F::adam_like) == Approx(0.5));
  orrery::ParamInfo gain{"g", orrery::Role::gain, 64, 64, 1, 4, 0, {64}};
  CHECK(p->lr_multiplier(gain, F::adam_like) == Approx(0.5));
  // Toto 2.0's patch embedding is tagged "weight": fan_in^-1/2 outside the stack (1/8 for 64).
  orrery::ParamInfo input{"i", orrery::Role::input, 64, 1024, -1, 0, 0, {1024, 64}};
  CHECK(p->lr_multiplier(input, F::adam_like) == Approx(1.0 / 8));
  CHECK(p->lr_multiplier(input, F::muon_like) == Approx(1.0));
  // The spectral Muon-family rule divides out the forward multiplier: sqrt(fan_in) in a stack
  // (times depth^-1/2), fan_in for a readout, and a vector keeps the depth factor.
  auto s = umup(Json{{"muon_rule", "spectral"}});
  CHECK(s->lr_multiplier(hidden, F::muon_like) == Approx(16.0 / 2));
  CHECK(s->lr_multiplier(input, F::muon_like) == Approx(8.0));
  CHECK(s->lr_multiplier(readout, F::muon_like) == Approx(1024.0));
  CHECK(s->lr_multiplier(bias, F::muon_like) == Approx(0.5));
  CHECK(s->lr_multiplier(hidden, F::adam_like) == Approx(1.0 / 16 / 2));
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  at::Tensor w = p->init({"w", orrery::Role::hidden, 512, 512, 0, 1, 0, {512, 512}}, gen);
  CHECK(w.std().item<double>() == Approx(1.0).epsilon(0.01));
  CHECK(p->init(bias, gen).abs().sum().item<double>() == 0.0);
}

namespace {
// Standard deviation of the forward output and of the three gradients of one linear map fed
// unit-Gaussian inputs and output gradients (unit_scaling's assert_unit_scaled).
struct LinearStds { double y, dx, dw; };
LinearStds linear_stds(const orrery::Parametrisation& p, int64_t fan_in, int64_t fan_out,
                       orrery::Role role, int64_t rows = 512, int64_t batch_multiplier = 1) {
  orrery::ParamFactory f(p, at::make_generator<at::CPUGeneratorImpl>(1), at::TensorOptions(at::kFloat));
  orrery::Linear lin(f, "lin", fan_in, fan_out, role, false);
  at::manual_seed(2);
  at::Tensor x = at::randn({rows, fan_in}).requires_grad_(true);
  orrery::ForwardContext ctx;
  ctx.batch_multiplier = batch_multiplier;
  at::Tensor y = lin(x, ctx);
  y.backward(at::randn_like(y));
  return {y.std().item<double>(), x.grad().std().item<double>(), lin.weight.grad().std().item<double>()};
}
}  // namespace

TEST_CASE("a u-muP linear map is unit-scaled forward and backward at every width") {
  auto p = umup();
  for (int64_t w : {64, 256, 1024}) {
    INFO("width " << w);
    auto s = linear_stds(*p, w, w, orrery::Role::hidden);
    CHECK(s.y == Approx(1.0).margin(0.1));
    CHECK(s.dx == Approx(1.0).margin(0.1));
    CHECK(s.dw == Approx(1.0).margin(0.1));
    // The readout's forward shrinks as 1/sqrt(fan_in) by design (multiplier 1/fan_in); its
    // gradients stay unit-scaled (grad input fan_out^-1/2, unconstrained).
    auto r = linear_stds(*p, w, 32, orrery::Role::readout);
    CHECK(r.y * std::sqrt(double(w)) == Approx(1.0).margin(0.1));
    CHECK(r.dx == Approx(1.0).margin(0.1));
    CHECK(r.dw == Approx(1.0).margin(0.1));
  }
  // The weight gradient is normalised by the global batch: 4 accumulation steps (or ranks)
  // halve each local contribution.
  CHECK(linear_stds(*p, 128, 128, orrery::Role::hidden, 512, 4).dw == Approx(0.5).margin(0.05));
  // Switched off, autograd's chain rule: dW = m g^T x with m = fan_in^-1/2, i.e. std sqrt(rows/fan_in).
  auto plain = umup({{"backward_scales", false}});
  CHECK(linear_stds(*plain, 128, 128, orrery::Role::hidden).dw == Approx(2.0).epsilon(0.1));
}

TEST_CASE("the u-muP residual split moves the branch weight to the branch input's gradient") {
  auto p = umup();
  orrery::ParamFactory f(*p, at::make_generator<at::CPUGeneratorImpl>(1), at::TensorOptions(at::kFloat));
  orrery::Residual res(f, "res", 3, 8);
  const double a = res.branch, b = res.skip;
  at::Tensor x = at::randn({4, 8}).requires_grad_(true);
  at::Tensor h_seen;
  at::Tensor out = res(x, [&](const at::Tensor& in) {
    h_seen = (in * 3.0).requires_grad_(true);
    h_seen.retain_grad();
    return h_seen;
  }, orrery::ForwardContext{});
  CHECK(at::allclose(out, a * 3.0 * x + b * x, 1e-6, 1e-6));  // the forward is unchanged
  at::Tensor g = at::randn_like(out);
  out.backward(g);
  CHECK(at::allclose(h_seen.grad(), g, 1e-6, 1e-6));  // inside the branch: unscaled
  CHECK(at::allclose(x.grad(), (3.0 * a + b) * g, 1e-5, 1e-6));  // into x: the same total
}

TEST_CASE("u-muP keeps every layer's activations near unit RMS from width 64 to 1024 at init") {
  std::map<std::string, std::vector<double>> rms;
  for (int64_t d : {64, 256, 1024}) {
    auto spec = test::tiny_spec();
    spec.arch.options = {{"d_model", d}, {"num_layers", 2}, {"num_heads", 4}};
    spec.param = {"umup", Json::object()};
    orrery::Model m(spec, orrery::Registry::global());
    auto data = orrery::Registry::global().create<orrery::PluginKind::data>("synthetic", Json::object(),
                                                                            orrery::DataContext{});
    for (const auto& a : m.activations(data->sample({4, 256, 0}))) rms[a.name].push_back(a.rms);
  }
  CHECK(rms.size() == 20);
  for (const auto& [name, v] : rms) {
    INFO(name);
    REQUIRE(v.size() == 3);
    const double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
    if (name.rfind("output_head", 0) == 0 && name.find("linear1") == std::string::npos) {
      // The readout (and the head's mix with it) shrinks as 1/sqrt(width) by design.
      CHECK(v[2] / v[0] == Approx(0.25).margin(0.08));
      continue;
    }
    CHECK(lo > 0.4);  // unit order: the inputs themselves (asinh-scaled patches) have RMS ~0.6
    CHECK(hi < 1.5);
    CHECK(hi / lo < 1.5);  // and flat across a 16x change of width
  }
}

TEST_CASE("u-muP learning rates match unit_scaling's reference test") {
  // unit_scaling tests/test_optim.py: a 3-deep stack of 16x16 layers with biases and a 16 -> 1024
  // readout; hidden weights lr/4/sqrt(3), hidden biases lr/sqrt(3), readout lr.
  auto p = umup();
  using F = orrery::OptimizerFamily;
  orrery::ParamInfo w{"w", orrery::Role::hidden, 16, 16, 0, 3, 16, {16, 16}};
  orrery::ParamInfo b{"b", orrery::Role::bias, 16, 16, 1, 3, 16, {16}};
  orrery::ParamInfo r{"r", orrery::Role::readout, 16, 1024, -1, 0, 16, {1024, 16}};
  CHECK(p->lr_multiplier(w, F::adam_like) == Approx(1.0 / 4 / std::sqrt(3.0)));
  CHECK(p->lr_multiplier(b, F::adam_like) == Approx(1.0 / std::sqrt(3.0)));
  CHECK(p->lr_multiplier(r, F::adam_like) == Approx(1.0));
  // SGD: the same as Adam, because gradients are unit-scaled.
  CHECK(p->lr_multiplier(w, F::sgd_like) == Approx(1.0 / 4 / std::sqrt(3.0)));
}

TEST_CASE("muP follows the Tensor Programs V table relative to its base width") {
  auto p = orrery::Registry::global().create<orrery::PluginKind::parametrisation>("mup", Json{{"base_width", 128}});
  using F = orrery::OptimizerFamily;
  // A model 4x wider than the base.
  orrery::ParamInfo hidden{"h", orrery::Role::hidden, 512, 512, 0, 2, 512, {512, 512}};
  orrery::ParamInfo input{"i", orrery::Role::input, 64, 512, -1, 0, 512, {512, 64}};
  orrery::ParamInfo readout{"r", orrery::Role::readout, 512, 288, -1, 0, 512, {288, 512}};
  orrery::ParamInfo bias{"b", orrery::Role::bias, 512, 512, 0, 2, 512, {512}};
  CHECK(p->lr_multiplier(hidden, F::adam_like) == Approx(0.25));
  CHECK(p->lr_multiplier(input, F::adam_like) == 1.0);
  CHECK(p->lr_multiplier(readout, F::adam_like) == 1.0);
  CHECK(p->lr_multiplier(bias, F::adam_like) == 1.0);
  CHECK(p->lr_multiplier(hidden, F::sgd_like) == 1.0);
  CHECK(p->lr_multiplier(bias, F::sgd_like) == Approx(4.0));
  CHECK(p->lr_multiplier(hidden, F::muon_like) == 1.0);
  CHECK(p->linear_multiplier(readout) == Approx(0.25));
  CHECK(p->linear_multiplier(hidden) == 1.0);
  CHECK(p->attention_scale(64) == Approx(0.125));  // 8/d: SP's 1/sqrt(d) at d = 64
  // Readout init variance stays that of the base model: SP's bound times sqrt(width_mult).
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  orrery::ParamInfo big{"r", orrery::Role::readout, 4096, 288, -1, 0, 512, {288, 4096}};
  const double std_expected = 2.0 / std::sqrt(4096.0) / std::sqrt(3.0);
  CHECK(p->init(big, gen).std().item<double>() == Approx(std_expected).epsilon(0.02));
  // At the base width muP is SP.
  orrery::ParamInfo base{"h", orrery::Role::hidden, 128, 128, 0, 2, 128, {128, 128}};
  CHECK(p->lr_multiplier(base, F::adam_like) == 1.0);
}
