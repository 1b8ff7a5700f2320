// A patch-wise residual MLP: the baseline that shows scripts swap architectures with one word.
// Each patch token is embedded like Toto's (64 -> 4d -> d residual MLP) and refined by
// pre-RMSNorm residual MLP blocks; no information moves between patches or variates, so a
// forecast rests on the last context patch alone. The host's pipeline and heads are unchanged.
#include <ATen/ATen.h>

#include "orrery/ops.h"
#include "orrery/plugin.h"

namespace {
using namespace orrery;

class PatchMLP final : public Architecture {
 public:
  PatchMLP(const Json& o, ArchitectureContext& ctx)
      : d_(o["d_model"].get<int64_t>()), eps_(o["norm_eps"].get<double>()) {
    const int64_t L = o["num_layers"], hidden = d_ * o["hidden_mult"].get<int64_t>();
    ParamFactory& f = ctx.params;
    f.set_width(d_);
    embed_ = ResidualMLP(f, "patch_proj", 2 * ctx.patch_size, 4 * d_, d_, Role::input, Role::hidden);
    act_scale_ = f.parametrisation().activation_scale("silu");
    f.set_stack_depth(static_cast<int>(L));
    for (int i = 0; i < L; ++i) {
      auto scope = f.scope("layers." + std::to_string(i));
      blocks_.push_back({Linear(f, "fc1", d_, hidden, Role::hidden, true, i),
                         Linear(f, "fc2", hidden, d_, Role::hidden, true, i),
                         Residual(f, "residual", i, static_cast<int>(L))});
    }
    f.set_stack_depth(0);
  }

  int64_t d_model() const override { return d_; }

  at::Tensor forward(const PatchInput& in, const ForwardContext& ctx) override {
    at::Tensor x = embed_(in.tokens, ctx);
    for (const auto& b : blocks_) {
      x = b.residual(x, [&](const at::Tensor& in) {
        at::Tensor h = at::silu(b.fc1(rms_norm(in, eps_), ctx));
        return b.fc2(act_scale_ == 1.0 ? h : h * act_scale_, ctx);
      }, ctx);
    }
    return rms_norm(x, eps_);
  }

 private:
  struct Block {
    Linear fc1, fc2;
    Residual residual;
  };
  int64_t d_;
  double eps_, act_scale_ = 1.0;
  ResidualMLP embed_;
  std::vector<Block> blocks_;
};

OptionSchema schema() {
  return OptionSchema{}
      .integer("d_model", 128, "width", 1, 65536)
      .integer("num_layers", 2, "residual MLP blocks", 0, 1024)
      .integer("hidden_mult", 4, "block hidden width as a multiple of d_model", 1, 64)
      .number("norm_eps", 1e-4, "RMSNorm epsilon", 0.0);
}

std::unique_ptr<Architecture> make(const Json& o, ArchitectureContext& ctx) {
  return std::make_unique<PatchMLP>(o, ctx);
}

}  // namespace

ORRERY_PLUGIN(architecture, "mlp", "0.1.0",
              "Patch-wise residual MLP baseline over the same 64-wide patch tokens (no attention)",
              schema, make)
