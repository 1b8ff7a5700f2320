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
#include "orrery/safetensors.h"
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
  auto p = umup({{"depth_alpha", 0.5}});  // Toto 2.0's rule (depth-muP)
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
  // depth-muP (alpha 1/2), Toto 2.0's: the depth factor is depth^-1/2 (1/2 at 4 layers).
  auto p = umup(Json{{"muon_rule", "toto2"}, {"depth_alpha", 0.5}});
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
  auto s = umup(Json{{"muon_rule", "spectral"}, {"depth_alpha", 0.5}});
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
  // readout; hidden weights lr/4/sqrt(3), hidden biases lr/sqrt(3), readout lr (depth-muP).
  auto p = umup({{"depth_alpha", 0.5}});
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

// ---- Depth: the residual exponent (depth_alpha) and the proxy's depth (base_depth) ----

TEST_CASE("u-muP at depth_alpha 0.5 is the rule it always was, to the last bit, at any base depth") {
  // Before the option: tau = a / sqrt(L + sum a^2), in-stack rates x 1/sqrt(L).
  auto before_tau = [](int index, int layers) {
    const double r = std::sqrt(128.0 / std::log(128.0)), m = 0.75;
    const double a_mlp = m * std::sqrt(2.0 / (1.0 + r * r)), a_attn = r * a_mlp;
    const int n_attn = (index + 1) / 2, n_mlp = index / 2;
    const double a = index % 2 == 0 ? a_attn : a_mlp;
    const double tau = a / std::sqrt(2 * layers / 2.0 + n_attn * a_attn * a_attn + n_mlp * a_mlp * a_mlp);
    const double norm = std::sqrt(1.0 + tau * tau);
    return std::pair{tau / norm, 1.0 / norm};
  };
  using F = orrery::OptimizerFamily;
  for (double base : {1.0, 2.0, 3.0, 12.0}) {
    auto p = umup({{"depth_alpha", 0.5}, {"base_depth", base}, {"muon_rule", "spectral"}});
    for (int layers : {1, 2, 3, 4, 7, 12, 32, 48}) {
      INFO("base depth " << base << ", " << layers << " layers");
      for (int i : {0, 1, layers, 2 * layers - 1}) CHECK(p->residual_weights(i, 2 * layers) == before_tau(i, layers));
      const double d = 1.0 / std::sqrt(double(layers));
      orrery::ParamInfo hidden{"w", orrery::Role::hidden, 256, 256, 0, layers, 256, {256, 256}};
      orrery::ParamInfo gain{"g", orrery::Role::gain, 256, 256, 0, layers, 256, {256}};
      CHECK(p->lr_multiplier(hidden, F::adam_like) == d / std::sqrt(256.0));
      CHECK(p->lr_multiplier(hidden, F::muon_like) == d / (1.0 / std::sqrt(256.0)));
      CHECK(p->lr_multiplier(gain, F::adam_like) == d);
      CHECK(p->eps_multiplier(hidden) == 1.0);
    }
  }
}

TEST_CASE("at the base depth both residual exponents give the same model and rates") {
  using F = orrery::OptimizerFamily;
  for (int layers : {2, 5, 12}) {
    auto half = umup({{"depth_alpha", 0.5}, {"base_depth", layers}});
    auto one = umup({{"depth_alpha", 1.0}, {"base_depth", layers}});
    for (int i = 0; i < 2 * layers; ++i) CHECK(half->residual_weights(i, 2 * layers) == one->residual_weights(i, 2 * layers));
    for (auto role : {orrery::Role::hidden, orrery::Role::gain, orrery::Role::bias}) {
      orrery::ParamInfo info{"p", role, 64, 64, 0, layers, 64, {64, 64}};
      CHECK(half->lr_multiplier(info, F::adam_like) == one->lr_multiplier(info, F::adam_like));
      CHECK(half->lr_multiplier(info, F::muon_like) == one->lr_multiplier(info, F::muon_like));
    }
  }
}

