#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include "support.h"

using orrery::Json;

namespace {
orrery::Batch batch(int64_t V, std::vector<int64_t> ids, uint64_t seed = 0) {
  at::manual_seed(seed);
  orrery::Batch b;
  b.values = at::randn({1, V, 96});
  b.observed = at::ones({1, V, 96}, at::kBool);
  b.series_ids = at::tensor(ids, at::kLong).view({1, V});
  return b;
}
}  // namespace

// Published sizes (Toto 2.0's model cards: 4M to 2.5B parameters). Built on the meta device, so
// the 2.5B-parameter preset allocates nothing.
TEST_CASE("presets have exactly the published parameter counts") {
  auto [preset, count] = GENERATE(table<const char*, int64_t>({
      {"toto2-4m", 4144448},
      {"toto2-22m", 21915584},
      {"toto2-313m", 312684608},
      {"toto2-1b", 1041033024},
      {"toto2-2.5b", 2454281792},
      {"toto2-proxy10m", 10477376},
  }));
  INFO(preset);
  orrery::ModelSpec spec;
  spec.arch = {"toto2", {{"preset", preset}}};
  spec.device = "meta";
  orrery::Model m(spec, orrery::Registry::global());
  CHECK(m.num_parameters() == count);
}

TEST_CASE("the last layer is the variate layer by default, placement is configurable") {
  auto names = [](Json arch) {
    orrery::ModelSpec spec;
    spec.arch = {"toto2", arch};
    spec.device = "meta";
    return orrery::Model(spec, orrery::Registry::global()).params().size();
  };
  // Same parameters whatever the layout: placement changes wiring, not shapes.
  CHECK(names({{"num_layers", 4}}) == names({{"num_layers", 4}, {"variate_layer_first", true}}));
  CHECK_THROWS_WITH(names({{"num_layers", 4}, {"layer_group_size", 3}}),
                    Catch::Contains("not a multiple of layer_group_size 3"));
}

TEST_CASE("variates of one series are permutation-equivariant") {
  auto model = test::tiny_model(4);
  orrery::Batch b = batch(3, {0, 0, 0});
  at::NoGradGuard g;
  at::Tensor h = model->hidden(b);
  at::Tensor perm = at::tensor({2, 0, 1}, at::kLong);
  orrery::Batch p = b;
  p.values = b.values.index_select(1, perm);
  p.observed = b.observed.index_select(1, perm);
  at::Tensor hp = model->hidden(p);
  CHECK(at::allclose(hp, h.index_select(1, perm), 1e-5, 1e-6));
}

TEST_CASE("different series ids do not see each other; the same id does") {
  auto model = test::tiny_model(5);
  orrery::Batch b = batch(3, {0, 0, 1});
  at::NoGradGuard g;
  at::Tensor h = model->hidden(b);
  // A new shape for one variate, not an affine change of it: the causal scaler removes location
  // and scale, so 3x + 7 would leave the hidden states equal up to rounding, and whether they
  // then "differ" would depend on the CPU's kernels. Reversing the series in time changes what
  // every patch sees, and moves the hidden state by far more than any rounding could: at least
  // 1% of its largest value (measured: 80% for the variate itself, 45% for its sibling).
  auto reshaped = [&](int64_t variate) {
    orrery::Batch c = b;
    c.values = b.values.clone();
    c.values[0][variate].copy_(b.values[0][variate].flip(0));
    return model->hidden(c);
  };
  const double size = h.abs().max().item<double>();
  auto moved = [&](const at::Tensor& a, const at::Tensor& z) { return (a - z).abs().max().item<double>(); };
  at::Tensor hc = reshaped(2);  // the series with id 1
  CHECK(at::allclose(h.narrow(1, 0, 2), hc.narrow(1, 0, 2), 1e-5, 1e-6));
  CHECK(moved(h.select(1, 2), hc.select(1, 2)) > 1e-2 * size);
  at::Tensor hd = reshaped(1);  // a variate of series 0 moves its sibling
  CHECK(moved(h.select(1, 0), hd.select(1, 0)) > 1e-2 * size);
}

namespace {
// The toto2 architecture alone, patch size 16, on patch tokens given directly.
std::unique_ptr<orrery::Architecture> toto2_arch(const Json& options) {
  auto& reg = orrery::Registry::global();
  static const auto param = reg.create<orrery::PluginKind::parametrisation>("sp", Json::object());
  orrery::ParamFactory factory(*param, at::make_generator<at::CPUGeneratorImpl>(1), at::TensorOptions());
  orrery::ArchitectureContext ctx{factory, 16};
  return reg.create<orrery::PluginKind::architecture>("toto2", options, ctx);
}
}  // namespace

