// A model out to the Python ecosystem: `orrery export` and model:export write the Hugging Face
// Toto 2.0 layout (config.json, model.safetensors with the released names and tau buffers). The
// released `toto-2` package must load it and forecast what Orrery forecasts, and reading the
// export back into Orrery must forecast the same numbers. What the layout cannot hold is refused.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>

#include "orrery/host/export_model.h"
#include "orrery/host/load_model.h"
#include "orrery/host/registry.h"
#include "orrery/safetensors.h"
#include "support.h"

namespace fs = std::filesystem;

namespace {
using orrery::Json;

// A toto2 model as the release has them (u-muP, depth-muP residuals, quantile head), with every
// weight moved off its initial value so that biases, gains and PerDimScale matter.
std::unique_ptr<orrery::Model> released_kind_of_model(const Json& arch_options = Json::object()) {
  orrery::ModelSpec spec;
  spec.arch = {"toto2", {{"d_model", 128}, {"num_heads", 2}, {"num_layers", 3}, {"layer_group_size", 3}}};
  for (const auto& [k, v] : arch_options.items()) spec.arch.options[k] = v;
  spec.param = {"umup", {{"depth_alpha", 0.5}}};
  spec.patch_size = 16;
  spec.seed = 7;
  auto model = std::make_unique<orrery::Model>(spec, orrery::Registry::global());
  at::NoGradGuard no_grad;
  at::manual_seed(11);
  for (auto& p : model->params()) p.tensor.add_(at::randn_like(p.tensor) * 0.2);
  return model;
}

// Two batches of three variates at scales 0.01 to 1e3, series ids (0, 0, 1) and (0, 1, 2), a
// missing stretch and scattered gaps, the last patch observed.
struct Case {
  at::Tensor target, mask, ids;
  int64_t horizon = 40;
};
Case a_case() {
  at::manual_seed(3);
  const int64_t T = 160;
  const at::Tensor t = at::arange(T, at::kFloat);
  const at::Tensor level = at::tensor({1.0f, 50.0f, 0.01f, 1000.0f, 3.0f, 20.0f}).view({2, 3, 1});
  Case c;
  c.target = level * (1 + 0.3 * at::sin(t / 7 + at::rand({2, 3, 1}) * 6) + 0.001 * t + 0.05 * at::randn({2, 3, T}));
  c.mask = at::ones({2, 3, T}, at::kBool);
  c.mask.index_put_({1, 2, at::indexing::Slice(60, 80)}, false);
  c.mask.index_put_({0}, c.mask.index({0}) & (at::rand({3, T}) > 0.1));
  c.mask.index_put_({at::indexing::Ellipsis, at::indexing::Slice(T - 16, T)}, true);
  c.target = at::where(c.mask, c.target, at::zeros({}));
  c.ids = at::tensor({0, 0, 1, 0, 1, 2}, at::kLong).view({2, 3});
  return c;
}

double relative_error(const at::Tensor& ours, const at::Tensor& theirs) {
  at::Tensor spread = (theirs.amax({0, -1}, true) - theirs.amin({0, -1}, true)).clamp_min(1e-6);
  return ((ours - theirs).abs() / spread).max().item<double>();
}

}  // namespace

TEST_CASE("an export loads in the released toto-2 package and forecasts what Orrery forecasts", "[slow]") {
  const std::string dir = test::temp_dir("export-python");
  auto model = released_kind_of_model();
  orrery::export_model(*model, orrery::Registry::global(), dir + "/hf");
  const Json config = Json::parse(test::read_text(dir + "/hf/config.json"));
  CHECK(config["d_model"] == 128);
  CHECK(config["residual_attn_ratio"].get<double>() > 0);
  const Case c = a_case();
  const auto ours = model->forecast(c.target, c.mask, c.ids, c.horizon);
  orrery::save_safetensors(dir + "/case.safetensors",
                           {{"target", c.target}, {"target_mask", c.mask.to(at::kByte)}, {"series_ids", c.ids}},
                           {{"horizon", std::to_string(c.horizon)}});

  const std::string python = std::string(ORRERY_SOURCE_DIR) + "/.venv/bin/python";
  const auto r = test::run_command("'" + python + "' '" + ORRERY_SOURCE_DIR + "/tests/reference/check_export.py' '" + dir +
                                   "/hf' '" + dir + "/case.safetensors' '" + dir + "/theirs.safetensors'");
  INFO(r.output << "\n(the released toto-2 package comes with `make test`'s setup: cmake/setup.sh)");
  REQUIRE(r.status == 0);
  const at::Tensor theirs = *orrery::load_safetensors(dir + "/theirs.safetensors").find("quantiles");
  REQUIRE(theirs.sizes() == ours.quantiles.sizes());
  const double err = relative_error(ours.quantiles, theirs);
  INFO("max difference relative to each series' forecast spread: " << err);
  CHECK(err < 1e-4);

  // Read back, the export is the same model: the same forecast.
  auto back = orrery::load_model(dir + "/hf", orrery::Registry::global());
  const auto again = back->forecast(c.target, c.mask, c.ids, c.horizon);
  CHECK(relative_error(again.quantiles, ours.quantiles) < 1e-6);
}

