// @NAME@: an architecture plugin, patch tokens to hidden states. For patch n of each variate:
//
//   e_n = embed(token_n)                       (a residual MLP over the 2P-wide token, 2P -> 4d -> d)
//   c_n = (e_1 + ... + e_n) / n                (the mean of the patches so far: causal)
//   h_n = RMSNorm(e_n + residual(W c_n))       (repeated for num_layers layers)
//
// The rule an architecture keeps: h_n reads patches 1..n of its own series only, so the
// forecast of patch n + 1 never sees it. Every weight comes from the ParamFactory with its role,
// so the parametrisation (sp, umup, ...) sets its init, multipliers and learning rates.
#include <ATen/ATen.h>

#include "orrery/ops.h"
#include "orrery/plugin.h"

namespace {
using namespace orrery;

class CausalMean final : public Architecture {
 public:
  CausalMean(const Json& o, ArchitectureContext& ctx) : d_(o["d_model"]), eps_(o["norm_eps"]) {
    const int64_t layers = o["num_layers"];
    ParamFactory& f = ctx.params;
    f.set_width(d_);
    embed_ = ResidualMLP(f, "patch_proj", 2 * ctx.patch_size, 4 * d_, d_, Role::input, Role::hidden);
    f.set_stack_depth(static_cast<int>(layers));
    for (int i = 0; i < layers; ++i) {
      auto scope = f.scope("layers." + std::to_string(i));
      layers_.push_back({Linear(f, "mix", d_, d_, Role::hidden, false, i), Residual(f, "residual", i, static_cast<int>(layers))});
    }
    f.set_stack_depth(0);
  }

  int64_t d_model() const override { return d_; }

  at::Tensor forward(const PatchInput& in, const ForwardContext& ctx) override {
    at::Tensor x = embed_(in.tokens, ctx);  // (B, V, N, d)
    const int64_t n = x.size(2);
    const at::Tensor count = at::arange(1, n + 1, x.options()).view({1, 1, n, 1});
    for (const auto& layer : layers_) {
      const at::Tensor mean_so_far = x.cumsum(2) / count;  // patch n sees patches 1..n only
      x = rms_norm(layer.residual.add(layer.mix(mean_so_far, ctx), x), eps_);
    }
    return x;
  }

 private:
  struct Layer {
    Linear mix;
    Residual residual;
  };
  int64_t d_;
  double eps_;
  ResidualMLP embed_;
  std::vector<Layer> layers_;
};

OptionSchema schema() {
  return OptionSchema{}
      .integer("d_model", 64, "width", 1, 65536)
      .integer("num_layers", 2, "layers", 0, 1024)
      .number("norm_eps", 1e-4, "RMSNorm epsilon", 0.0);
}

std::unique_ptr<Architecture> make(const Json& o, ArchitectureContext& ctx) {
  return std::make_unique<CausalMean>(o, ctx);
}

}  // namespace

ORRERY_PLUGIN(architecture, "@NAME@", "0.1.0", "@NAME@: each patch with the mean of the patches before it (a scaffold)",
              schema, make)