TEST_CASE("new u-muP models use CompleteP's exponent; a model saved before that default changed rebuilds as trained") {
  auto spec = test::tiny_spec(5);
  spec.arch.options = {{"d_model", 32}, {"num_layers", 4}, {"num_heads", 2}};
  spec.param = {"umup", Json::object()};
  orrery::Model fresh(spec, orrery::Registry::global());
  // The spec a model keeps (and saves) names the value in effect, so it survives a later change.
  CHECK(fresh.spec().param.options == Json{{"depth_alpha", 1.0}});
  // The default differs from the old one deeper than base_depth: the forward pass shows it.
  spec.param.options = {{"depth_alpha", 0.5}};
  orrery::Model trained_before(spec, orrery::Registry::global());
  auto data = orrery::Registry::global().create<orrery::PluginKind::data>("synthetic", Json::object(),
                                                                          orrery::DataContext{});
  const orrery::Batch batch = data->sample({4, 128, 1});
  at::NoGradGuard no_grad;
  const double old_loss = trained_before.loss(batch).item<double>();
  REQUIRE(fresh.loss(batch).item<double>() != old_loss);  // the same seed's weights, another model

  // A file written before the change: its spec has no depth_alpha and meant 0.5.
  orrery::ModelSpec saved = spec;
  saved.param.options = Json::object();
  orrery::NamedTensors tensors;
  for (const auto& p : trained_before.params()) tensors.emplace_back(p.info.name, p.tensor);
  const std::string path = test::temp_dir("umup-saved-before") + "/model.safetensors";
  orrery::save_safetensors(path, tensors, {{"format", "pt"}, {"orrery_model", saved.to_json().dump()}});
  auto loaded = orrery::Model::from_file(path, orrery::Registry::global());
  CHECK(loaded->spec().param.options == Json{{"depth_alpha", 0.5}});
  CHECK(loaded->loss(batch).item<double>() == old_loss);

  // A model saved now reads back with the value it was made with.
  fresh.save_weights(path);
  CHECK(orrery::Model::from_file(path, orrery::Registry::global())->spec().param.options == Json{{"depth_alpha", 1.0}});
}

TEST_CASE("CompleteP as a tau rule: the stream keeps 1 + sum a_i^2 m_L^-2alpha / L_base of the embedding's variance") {
  // The normalised stream after every branch holds prod skip_i^2 of the embedding's variance: the
  // un-normalised stream y + sum (a_i m_L^-alpha / sqrt(L_base)) h_i has variance 1 + sum of those
  // squared, so the product is its inverse.
  const double r = std::sqrt(128.0 / std::log(128.0)), m = 0.75;
  const double a_mlp = m * std::sqrt(2.0 / (1.0 + r * r)), a_attn = r * a_mlp;
  using F = orrery::OptimizerFamily;
  for (double alpha : {0.5, 0.75, 1.0}) {
    auto p = umup({{"depth_alpha", alpha}, {"base_depth", 2}});
    for (int layers : {2, 4, 8, 16, 32}) {
      INFO("alpha " << alpha << ", " << layers << " layers");
      const double m_l = layers / 2.0;
      double kept = 1.0;
      for (int i = 0; i < 2 * layers; ++i) kept *= std::pow(p->residual_weights(i, 2 * layers).second, 2);
      const double added = layers * (a_attn * a_attn + a_mlp * a_mlp) * std::pow(m_l, -2 * alpha) / 2.0;
      CHECK(1.0 / kept == Approx(1.0 + added).epsilon(1e-12));
      // In-stack rates L_base^-1/2 m_L^(alpha - 1), matrices (x fan_in^-1/2 under Adam) and vectors.
      orrery::ParamInfo hidden{"w", orrery::Role::hidden, 64, 64, 0, layers, 64, {64, 64}};
      orrery::ParamInfo bias{"b", orrery::Role::bias, 64, 64, 0, layers, 64, {64}};
      const double d = std::pow(2.0, -0.5) * std::pow(m_l, alpha - 1);
      CHECK(p->lr_multiplier(hidden, F::adam_like) == Approx(d / 8).epsilon(1e-12));
      CHECK(p->lr_multiplier(bias, F::adam_like) == Approx(d).epsilon(1e-12));
      CHECK(p->lr_multiplier(hidden, F::muon_like) == Approx(d * 8).epsilon(1e-12));
    }
  }
  // Epsilon: unchanged under the backward scales (the branch's gradients keep their size);
  // eps m_L^-alpha inside the stack with autograd's chain rule, as CompleteP splits it.
  auto chain = umup({{"depth_alpha", 1.0}, {"base_depth", 2}, {"backward_scales", false}});
  orrery::ParamInfo deep{"w", orrery::Role::hidden, 64, 64, 3, 8, 64, {64, 64}};
  orrery::ParamInfo readout{"r", orrery::Role::readout, 64, 8, -1, 0, 64, {8, 64}};
  CHECK(chain->eps_multiplier(deep) == Approx(0.25));
  CHECK(chain->eps_multiplier(readout) == 1.0);
  CHECK(umup({{"depth_alpha", 1.0}, {"base_depth", 2}})->eps_multiplier(deep) == 1.0);
}

