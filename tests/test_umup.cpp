// The umup parametrisation as Toto 2.0 uses it (shared/reference/toto2-model.md sections 10 and 13,
// optimizers-and-parametrisations.md section 8).
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cmath>

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
  auto p = umup();
  orrery::ParamInfo hidden{"w", orrery::Role::hidden, 256, 1024, 2, 4, 0, {1024, 256}};
  orrery::ParamInfo readout{"r", orrery::Role::readout, 1024, 288, -1, 0, 0, {288, 1024}};
  CHECK(p->linear_multiplier(hidden) == Approx(1.0 / 16));
  CHECK(p->linear_multiplier(readout) == Approx(1.0 / 1024));
  CHECK(p->activation_scale("silu") == Approx(1.766783).epsilon(1e-6));
  CHECK(p->attention_scale(64) == Approx(1.0 / 64));
  // Adam: weights fan_in^-1/2 * depth^-1/2; Muon-family: depth only; outside a stack: 1.
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
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  at::Tensor w = p->init({"w", orrery::Role::hidden, 512, 512, 0, 1, 0, {512, 512}}, gen);
  CHECK(w.std().item<double>() == Approx(1.0).epsilon(0.01));
  CHECK(p->init(bias, gen).abs().sum().item<double>() == 0.0);
}
