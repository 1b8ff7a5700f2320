// The released Toto 2.0 checkpoints (Datadog's Hugging Face folders): config.json holds a
// Toto2ModelConfig and model.safetensors the released module's state dict. Parameter names
// already match this plugin's (toto2.cpp keeps the release's names); what is left is the
// config's mapping onto a toto2 + umup + quantile model, and the residual coefficients the
// release stores as buffers. Both ways: a checkpoint is read into a model, and a model whose
// every setting the release can compute is written out as one, which the released `toto-2`
// package loads (Toto2Model.from_pretrained).
#include <ATen/ATen.h>

#include <cmath>

#include "orrery/error.h"
#include "orrery/plugin.h"
#include "shape.h"

namespace {
using namespace orrery;

// A Toto2ModelConfig has a width and at least one of the fields only it has.
bool recognises(const Json& c) {
  if (!c.is_object() || !c.contains("d_model")) return false;
  for (const char* key : {"residual_attn_ratio", "num_variate_layers_per_group", "variate_layer_first",
                          "layer_group_size"})
    if (c.contains(key)) return true;
  return false;
}

ModelSpec spec_from_config(const Json& c, const std::string& path) {
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
  // The release was trained under DataDog's Muon-family rule and u-muP's depth-muP residuals:
  // fine-tuning it with its published NorMuon rate means those, whatever umup's defaults.
  s.param = {"umup",
             {{"residual_mult", get("residual_mult", 1.0)},
              {"residual_attn_ratio", need("residual_attn_ratio", double{})},
              {"muon_rule", "toto2"}, {"depth_alpha", 0.5}}};
  s.head = {"quantile", Json::object()};  // nine knots 0.1 .. 0.9, as the released head
  return s;
}

// The release stores each layer's residual coefficients tau = branch / skip as buffers attn_tau
// and mlp_tau. Orrery derives them from the parametrisation; they must agree with the file.
// "transformer.layers.<i>.attn_tau" or ".mlp_tau": the layer i, or -1 for any other name.
int64_t tau_layer(const std::string& name) {
  const std::string prefix = "transformer.layers.";
  if (!name.starts_with(prefix)) return -1;
  const size_t dot = name.find('.', prefix.size());
  const std::string digits = name.substr(prefix.size(), dot - prefix.size());
  const std::string rest = dot == std::string::npos ? "" : name.substr(dot);
  if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos ||
      (rest != ".attn_tau" && rest != ".mlp_tau"))
    return -1;
  return std::stoll(digits);
}

void take_buffers(NamedTensors& tensors, const ModelSpec& spec, const Parametrisation& p,
                  const std::string& path) {
  const int64_t layers = spec.arch.options.value("num_layers", int64_t{0});
  NamedTensors weights;
  int64_t taus = 0;
  for (auto& [name, t] : tensors) {
    const bool attn = name.ends_with(".attn_tau"), mlp = name.ends_with(".mlp_tau");
    if (!attn && !mlp) {
      weights.emplace_back(name, t);
      continue;
    }
    const int64_t layer = tau_layer(name);
    ++taus;
    if (layer < 0 || layer >= layers || t.numel() != 1 || !t.is_floating_point())
      throw Error(path + ": unexpected buffer '" + name + "' (" + c10::toString(t.scalar_type()) + " " +
                  c10::str(t.sizes()) + ")");
    auto [branch, skip] = p.residual_weights(static_cast<int>(2 * layer + (mlp ? 1 : 0)),
                                             static_cast<int>(2 * layers));
    const double ours = branch / skip, theirs = t.to(at::kDouble).item<double>();
    // Within the rounding of the stored dtype (a bfloat16 copy keeps about 3 digits).
    const double tol = t.scalar_type() == at::kBFloat16 ? 8e-3 : t.scalar_type() == at::kHalf ? 1e-3 : 1e-5;
    if (!(std::fabs(ours - theirs) <= tol * std::max(1.0, std::fabs(theirs))))
      throw Error(path + ": '" + name + "' is " + std::to_string(theirs) + " but config.json's " +
                  "residual_mult and residual_attn_ratio give " + std::to_string(ours));
  }
  // The release stores both coefficients of every layer; a partial set means a damaged file.
  if (taus != 0 && taus != 2 * layers)
    throw Error(path + ": holds " + std::to_string(taus) + " of the " + std::to_string(2 * layers) +
                " residual coefficients (attn_tau, mlp_tau of each layer)");
  tensors = std::move(weights);
}