namespace {
// One AdamW step (lr 0.05) of the in-stack parameters of a width-64 toto2 model with `layers` layers
// under u-muP at `alpha`, everything outside the stack held still, so that every change is the
// stack's own: the RMS change of every stack stream (the residual outputs, in order) and of the
// first layer's attention input projection, and the mean RMS gradient of the in-stack hidden
// matrices before the step.
struct OneStep {
  std::vector<double> stream_change;
  double first_in_proj_change = 0;
  double hidden_grad_rms = 0;
};
OneStep one_adam_step(int layers, double alpha, bool backward_scales = true) {
  auto spec = test::tiny_spec(3);
  spec.arch.options = {{"d_model", 64}, {"num_layers", layers}, {"num_heads", 4}};
  spec.param = {"umup", {{"depth_alpha", alpha}, {"base_depth", 2}, {"backward_scales", backward_scales}}};
  orrery::Model model(spec, orrery::Registry::global());
  auto data = orrery::Registry::global().create<orrery::PluginKind::data>("synthetic", Json::object(),
                                                                          orrery::DataContext{});
  const orrery::Batch batch = data->sample({8, 256, 5});
  const auto before = model.activations(batch, /*keep=*/true);
  std::vector<orrery::Param> stack;
  for (const auto& p : model.params())
    if (p.info.stack_depth > 0) stack.push_back(p);
  auto opt = orrery::Registry::global().create<orrery::PluginKind::optimizer>(
      "adamw", Json{{"lr", 0.05}, {"weight_decay", 0.0}}, stack, model.parametrisation());
  model.loss(batch).backward();
  OneStep out;
  int hidden = 0;
  for (const auto& p : stack)
    if (p.info.role == orrery::Role::hidden && p.tensor.grad().defined())
      out.hidden_grad_rms += p.tensor.grad().pow(2).mean().sqrt().item<double>(), ++hidden;
  out.hidden_grad_rms /= hidden;
  opt->step({});
  for (const auto& a : model.activations(batch, false, &before)) {
    if (a.name.rfind("transformer.layers.", 0) == 0 && a.name.find("residual") != std::string::npos)
      out.stream_change.push_back(a.change);
    if (a.name == "transformer.layers.0.attn.in_proj") out.first_in_proj_change = a.change;
  }
  return out;
}
}  // namespace

TEST_CASE("CompleteP (alpha 1): each layer's update is the same size at every depth, its share of the stream 1/L") {
  // The promise of alpha = 1 (complete feature learning): a layer's weights move by the same
  // relative amount at any depth, so its internal activations change alike from 2 to 32 layers,
  // while its branch multiplier m_L^-1 makes its share of the stream's change 1/L and the stack's
  // output moves the same at every depth. At alpha = 1/2 the layer's own change shrinks as
  // L^-1/2 (depth-muP's lazy layers). Measured on one batch, one AdamW step at lr 0.05.
  std::vector<double> total, first_share, own, own_half;
  for (int layers : {2, 4, 8, 16, 32}) {
    const OneStep s = one_adam_step(layers, 1.0);
    REQUIRE(s.stream_change.size() == static_cast<size_t>(2 * layers));
    total.push_back(s.stream_change.back());
    first_share.push_back(s.stream_change[1] * layers);  // the stream after the first layer
    own.push_back(s.first_in_proj_change);
    own_half.push_back(one_adam_step(layers, 0.5).first_in_proj_change);
  }
  for (size_t i = 1; i < total.size(); ++i) {
    INFO("depth doubling " << i << ": output change " << total[i - 1] << " -> " << total[i] << "; first layer's share x L "
                           << first_share[i - 1] << " -> " << first_share[i] << "; its own change " << own[i - 1]
                           << " -> " << own[i] << " (alpha 1/2: " << own_half[i - 1] << " -> " << own_half[i] << ")");
    CHECK(total[i] / total[i - 1] > 1 / 1.3);
    CHECK(total[i] / total[i - 1] < 1.3);
    CHECK(first_share[i] / first_share[i - 1] > 1 / 1.3);
    CHECK(first_share[i] / first_share[i - 1] < 1.3);
    CHECK(own[i] / own[i - 1] > 1 / 1.15);
    CHECK(own[i] / own[i - 1] < 1.15);
    CHECK(own_half[i] / own_half[i - 1] == Approx(std::sqrt(0.5)).margin(0.1));
  }
}

TEST_CASE("u-muP's backward scales keep in-stack gradients the same size at every depth, so epsilon needs no depth factor") {
  std::vector<double> scaled, chain;
  for (int layers : {2, 8, 32}) {
    scaled.push_back(one_adam_step(layers, 1.0).hidden_grad_rms);
    chain.push_back(one_adam_step(layers, 1.0, false).hidden_grad_rms);
  }
  INFO("backward scales: " << scaled[0] << " " << scaled[1] << " " << scaled[2] << "; chain rule: " << chain[0] << " "
                           << chain[1] << " " << chain[2]);
  CHECK(scaled[2] / scaled[0] > 0.5);  // 16x deeper: the same order
  CHECK(scaled[2] / scaled[0] < 2.0);
  CHECK(chain[2] / chain[0] < 0.25);   // the chain rule shrinks them with the branch multiplier m_L^-1
}