// One layer, a variate layer, so nothing else carries information between rows or patches.
TEST_CASE("joint variate layers read other rows' earlier patches, never later ones or another series'") {
  const std::string mode = GENERATE("patch", "joint");
  INFO("variate_attention " << mode);
  const auto arch = toto2_arch({{"d_model", 32}, {"num_layers", 1}, {"num_heads", 2}, {"variate_attention", mode}});
  at::NoGradGuard no_grad;
  at::manual_seed(2);
  const int64_t V = 3, N = 6;
  orrery::PatchInput in{at::randn({1, V, N, 32}), at::tensor({0, 0, 1}, at::kLong).view({1, V}),
                        at::ones({1, V, N}, at::kBool)};
  const at::Tensor h = arch->forward(in, {});
  orrery::PatchInput changed = in;
  changed.tokens = in.tokens.clone();
  changed.tokens[0][1][2].add_(at::randn({32}));  // row 1 (series 0), patch 2
  const at::Tensor hc = arch->forward(changed, {});
  const double size = h.abs().max().item<double>();
  auto moved = [&](int64_t row, int64_t from, int64_t n) {
    return (h[0][row].narrow(0, from, n) - hc[0][row].narrow(0, from, n)).abs().max().item<double>();
  };
  CHECK(moved(0, 0, 2) < 1e-6 * size);  // earlier patches never see a later one
  CHECK(moved(2, 0, N) < 1e-6 * size);  // another series never
  CHECK(moved(0, 2, 1) > 1e-2 * size);  // the same patch: both kinds
  if (mode == "joint")
    CHECK(moved(0, 3, 3) > 1e-2 * size);  // and every later patch
  else
    CHECK(moved(0, 3, 3) < 1e-6 * size);
}

TEST_CASE("joint variate layers keep variates of one series permutation-equivariant") {
  orrery::ModelSpec spec = test::tiny_spec(4);
  spec.arch.options["variate_attention"] = "joint";
  orrery::Model model(spec, orrery::Registry::global());
  orrery::Batch b = batch(3, {0, 0, 0});
  at::NoGradGuard g;
  at::Tensor h = model.hidden(b);
  at::Tensor perm = at::tensor({2, 0, 1}, at::kLong);
  orrery::Batch p = b;
  p.values = b.values.index_select(1, perm);
  p.observed = b.observed.index_select(1, perm);
  CHECK(at::allclose(model.hidden(p), h.index_select(1, perm), 1e-5, 1e-6));
}

namespace {
// A umup toto2 model with variate layers, on three variates of two series with a missing patch
// (200 steps are left-padded to 224: a padded start, then patch 3 of variate 1 unobserved).
struct DecodeCase {
  std::unique_ptr<orrery::Model> model;
  at::Tensor values, observed, ids;
  explicit DecodeCase(const std::string& xpos_centre = "per_call", const std::string& variate_attention = "patch") {
    orrery::ModelSpec spec;
    spec.arch = {"toto2", {{"d_model", 128}, {"num_layers", 4}, {"num_heads", 2}, {"layer_group_size", 2},
                           {"xpos_centre", xpos_centre}, {"variate_attention", variate_attention}}};
    spec.param = {"umup", Json::object()};
    spec.seed = 3;
    model = std::make_unique<orrery::Model>(spec, orrery::Registry::global());
    at::manual_seed(4);
    values = at::randn({2, 3, 200}).cumsum(-1) + 20;
    observed = at::ones_like(values, at::kBool);
    observed.narrow(-1, 72, 40).select(1, 1).fill_(false);  // patch 3 (steps 88..119 after padding) is missing
    ids = at::tensor({0, 0, 1, 0, 1, 1}, at::kLong).view({2, 3});
  }
  orrery::Forecast run(int64_t horizon, int64_t block, bool cache = true) {
    orrery::ForecastOptions o;
    o.decode_block_size = block;
    o.kv_cache = cache;
    return model->forecast(values, observed, ids, horizon, o);
  }
};
}  // namespace

TEST_CASE("block decoding with the KV cache equals block decoding without it") {
  const std::string variate_attention = GENERATE("patch", "joint");
  INFO("variate_attention " << variate_attention);
  DecodeCase c("session", variate_attention);  // one xPos centre per forecast: the cache is then exact
  for (int64_t block : {32, 64, 96}) {
    INFO("decode_block_size " << block);
    at::Tensor cached = c.run(300, block, true).quantiles;
    at::Tensor recomputed = c.run(300, block, false).quantiles;
    CHECK(at::allclose(cached, recomputed, 1e-4, 1e-4));
    // Committing medians changes the forecast beyond the first block.
    CHECK(!at::allclose(cached, c.run(300, 0).quantiles, 1e-3, 1e-3));
  }
}

TEST_CASE("block decoding: a block at least the horizon is the single pass; bad sizes refused") {
  DecodeCase c;
  at::Tensor single = c.run(100, 0).quantiles;
  CHECK(at::equal(single, c.run(100, 128).quantiles));
  CHECK(at::equal(single, c.run(100, 4096).quantiles));
  // The first block of a block decode is the single pass's first block.
  CHECK(at::allclose(single.narrow(-1, 0, 32), c.run(100, 32).quantiles.narrow(-1, 0, 32), 1e-5, 1e-5));
  // Any block size: finite, sorted, the requested horizon (not a multiple of 32), repeatable.
  for (int64_t block : {32, 64}) {
    at::Tensor q = c.run(77, block).quantiles;
    CHECK(q.sizes() == at::IntArrayRef({9, 2, 3, 77}));
    CHECK(q.isfinite().all().item<bool>());
    CHECK((q.diff(1, 0) >= -1e-6).all().item<bool>());
    CHECK(at::equal(q, c.run(77, block).quantiles));
  }
  CHECK_THROWS_WITH(c.run(100, 48), Catch::Contains("multiple of the patch size 32"));
}
