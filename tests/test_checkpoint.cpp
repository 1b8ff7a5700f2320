// Hugging Face Toto 2.0 checkpoints: a folder this test writes itself, in the released code's
// layout (config.json + model.safetensors under toto2/model.py's parameter names, with the
// attn_tau/mlp_tau buffers), with random weights.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cmath>
#include <fstream>

#include "orrery/host/load_model.h"
#include "orrery/safetensors.h"
#include "support.h"

using orrery::Json;

namespace {

// tau of residual branch i of 2L (Toto 2.0's residual rule: a_mlp = m sqrt(2 / (1 + r^2)),
// a_attn = r a_mlp, each branch normalised by the variance accumulated before it), written out
// independently of the umup plugin.
double tau(int i, int layers, double m, double r) {
  const double a_mlp = m * std::sqrt(2 / (1 + r * r)), a_attn = r * a_mlp;
  const double a = i % 2 == 0 ? a_attn : a_mlp;
  return a / std::sqrt(layers + ((i + 1) / 2) * a_attn * a_attn + (i / 2) * a_mlp * a_mlp);
}

Json tiny_config() {
  return {{"patch_size", 32}, {"d_model", 64}, {"num_heads", 2}, {"num_layers", 3},
          {"layer_group_size", 3}, {"num_variate_layers_per_group", 1}, {"variate_layer_first", false},
          {"norm_eps", 1e-4}, {"attn_bias", true}, {"mlp_bias", false}, {"qk_norm", false},
          {"per_dim_scale", true}, {"use_xpos", true}, {"residual_mult", 0.75},
          {"residual_attn_ratio", 5.136215466577748}, {"dropout_p", 0.0}};
}

// The released state dict for a config, with random weights.
orrery::NamedTensors reference_tensors(const Json& c, uint64_t seed = 7) {
  at::manual_seed(seed);
  const int64_t d = c["d_model"], L = c["num_layers"], dh = d / c["num_heads"].get<int64_t>();
  const int64_t dff = (4 * d * 2 / 3 + 7) / 8 * 8;
  orrery::NamedTensors t;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    t.emplace_back(name, at::randn(shape) * (shape.size() == 1 ? 0.1 : 1.0));
  };
  auto mlp = [&](const std::string& p, int64_t in, int64_t hidden, int64_t out) {
    add(p + ".linear1.weight", {hidden, in}), add(p + ".linear1.bias", {hidden});
    add(p + ".linear2.weight", {out, hidden}), add(p + ".linear2.bias", {out});
    add(p + ".skip_proj.weight", {out, in}), add(p + ".skip_proj.bias", {out});
  };
  mlp("patch_proj", 64, 4 * d, d);
  for (int i = 0; i < L; ++i) {
    const std::string p = "transformer.layers." + std::to_string(i);
    add(p + ".attn.in_proj.weight", {3 * d, d}), add(p + ".attn.in_proj.bias", {3 * d});
    add(p + ".attn.out_proj.weight", {d, d}), add(p + ".attn.out_proj.bias", {d});
    add(p + ".attn._pds.per_dim_scale", {dh});
    add(p + ".ffn.fc1.weight", {2 * dff, d}), add(p + ".ffn.fc2.weight", {d, dff});
    t.emplace_back(p + ".attn_tau", at::tensor(tau(2 * i, L, c["residual_mult"], c["residual_attn_ratio"])).to(at::kFloat));
    t.emplace_back(p + ".mlp_tau", at::tensor(tau(2 * i + 1, L, c["residual_mult"], c["residual_attn_ratio"])).to(at::kFloat));
  }
  mlp("output_head.param_projection.proj", d, 4 * d, 32 * 9);
  return t;
}

std::string write_checkpoint(const std::string& name, const Json& config, const orrery::NamedTensors& t) {
  std::string dir = test::temp_dir(name);
  std::ofstream(dir + "/config.json") << config.dump(2);
  orrery::save_safetensors(dir + "/model.safetensors", t);
  return dir;
}

}  // namespace

TEST_CASE("a Hugging Face Toto 2.0 folder loads by the released parameter names") {
  const Json config = tiny_config();
  const auto tensors = reference_tensors(config);
  const std::string dir = write_checkpoint("hf", config, tensors);
  auto model = orrery::load_model(dir, orrery::Registry::global());
  CHECK(model->spec().arch.name == "toto2");
  CHECK(model->spec().param.name == "umup");
  // Every weight of the file is in the model, unchanged; the tau buffers are not weights.
  int64_t matched = 0;
  for (const auto& [name, t] : tensors) {
    if (name.ends_with("_tau")) continue;
    bool found = false;
    for (auto& p : model->params())
      if (p.info.name == name) {
        found = true;
        CHECK(at::equal(p.tensor.detach(), t));
      }
    INFO(name);
    CHECK(found);
    matched += found;
  }
  CHECK(static_cast<size_t>(matched) == model->params().size());

  at::Tensor x = at::sin(at::arange(256, at::kFloat) / 5).view({1, 1, 256}) * 3 + 10;
  auto f = model->forecast(x, at::ones_like(x, at::kBool), at::zeros({1, 1}, at::kLong), 40);
  CHECK(f.quantiles.sizes() == at::IntArrayRef({9, 1, 1, 40}));
  CHECK(f.quantiles.isfinite().all().item<bool>());

  // The same folder through the command line.
  std::ofstream(dir + "/in.csv") << "a\n" << [] {
    std::string s;
    for (int t = 0; t < 100; ++t) s += std::to_string(10 + std::sin(t / 5.0)) + "\n";
    return s;
  }();
  auto r = test::run_command(std::string(ORRERY_BIN) + " forecast --model " + dir + " --input " + dir +
                             "/in.csv --horizon 12 --decode-block-size 32");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("a_q0.9") != std::string::npos);
  // --sign-average reaches the model: its forecast is another one.
  auto averaged = test::run_command(std::string(ORRERY_BIN) + " forecast --model " + dir + " --input " + dir +
                                    "/in.csv --horizon 12 --decode-block-size 32 --sign-average");
  INFO(averaged.output);
  CHECK(averaged.status == 0);
  CHECK(averaged.output.find("a_q0.9") != std::string::npos);
  CHECK(averaged.output != r.output);
}

