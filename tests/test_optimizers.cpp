// The optimizer plugins (adamw, sgd, muon, normuon, dion2) and the shared Muon-family maths in
// orrery/orthogonalise.h: orthogonaliser spectra, NorMuon normalisation, cautious weight decay,
// AdamW against LibTorch's, the step scalars, and convergence on a toy least-squares problem.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/optim/adamw.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "orrery/optimizer.h"
#include "orrery/orthogonalise.h"
#include "orrery/host/registry.h"

using orrery::Json;
using orrery::PluginKind;
using Catch::Matchers::Contains;

namespace {

// The matrices here are tiny: intra-op threads only add OpenMP spin-waits, which on a loaded
// machine turned a 0.6 s run into 80 s.
[[maybe_unused]] const bool single_threaded = (at::set_num_threads(1), true);

at::Tensor gaussian(std::vector<int64_t> shape, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn(shape, gen);
}

// A random matrix whose smallest singular value is at least 2e-3 of its Frobenius norm. Polar
// Express is designed for normalised singular values down to l = 1e-3; a random square matrix is
// sometimes nearly singular (about half of 48x48 draws fall below 2e-3), and no 5-step
// polynomial lifts a value near 0 into the band, so such draws are skipped, not tested.
at::Tensor well_conditioned(std::vector<int64_t> shape, uint64_t seed) {
  for (uint64_t s = seed; s < seed + 50; ++s) {
    at::Tensor G = gaussian(shape, s);
    if (at::linalg_svdvals(G).min().item<double>() >= 2e-3 * G.norm().item<double>()) return G;
  }
  FAIL("no well-conditioned draw");
  return {};
}

std::pair<double, double> sv_range(const at::Tensor& X) {
  at::Tensor s = at::linalg_svdvals(X.to(at::kFloat));
  return {s.min().item<double>(), s.max().item<double>()};
}

const orrery::Parametrisation& sp() {
  static auto p = orrery::Registry::global().create<PluginKind::parametrisation>("sp", Json::object());
  return *p;
}

orrery::Param matrix_param(const std::string& name, at::Tensor value) {
  orrery::Param p;
  p.info.name = name;
  p.info.role = orrery::Role::hidden;
  p.info.fan_out = value.size(0);
  p.info.fan_in = value.numel() / value.size(0);
  p.info.shape = value.sizes().vec();
  p.tensor = value.clone().set_requires_grad(true);
  return p;
}

std::unique_ptr<orrery::Optimizer> make_optimizer(const std::string& name, const Json& options,
                                                  std::vector<orrery::Param>& params,
                                                  const orrery::Parametrisation& param = sp()) {
  return orrery::Registry::global().create<PluginKind::optimizer>(name, options, params, param);
}

// Toy least squares: loss = mean over a batch of ||(W - T) x||^2, gradient 2 (W - T) X X^T / n.
at::Tensor least_squares_grad(const at::Tensor& W, const at::Tensor& T, uint64_t seed) {
  at::Tensor X = gaussian({W.size(1), 128}, seed);
  return 2.0 * at::mm(at::mm(W.detach() - T, X), X.t()) / 128.0;
}

}  // namespace

TEST_CASE("Newton-Schulz 5 leaves singular values in Keller's band [0.5, 1.5]") {
  // Keller's quintic maximises the slope at zero instead of converging: it is documented to give
  // U S' V^T with S' ~ U(0.5, 1.5). Measured over 200 seeds: [0.68, 1.20] (float32 and bf16).
  for (std::vector<int64_t> shape : {std::vector<int64_t>{64, 16}, {128, 32}, {16, 64}, {48, 48}}) {
    at::Tensor G = well_conditioned(shape, 1);
    for (auto dtype : {at::kFloat, at::kBFloat16}) {
      at::Tensor X = orrery::newton_schulz5(G, 5, dtype);
      INFO(shape[0] << "x" << shape[1] << " " << dtype);
      CHECK(X.sizes() == G.sizes());
      CHECK(X.scalar_type() == at::kFloat);
      auto [lo, hi] = sv_range(X);
      CAPTURE(lo, hi);
      CHECK(lo >= 0.5);
      CHECK(hi <= 1.5);
    }
  }
}