TEST_CASE("an export refuses what the layout cannot hold, and a folder that holds anything") {
  const std::string dir = test::temp_dir("export-refused");
  const auto& registry = orrery::Registry::global();
  auto refused = [&](const orrery::Model& m, const std::string& to, const std::string& message) {
    INFO(to);
    CHECK_THROWS_WITH(orrery::export_model(m, registry, to), Catch::Contains(message));
    CHECK_FALSE(fs::exists(to + "/config.json"));
  };
  orrery::ModelSpec spec;
  spec.arch = {"toto2", {{"d_model", 32}, {"num_heads", 2}, {"num_layers", 2}}};
  spec.param = {"umup", Json::object()};  // umup's default depth_alpha, 1: CompleteP
  refused(orrery::Model(spec, registry), dir + "/a",
          "the Hugging Face Toto 2.0 layout cannot hold depth_alpha = 1.0 of parametrisation 'umup'");
  spec.param = {"sp", Json::object()};
  refused(orrery::Model(spec, registry), dir + "/b", "cannot hold parametrisation 'sp'");
  spec.param = {"umup", {{"depth_alpha", 0.5}}};
  spec.head = {"point", Json::object()};
  refused(orrery::Model(spec, registry), dir + "/c", "cannot hold head 'point'");
  spec.head = {"quantile", {{"levels", {0.05, 0.5, 0.95}}}};
  refused(orrery::Model(spec, registry), dir + "/d", "cannot hold the quantile head's levels [0.05,0.5,0.95]");
  spec.head = {"quantile", Json::object()};
  spec.arch.options["variate_roles"] = true;
  refused(orrery::Model(spec, registry), dir + "/e", "cannot hold variate_roles = true");
  spec.arch.options.erase("variate_roles");
  spec.scaler_window = 4;
  refused(orrery::Model(spec, registry), dir + "/f", "cannot hold scaler_window = 4");
  spec.scaler_window = 0;
  orrery::ModelSpec mlp;
  mlp.arch = {"mlp", Json::object()};
  refused(orrery::Model(mlp, registry), dir + "/g", "architecture plugin 'mlp' has no released checkpoint layout to write");

  // The layout's own model, into a folder that holds a file, onto a file: refused, nothing touched.
  orrery::Model ok(spec, registry);
  fs::create_directory(dir + "/full");
  std::ofstream(dir + "/full/notes.txt") << "mine\n";
  refused(ok, dir + "/full", "export: " + dir + "/full is not empty");
  CHECK(test::read_text(dir + "/full/notes.txt") == "mine\n");
  std::ofstream(dir + "/file") << "x";
  CHECK_THROWS_WITH(orrery::export_model(ok, registry, dir + "/file"), Catch::Contains("is a file"));
  // Weights that are not finite are never written.
  {
    at::NoGradGuard no_grad;
    ok.params().front().tensor.fill_(NAN);
  }
  refused(ok, dir + "/nan", "hold NaN or infinite values");
  CHECK_FALSE(fs::exists(dir + "/nan"));
  // An empty folder is fine, and so is a new one.
  orrery::Model fine(spec, registry);
  fs::create_directory(dir + "/empty");
  orrery::export_model(fine, registry, dir + "/empty");
  CHECK(fs::exists(dir + "/empty/model.safetensors"));
}

TEST_CASE("orrery export writes the layout from the command line, which reads back as the same model") {
  const std::string dir = test::temp_dir("export-cli");
  auto model = released_kind_of_model();
  model->save_weights(dir + "/model.safetensors");
  const auto r = test::run_command(test::orrery_cmd("export --model " + dir + "/model.safetensors --out " + dir + "/hf"));
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(Json::parse(test::read_text(dir + "/hf/config.json"))["num_layers"] == 3);
  const Case c = a_case();
  const auto ours = model->forecast(c.target, c.mask, c.ids, c.horizon);
  auto back = orrery::load_model(dir + "/hf", orrery::Registry::global());
  CHECK(relative_error(back->forecast(c.target, c.mask, c.ids, c.horizon).quantiles, ours.quantiles) < 1e-6);
  // Again into the same folder: refused, the export already there untouched.
  const std::string before = test::read_text(dir + "/hf/model.safetensors");
  const auto again = test::run_command(test::orrery_cmd("export --model " + dir + "/model.safetensors --out " + dir + "/hf"));
  CHECK(again.status == 1);
  CHECK_THAT(again.output, Catch::Contains("export: " + dir + "/hf is not empty"));
  CHECK(test::read_text(dir + "/hf/model.safetensors") == before);
  const auto missing = test::run_command(test::orrery_cmd("export --model " + dir + "/model.safetensors"));
  CHECK(missing.status == 1);
  CHECK_THAT(missing.output, Catch::Contains("export: --model and --out are required"));
}