// The release's residual coefficient of branch `index` (attention 2i, MLP 2i + 1) of `count`.
double tau(const Parametrisation& p, int index, int count) {
  const auto [branch, skip] = p.residual_weights(index, count);
  return branch / skip;
}

// A toto2 model as the release's config.json, its tau buffers added to `tensors`. The release is
// a toto2 transformer under u-muP with depth-muP's residuals, the nine-knot quantile head and the
// whole-history scaler: any other setting that changes what the model computes is refused,
// naming it. Settings of training alone (umup's muon_rule and backward_scales, toto2's
// xpos_centre for block decoding) do not change the weights and pass.
Json config_from_spec(const ModelSpec& s, const Parametrisation& p, NamedTensors& tensors) {
  auto refuse = [](const std::string& what, const std::string& why) {
    return Error("the Hugging Face Toto 2.0 layout cannot hold " + what + ": " + why);
  };
  const Json& a = s.arch.options;
  const Json& u = s.param.options;
  if (s.param.name != "umup")
    throw refuse("parametrisation '" + s.param.name + "'", "the released models are u-muP's (param = \"umup\")");
  if (u["depth_alpha"].get<double>() != 0.5)
    throw refuse("depth_alpha = " + u["depth_alpha"].dump() + " of parametrisation 'umup'",
                 "the release's residuals are depth-muP's, depth_alpha = 0.5");
  if (s.head.name != "quantile") throw refuse("head '" + s.head.name + "'", "the release forecasts with the quantile head");
  if (s.head.options["levels"].get<std::vector<double>>() != nine_levels())
    throw refuse("the quantile head's levels " + s.head.options["levels"].dump(), "the release's are 0.1, 0.2, ..., 0.9");
  if (s.scaler_window != 0)
    throw refuse("scaler_window = " + std::to_string(s.scaler_window), "the release's scaler reads the whole history");
  if (s.covariate_lags != 0)
    throw refuse("covariate_lags = " + std::to_string(s.covariate_lags), "the release reads covariates as given");
  for (const char* option : {"variate_roles", "covariate_match"})
    if (a[option].get<bool>()) throw refuse(std::string(option) + " = true", "the release has no covariate embeddings");
  if (!string_list(a["static_covariates"]).empty())
    throw refuse("static_covariates = " + a["static_covariates"].dump(), "the release has no static covariate embeddings");
  if (a["variate_attention"] != "patch")
    throw refuse("variate_attention = " + a["variate_attention"].dump(), "the release's variate layers attend patch by patch");
  if (a["rope_fraction"].get<double>() != 0.5 || a["rope_base"].get<double>() != 1e4)
    throw refuse("rope_fraction = " + a["rope_fraction"].dump() + ", rope_base = " + a["rope_base"].dump(),
                 "the release rotates half of each head's dimensions at base 10000");

  const toto2::Shape shape = toto2::shape_of(a);
  for (int64_t i = 0; i < shape.num_layers; ++i) {
    const std::string layer = "transformer.layers." + std::to_string(i);
    const int count = static_cast<int>(2 * shape.num_layers);
    tensors.emplace_back(layer + ".attn_tau", at::scalar_tensor(tau(p, static_cast<int>(2 * i), count), at::kFloat));
    tensors.emplace_back(layer + ".mlp_tau", at::scalar_tensor(tau(p, static_cast<int>(2 * i + 1), count), at::kFloat));
  }
  return {{"patch_size", s.patch_size},
          {"d_model", shape.d_model},
          {"num_heads", shape.num_heads},
          {"num_layers", shape.num_layers},
          {"layer_group_size", shape.layer_group_size},
          {"num_variate_layers_per_group", shape.variate_layers_per_group},
          {"variate_layer_first", a["variate_layer_first"]},
          {"dropout_p", 0.0},
          {"norm_eps", a["norm_eps"]},
          {"attn_bias", a["attn_bias"]},
          {"mlp_bias", a["mlp_bias"]},
          {"num_output_patches", 1},
          {"pre_norm", true},
          {"d_ff", shape.d_ff},
          {"residual_mult", u["residual_mult"]},
          {"residual_attn_ratio", u["residual_attn_ratio"]},
          {"qk_norm", a["qk_norm"]},
          {"norm_include_weight", false},
          {"per_dim_scale", a["per_dim_scale"]},
          {"use_xpos", a["use_xpos"]}};
}

constexpr CheckpointFormat kFormat{"Hugging Face Toto 2.0", recognises, spec_from_config, take_buffers, config_from_spec};

}  // namespace

ORRERY_CHECKPOINT_FORMAT(kFormat)