TEST_CASE("Polar Express leaves singular values in a tight band around 1") {
  // The last polynomial maps the interval the first four reach to about 1 +- 0.14; measured over
  // 200 seeds: [0.859, 1.141] in float32, [0.82, 1.153] in bf16. Keller's NS5 would fail this.
  for (std::vector<int64_t> shape : {std::vector<int64_t>{64, 16}, {128, 32}, {16, 64}, {48, 48}}) {
    at::Tensor G = well_conditioned(shape, 1);
    for (auto dtype : {at::kFloat, at::kBFloat16}) {
      at::Tensor X = orrery::polar_express(G, dtype);
      INFO(shape[0] << "x" << shape[1] << " " << dtype);
      CHECK(X.sizes() == G.sizes());
      auto [lo, hi] = sv_range(X);
      CAPTURE(lo, hi);
      CHECK(lo >= 0.8);
      CHECK(hi <= 1.2);
    }
  }
}

TEST_CASE("Polar Express passes microsoft/dion's orthogonality test in bf16") {
  // tests/test_polar_express.py: max |X X^T - I| < 0.15 on the smaller Gram matrix (seed differs).
  for (std::vector<int64_t> shape : {std::vector<int64_t>{64, 128}, {128, 64}, {128, 128}}) {
    at::Tensor X = orrery::polar_express(gaussian(shape, 42), at::kBFloat16);
    at::Tensor gram = shape[0] <= shape[1] ? at::mm(X, X.t()) : at::mm(X.t(), X);
    const double err = (gram - at::eye(gram.size(0))).abs().max().item<double>();
    INFO(shape[0] << "x" << shape[1] << " error " << err);
    CHECK(err < 0.15);
  }
}

TEST_CASE("orthogonalise flattens conv filters and restores the shape") {
  at::Tensor G = gaussian({8, 4, 3, 3}, 3);
  for (auto which : {orrery::Orthogonaliser::polar_express, orrery::Orthogonaliser::newton_schulz}) {
    at::Tensor O = orrery::orthogonalise(G, which);
    CHECK(O.sizes() == G.sizes());
    at::Tensor flat = orrery::orthogonalise(G.reshape({8, 36}), which);
    CHECK(at::allclose(O.reshape({8, 36}), flat));
  }
  CHECK_THROWS_WITH(orrery::orthogonalise(at::ones({5}), orrery::Orthogonaliser::polar_express),
                    Contains("at least 2 dimensions"));
  CHECK(orrery::parse_orthogonaliser("newton_schulz") == orrery::Orthogonaliser::newton_schulz);
  CHECK_THROWS_WITH(orrery::parse_orthogonaliser("svd"), Contains("polar_express"));
}

TEST_CASE("shape scales follow the reference formulas (rows = fan_out)") {
  using orrery::ShapeScale;
  CHECK(orrery::shape_scale(ShapeScale::keller, 64, 16) == Approx(2.0));
  CHECK(orrery::shape_scale(ShapeScale::keller, 16, 64) == Approx(1.0));
  CHECK(orrery::shape_scale(ShapeScale::spectral, 64, 16) == Approx(2.0));
  CHECK(orrery::shape_scale(ShapeScale::spectral, 16, 64) == Approx(0.5));
  CHECK(orrery::shape_scale(ShapeScale::rms_match, 16, 64) == Approx(1.6));
  CHECK(orrery::shape_scale(ShapeScale::rms_match, 64, 16) == Approx(1.6));
  CHECK(orrery::shape_scale(ShapeScale::none, 64, 16) == 1.0);
  CHECK(orrery::parse_shape_scale("rms") == ShapeScale::rms_match);
  CHECK(orrery::parse_shape_scale("spectral") == ShapeScale::spectral);
  CHECK_THROWS_WITH(orrery::parse_shape_scale("moonlight"), Contains("keller"));
}