TEST_CASE("a sharded checkpoint loads through its index") {
  const Json config = tiny_config();
  auto tensors = reference_tensors(config);
  std::string dir = test::temp_dir("hf-sharded");
  std::ofstream(dir + "/config.json") << config.dump();
  const size_t half = tensors.size() / 2;
  orrery::save_safetensors(dir + "/a.safetensors", {tensors.begin(), tensors.begin() + half});
  orrery::save_safetensors(dir + "/b.safetensors", {tensors.begin() + half, tensors.end()});
  Json index = {{"weight_map", Json::object()}};
  for (size_t i = 0; i < tensors.size(); ++i) index["weight_map"][tensors[i].first] = i < half ? "a.safetensors" : "b.safetensors";
  std::ofstream(dir + "/model.safetensors.index.json") << index.dump();
  CHECK(orrery::load_model(dir, orrery::Registry::global())->num_parameters() > 0);
}

TEST_CASE("a bad Hugging Face folder is refused with the file and the field at fault") {
  const Json good = tiny_config();
  const auto tensors = reference_tensors(good);
  auto load = [&](const Json& config, const orrery::NamedTensors& t) {
    orrery::load_model(write_checkpoint("hf-bad", config, t), orrery::Registry::global());
  };
  Json no_ratio = good;
  no_ratio.erase("residual_attn_ratio");
  CHECK_THROWS_WITH(load(no_ratio, tensors), Catch::Contains("config.json") && Catch::Contains("residual_attn_ratio"));
  Json gqa = good;
  gqa["num_groups"] = 1;
  CHECK_THROWS_WITH(load(gqa, tensors), Catch::Contains("grouped-query"));
  Json typo = good;
  typo["d_model"] = "64";
  CHECK_THROWS_WITH(load(typo, tensors), Catch::Contains("'d_model' has the wrong type"));
  // A residual rule that disagrees with the stored taus.
  Json other_mult = good;
  other_mult["residual_mult"] = 1.0;
  CHECK_THROWS_WITH(load(other_mult, tensors), Catch::Contains("transformer.layers.0.attn_tau"));
  // A tensor the model does not have, and one missing.
  auto extra = tensors;
  extra.emplace_back("transformer.layers.0.norm1.weight", at::ones({64}));
  CHECK_THROWS_WITH(load(good, extra), Catch::Contains("unexpected 'transformer.layers.0.norm1.weight'"));
  auto missing = tensors;
  missing.erase(missing.begin());
  CHECK_THROWS_WITH(load(good, missing), Catch::Contains("missing 'patch_proj.linear1.weight'"));
}

TEST_CASE("a minimal config.json takes the released code's defaults") {
  const Json minimal = {{"patch_size", 32}, {"d_model", 128}, {"num_heads", 2}, {"num_layers", 2},
                        {"layer_group_size", 2}, {"num_variate_layers_per_group", 1},
                        {"variate_layer_first", false}, {"residual_attn_ratio", 2.0}};
  const auto readers = orrery::Registry::global().checkpoint_readers();
  REQUIRE(readers.size() == 1);
  CHECK(readers[0]->name == "toto2");
  REQUIRE(readers[0]->checkpoint_format->recognises(minimal));
  orrery::ModelSpec s = readers[0]->checkpoint_format->spec(minimal, "config.json");
  const Json& a = s.arch.options;
  CHECK(a["norm_eps"] == 5e-5);
  CHECK(a["attn_bias"] == false);
  CHECK(a["mlp_bias"] == false);
  CHECK(a["qk_norm"] == true);
  CHECK(a["per_dim_scale"] == false);
  CHECK(a["use_xpos"] == false);
  CHECK(s.param.name == "umup");
  CHECK(s.param.options["residual_mult"] == 1.0);
  CHECK(s.param.options["residual_attn_ratio"] == 2.0);
  CHECK(s.param.options["muon_rule"] == "toto2");  // the rule its published rates were tuned under
  // It builds: no biases, no PerDimScale, QK-norm without weights.
  orrery::Model m(s, orrery::Registry::global());
  for (const auto& p : m.params()) {
    CHECK(p.info.name.find("_pds") == std::string::npos);
    CHECK(p.info.name.find("attn.in_proj.bias") == std::string::npos);
  }
  // A shard outside the folder is refused.
  std::string dir = test::temp_dir("hf-escape");
  std::ofstream(dir + "/config.json") << tiny_config().dump();
  std::ofstream(dir + "/model.safetensors.index.json") << R"({"weight_map": {"x": "../elsewhere.safetensors"}})";
  CHECK_THROWS_WITH(orrery::load_model(dir, orrery::Registry::global()), Catch::Contains("must name a file beside the index"));
}
