#include "orrery/checkpoint.h"

#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "orrery/error.h"
#include "orrery/safetensors.h"

namespace fs = std::filesystem;

namespace orrery {

namespace {

Json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open " + path.string());
  try {
    return Json::parse(in);
  } catch (const std::exception& e) {
    throw Error(path.string() + ": not valid JSON: " + e.what());
  }
}

// Every tensor of a checkpoint folder: one model.safetensors, or the shards its index names.
SafetensorsFile read_weights(const fs::path& dir) {
  const fs::path index = dir / "model.safetensors.index.json";
  if (!fs::exists(index)) return load_safetensors((dir / "model.safetensors").string());
  const Json j = read_json(index);
  if (!j.contains("weight_map") || !j["weight_map"].is_object())
    throw Error(index.string() + " has no weight_map object");
  std::set<std::string> shards;
  for (const auto& [name, shard] : j["weight_map"].items()) {
    const fs::path file(shard.is_string() ? shard.get<std::string>() : "");
    if (file.empty() || file.is_absolute() || file.has_parent_path())
      throw Error(index.string() + ": weight_map of '" + name + "' must name a file beside the index, got " + shard.dump());
    shards.insert(file.string());
  }
  SafetensorsFile all;
  for (const auto& shard : shards) {
    SafetensorsFile part = load_safetensors((dir / shard).string());
    for (auto& t : part.tensors) all.tensors.push_back(std::move(t));
  }
  return all;
}

// The released model stores each layer's residual coefficients tau as buffers attn_tau and
// mlp_tau. Orrery derives them from the parametrisation; they must agree with the file.
void check_taus(SafetensorsFile& file, const Model& model, int64_t layers, const std::string& dir) {
  const Parametrisation& p = model.parametrisation();
  NamedTensors weights;
  for (auto& [name, t] : file.tensors) {
    const bool attn = name.ends_with(".attn_tau"), mlp = name.ends_with(".mlp_tau");
    if (!attn && !mlp) {
      weights.emplace_back(name, t);
      continue;
    }
    const std::string prefix = "transformer.layers.";
    int64_t layer = -1;
    if (name.starts_with(prefix)) layer = std::atoll(name.c_str() + prefix.size());
    if (layer < 0 || layer >= layers) throw Error(dir + ": unexpected buffer '" + name + "'");
    auto [branch, skip] = p.residual_weights(static_cast<int>(2 * layer + (mlp ? 1 : 0)),
                                             static_cast<int>(2 * layers));
    const double ours = branch / skip, theirs = t.to(at::kDouble).item<double>();
    // Within the rounding of the stored dtype (a bfloat16 copy keeps about 3 digits).
    const double tol = t.scalar_type() == at::kBFloat16 ? 8e-3 : t.scalar_type() == at::kHalf ? 1e-3 : 1e-5;
    if (std::fabs(ours - theirs) > tol * std::max(1.0, std::fabs(theirs)))
      throw Error(dir + ": '" + name + "' is " + std::to_string(theirs) + " but config.json's " +
                  "residual_mult and residual_attn_ratio give " + std::to_string(ours));
  }
  file.tensors = std::move(weights);
}

std::unique_ptr<Model> load_hf(const fs::path& dir, const Registry& registry, const std::string& device) {
  const fs::path config_path = dir / "config.json";
  ModelSpec spec = toto2_spec_from_config(read_json(config_path), config_path.string());
  spec.device = device;
  auto model = std::make_unique<Model>(spec, registry);
  SafetensorsFile file = read_weights(dir);
  check_taus(file, *model, spec.arch.options["num_layers"].get<int64_t>(), dir.string());
  model->load_weights(file, dir.string());
  return model;
}

}  // namespace

ModelSpec toto2_spec_from_config(const Json& c, const std::string& path) {
  auto fail = [&](const std::string& m) { return Error(path + ": " + m); };
  if (!c.is_object()) throw fail("expected a JSON object");
  // A field with the released code's default; a wrong type names the field.
  auto get = [&]<typename T>(const char* key, T def) -> T {
    if (!c.contains(key) || c[key].is_null()) return def;
    try {
      return c[key].get<T>();
    } catch (const std::exception&) {
      throw fail("field '" + std::string(key) + "' has the wrong type: " + c[key].dump());
    }
  };
  auto need = [&]<typename T>(const char* key, T) -> T {
    if (!c.contains(key) || c[key].is_null()) throw fail("lacks the required field '" + std::string(key) + "'");
    return get(key, T{});
  };
  const int64_t patch = need("patch_size", int64_t{}), d = need("d_model", int64_t{});
  const int64_t heads = need("num_heads", int64_t{}), layers = need("num_layers", int64_t{});
  if (heads < 1 || d % heads != 0) throw fail("d_model " + std::to_string(d) + " is not divisible by num_heads " + std::to_string(heads));
  const int64_t dh = d / heads;

  // Settings of Toto2ModelConfig that this port does not implement, refused rather than ignored.
  if (get("dropout_p", 0.0) != 0.0) throw fail("dropout_p must be 0 (the released model refuses it too)");
  if (get("num_output_patches", int64_t{1}) != 1) throw fail("num_output_patches other than 1 is not supported");
  if (!get("pre_norm", true)) throw fail("pre_norm = false is not supported (the released layer is pre-norm)");
  if (get("qk_dim", dh) != dh || get("v_dim", dh) != dh)
    throw fail("qk_dim and v_dim must equal d_model / num_heads = " + std::to_string(dh));
  if (get("num_groups", heads) != heads) throw fail("grouped-query attention (num_groups != num_heads) is not supported");
  const bool norm_weight = get("norm_include_weight", false);
  if (norm_weight || get("qk_norm_include_weight", norm_weight))
    throw fail("norm_include_weight / qk_norm_include_weight = true is not supported (published checkpoints have no norm weights)");

  ModelSpec s;
  s.patch_size = patch;
  s.arch = {"toto2",
            {{"d_model", d},
             {"num_heads", heads},
             {"num_layers", layers},
             {"layer_group_size", need("layer_group_size", int64_t{})},
             {"num_variate_layers_per_group", need("num_variate_layers_per_group", int64_t{})},
             {"variate_layer_first", need("variate_layer_first", bool{})},
             {"d_ff", get("d_ff", int64_t{0})},
             {"norm_eps", get("norm_eps", 5e-5)},
             {"attn_bias", get("attn_bias", false)},
             {"mlp_bias", get("mlp_bias", false)},
             {"qk_norm", get("qk_norm", true)},
             {"per_dim_scale", get("per_dim_scale", false)},
             {"use_xpos", get("use_xpos", false)}}};
  s.param = {"umup",
             {{"residual_mult", get("residual_mult", 1.0)},
              {"residual_attn_ratio", need("residual_attn_ratio", double{})}}};
  s.head = {"quantile", Json::object()};  // nine knots 0.1 .. 0.9, as the released head
  return s;
}

std::unique_ptr<Model> load_model(const std::string& path, const Registry& registry,
                                  const std::string& device) {
  const fs::path p(path);
  if (!fs::exists(p)) throw Error("no model at " + path);
  if (fs::is_directory(p)) {
    if (fs::exists(p / "config.json")) return load_hf(p, registry, device);
    if (fs::exists(p / "model.safetensors"))
      return Model::from_file((p / "model.safetensors").string(), registry, device);
    throw Error(path + " holds neither config.json (a Hugging Face checkpoint) nor model.safetensors (Orrery weights)");
  }
  return Model::from_file(path, registry, device);
}

}  // namespace orrery