TEST_CASE("NorMuon normalisation equalises row RMS and keeps the Frobenius norm") {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{32, 64}, {64, 16}}) {
    // Rows of very different scales, so the normalisation has something to do.
    at::Tensor O = gaussian(shape, 7) * at::linspace(0.1, 3.0, shape[0]).unsqueeze(1);
    const double n0 = O.norm().item<double>();
    at::Tensor v = at::full({shape[0], 1}, 1e-30);
    orrery::normuon_normalise_(O, v, /*beta2=*/0.0, /*eps=*/1e-10);
    at::Tensor rms = O.square().mean(-1).sqrt();
    const double spread = ((rms.max() - rms.min()) / rms.mean()).item<double>();
    INFO(shape[0] << "x" << shape[1] << " spread " << spread);
    CHECK(spread < 1e-5);
    CHECK(O.norm().item<double>() == Approx(n0).epsilon(1e-5));
  }
  SECTION("dim = -2 equalises columns instead") {
    at::Tensor O = gaussian({16, 64}, 8) * at::linspace(0.1, 3.0, 64);
    at::Tensor v = at::zeros({1, 64});
    orrery::normuon_normalise_(O, v, 0.0, 1e-10, -2);
    at::Tensor rms = O.square().mean(0).sqrt();
    CHECK(((rms.max() - rms.min()) / rms.mean()).item<double>() < 1e-5);
  }
}

TEST_CASE("cautious weight decay masks exactly where update and weight agree in sign") {
  // product:          +   +   -   -   0(p)  0(u)  0(u)  -     +
  at::Tensor p = at::tensor({1.0, -1.0, 2.0, -2.0, 0.0, 3.0, -3.0, 0.5, -0.25}, at::kDouble);
  at::Tensor u = at::tensor({1.0, -4.0, -2.0, 2.0, 1.0, 0.0, 0.0, -0.5, -8.0}, at::kDouble);
  const std::vector<bool> decays{true, true, false, false, true, true, true, false, true};
  const at::Tensor before = p.clone();
  orrery::cautious_weight_decay_(p, u, 0.5);  // 0.5: every expected value is exact
  for (size_t i = 0; i < decays.size(); ++i) {
    const double b = before[i].item<double>(), a = p[i].item<double>();
    INFO("entry " << i);
    CHECK(a == (decays[i] ? b - 0.5 * b : b));
  }
  CHECK(at::equal(u, at::tensor({1.0, -4.0, -2.0, 2.0, 1.0, 0.0, 0.0, -0.5, -8.0}, at::kDouble)));
}

TEST_CASE("the adamw plugin equals LibTorch's AdamW with weight decay") {
  at::Tensor W0 = gaussian({16, 8}, 11), T = gaussian({16, 8}, 12);
  std::vector<orrery::Param> params{matrix_param("layers.0.w", W0)};
  auto ours = make_optimizer("adamw", Json{{"lr", 0.01}, {"beta1", 0.9}, {"beta2", 0.99},
                                           {"eps", 1e-8}, {"weight_decay", 0.1}}, params);
  at::Tensor theirs_w = W0.clone().set_requires_grad(true);
  torch::optim::AdamW theirs({theirs_w}, torch::optim::AdamWOptions(0.01)
                                             .betas({0.9, 0.99})
                                             .eps(1e-8)
                                             .weight_decay(0.1));
  for (int step = 0; step < 10; ++step) {
    at::Tensor g = least_squares_grad(params[0].tensor, T, 100 + step);
    params[0].tensor.mutable_grad() = g.clone();
    theirs_w.mutable_grad() = g.clone();
    ours->step({});
    theirs.step();
    INFO("step " << step);
    REQUIRE((params[0].tensor - theirs_w).abs().max().item<double>() < 1e-6);
  }
  CHECK(!at::allclose(params[0].tensor, W0));
}

TEST_CASE("every optimizer honours the step scalars, skips params without grad, keeps .grad()") {
  // The same run twice: options A with the schedules' scalars against options B that bake them in.
  struct Case {
    std::string name, momentum_option;
    double momentum;
  };
  for (const Case& c : {Case{"adamw", "beta1", 0.9}, Case{"sgd", "momentum", 0.9},
                        Case{"muon", "momentum", 0.95}, Case{"normuon", "momentum", 0.95},
                        Case{"dion2", "ef_decay", 0.95}}) {
    INFO(c.name);
    at::Tensor W0 = gaussian({16, 32}, 21), T = gaussian({16, 32}, 22), F = gaussian({8, 4}, 23);
    auto run = [&](Json options, orrery::StepScalars sc) {
      std::vector<orrery::Param> params{matrix_param("a", W0), matrix_param("frozen", F)};
      auto opt = make_optimizer(c.name, options, params);
      for (int step = 0; step < 3; ++step) {
        at::Tensor g = least_squares_grad(params[0].tensor, T, 200 + step);
        params[0].tensor.mutable_grad() = g.clone();
        opt->step(sc);
        CHECK(at::equal(params[0].tensor.grad(), g));  // the gradient is read, never written
      }
      CHECK(!params[1].tensor.grad().defined());
      CHECK(at::equal(params[1].tensor, F));  // no gradient, no update (not even weight decay)
      return params[0].tensor.detach().clone();
    };
    Json a{{"lr", 0.02}, {"weight_decay", 0.1}, {c.momentum_option, c.momentum}};
    Json b{{"lr", 0.01}, {"weight_decay", 0.05}, {c.momentum_option, 0.5}};
    orrery::StepScalars scalars;
    scalars.lr_factor = 0.5;
    scalars.wd_factor = 0.5;
    scalars.momentum = 0.5;
    at::Tensor with_scalars = run(a, scalars), baked_in = run(b, {});
    CHECK(at::allclose(with_scalars, baked_in, 1e-6, 1e-7));
    CHECK(!at::allclose(with_scalars, run(a, {}), 1e-4, 1e-5));  // the scalars do matter
  }
}

TEST_CASE("Muon-family plugins use the muon_like learning-rate multiplier, the others adam/sgd") {
  // u-muP (toto2 rule, depth-muP): a hidden matrix in a stack of 4 gets 4^-1/2 under muon_like
  // and additionally fan_in^-1/2 = 1/8 under adam_like and sgd_like.
  auto umup = orrery::Registry::global().create<PluginKind::parametrisation>(
      "umup", Json{{"muon_rule", "toto2"}, {"depth_alpha", 0.5}});
  at::Tensor W0 = gaussian({16, 64}, 31), T = gaussian({16, 64}, 32);
  for (auto [name, mult] : {std::pair{"muon", 0.5}, {"normuon", 0.5}, {"dion2", 0.5},
                            {"adamw", 0.5 / 8}, {"sgd", 0.5 / 8}}) {
    auto first_step = [&](const orrery::Parametrisation& param) {
      std::vector<orrery::Param> params{matrix_param("w", W0)};
      params[0].info.depth = 0;
      params[0].info.stack_depth = 4;
      auto opt = make_optimizer(name, Json{{"weight_decay", 0.0}}, params, param);
      params[0].tensor.mutable_grad() = least_squares_grad(params[0].tensor, T, 300);
      opt->step({});
      return (params[0].tensor - W0).detach();
    };
    at::Tensor scaled = first_step(*umup), plain = first_step(sp());
    INFO(name << ": measured multiplier " << (scaled.norm() / plain.norm()).item<double>());
    CHECK(at::allclose(scaled, mult * plain, 1e-3, 1e-6));  // atol: float rounding of W0 + delta
  }
}

TEST_CASE("each optimizer halves ||W - T||^2 on a toy least-squares problem in 50 steps") {
  // nanochat tests/test_optim.py: the distance must drop below 0.5x in 50 steps.
  at::Tensor W0 = gaussian({32, 64}, 41) * 0.02, T = gaussian({32, 64}, 42) * 0.05;
  for (auto [name, options] : {std::pair{"sgd", Json{{"lr", 0.05}}},
                               {"muon", Json::object()},
                               {"muon", Json{{"orthogonaliser", "polar_express"}}},
                               {"normuon", Json::object()},
                               {"normuon", Json{{"normalise_axis", "longer"}}},
                               {"dion2", Json::object()},
                               {"adamw", Json{{"lr", 0.01}}}}) {
    std::vector<orrery::Param> params{matrix_param("w", W0)};
    auto opt = make_optimizer(name, options, params);
    const double d0 = (params[0].tensor - T).square().sum().item<double>();
    for (int step = 0; step < 50; ++step) {
      params[0].tensor.mutable_grad() = least_squares_grad(params[0].tensor, T, 400 + step);
      opt->step({});
    }
    const double d = (params[0].tensor - T).square().sum().item<double>();
    INFO(name << " " << options.dump() << ": " << d0 << " -> " << d);
    CHECK(d < 0.5 * d0);
  }
}

TEST_CASE("muon's first update is nearly orthogonal (max/min singular value < 4)") {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{32, 64}, {64, 32}}) {
    at::Tensor W0 = gaussian(shape, 51), T = gaussian(shape, 52);
    std::vector<orrery::Param> params{matrix_param("w", W0)};
    auto opt = make_optimizer("muon", Json::object(), params);
    params[0].tensor.mutable_grad() = least_squares_grad(params[0].tensor, T, 500);
    opt->step({});
    auto [lo, hi] = sv_range((params[0].tensor - W0).detach());
    INFO(shape[0] << "x" << shape[1] << " " << lo << " " << hi);
    CHECK(hi / lo < 4.0);
  }
}

TEST_CASE("dion2 updates only ceil(fraction * size) slices along the shorter dimension") {
  // 32x64: rows are the shorter dimension; 64x32: columns. ceil(0.3 * 32) = 10.
  for (std::vector<int64_t> shape : {std::vector<int64_t>{32, 64}, {64, 32}}) {
    const int64_t dim = shape[0] <= shape[1] ? 0 : 1;
    at::Tensor W = gaussian(shape, 61), T = gaussian(shape, 62);
    std::vector<orrery::Param> params{matrix_param("w", W)};
    auto opt = make_optimizer("dion2", Json{{"fraction", 0.3}, {"weight_decay", 0.0}}, params);
    for (int step = 0; step < 3; ++step) {
      at::Tensor before = params[0].tensor.detach().clone();
      at::Tensor g = least_squares_grad(before, T, 600 + step);
      params[0].tensor.mutable_grad() = g;
      opt->step({});
      at::Tensor changed = (params[0].tensor != before).any(1 - dim);
      INFO(shape[0] << "x" << shape[1] << " step " << step);
      CHECK(changed.sum().item<int64_t>() == 10);
      if (step == 0) {
        // The momentum is the gradient on the first step: the slices with the largest L1 norm.
        auto top = std::get<1>(g.abs().sum(1 - dim).topk(10));
        std::set<int64_t> expected, got;
        for (int64_t i = 0; i < 10; ++i) expected.insert(top[i].item<int64_t>());
        at::Tensor idx = changed.nonzero().flatten();
        for (int64_t i = 0; i < idx.size(0); ++i) got.insert(idx[i].item<int64_t>());
        CHECK(got == expected);
      }
    }
  }
}

TEST_CASE("Muon-family optimizers refuse vectors and name them") {
  for (auto name : {"muon", "normuon", "dion2"}) {
    orrery::Param gain;
    gain.info.name = "layers.0.norm.weight";
    gain.info.role = orrery::Role::gain;
    gain.info.shape = {8};
    gain.tensor = at::ones({8}).set_requires_grad(true);
    std::vector<orrery::Param> params{matrix_param("w", gaussian({8, 8}, 1)), gain};
    INFO(name);
    CHECK_THROWS_WITH(make_optimizer(name, Json::object(), params),
                      Contains("layers.0.norm.weight") && Contains("route vectors to adamw"));
  }
}

TEST_CASE("u-muP's Muon-family rules give the effective weight's update the promised spectral norm", "[slow]") {
  // W_eff = multiplier * W (1/sqrt(fan_in) under u-muP). One Muon step (Polar Express, shape scale
  // s = sqrt(fan_out/fan_in)) on a matrix in a stack of L = 4 layers must move W_eff by
  //   spectral: lr L^-1/2 s               at every width (muP's spectral condition)
  //   toto2:    lr L^-1/2 s / sqrt(fan_in)  (DataDog's rule: shrinks as width grows)
  // times sigma_max(O) of the Polar Express output (about 1.14 for a Gaussian gradient).
  // NorMuon's row normalisation keeps the Frobenius norm, not the spectral one: it is held only to
  // the width-independence of the spectral rule.
  const double lr = 0.01, depth = 0.5;
  for (const std::string rule : {"toto2", "spectral"}) {
    auto umup = orrery::Registry::global().create<PluginKind::parametrisation>(
        "umup", Json{{"muon_rule", rule}, {"depth_alpha", 0.5}});  // depth factor 4^-1/2
    std::map<std::string, std::vector<double>> normuon_norms;
    for (int64_t width : {64, 128, 256, 512}) {
      struct Shape { const char* what; int64_t fan_out, fan_in; orrery::Role role; };
      for (const Shape& s : {Shape{"square", width, width, orrery::Role::hidden},
                             Shape{"expanding", 4 * width, width, orrery::Role::hidden},
                             Shape{"contracting", width, 4 * width, orrery::Role::hidden},
                             Shape{"patch embedding", width, 16, orrery::Role::input}}) {
        const bool stacked = s.role == orrery::Role::hidden;
        auto spectral_norm_of_step = [&](const std::string& optimizer, Json options) {
          const at::Tensor W0 = gaussian({s.fan_out, s.fan_in}, 51);
          std::vector<orrery::Param> params{matrix_param("w", W0)};
          params[0].info.role = s.role;
          params[0].info.depth = stacked ? 0 : -1;
          params[0].info.stack_depth = stacked ? 4 : 0;
          options.update(Json{{"lr", lr}, {"weight_decay", 0.0}, {"adjust_lr", "spectral"}});
          auto opt = make_optimizer(optimizer, options, params, *umup);
          params[0].tensor.mutable_grad() = gaussian({s.fan_out, s.fan_in}, 52 + width);
          opt->step({});
          const at::Tensor delta_eff = (params[0].tensor.detach() - W0) * umup->linear_multiplier(params[0].info);
          return at::linalg_svdvals(delta_eff).max().item<double>();
        };
        const double shape = std::sqrt(double(s.fan_out) / double(s.fan_in));
        const double promised = lr * (stacked ? depth : 1.0) * shape /
                                (rule == "spectral" ? 1.0 : std::sqrt(double(s.fan_in)));
        const double sigma_O = sv_range(orrery::polar_express(gaussian({s.fan_out, s.fan_in}, 52 + width), at::kFloat)).second;
        INFO(rule << ", width " << width << ", " << s.what << ", sigma_max(O) " << sigma_O);
        CHECK(sigma_O == Approx(1.0).margin(0.2));
        CHECK(spectral_norm_of_step("muon", Json{{"orthogonaliser", "polar_express"}}) ==
              Approx(promised * sigma_O).epsilon(1e-3));
        normuon_norms[s.what].push_back(spectral_norm_of_step("normuon", Json::object()) / shape);
      }
    }
    if (rule == "spectral")
      for (const auto& [what, norms] : normuon_norms) {
        INFO("NorMuon, " << what << ": spectral norm / shape scale from width 64 to 512");
        CHECK(*std::max_element(norms.begin(), norms.end()) / *std::min_element(norms.begin(), norms.end()) < 1.3);
      }
  }
}
