// Point head: one value per step of the next patch, trained with MSE or MAE in the model's
// normalised space. As a probabilistic forecast it reports the point at every requested level
// (a degenerate fan), so evaluation and plots treat all heads alike.
#include <ATen/ATen.h>

#include "orrery/ops.h"
#include "orrery/plugin.h"

namespace {
using namespace orrery;

class PointHead final : public Head {
 public:
  PointHead(const Json& o, HeadContext& ctx)
      : mae_(o["loss"].get<std::string>() == "mae"), patch_(ctx.patch_size) {
    auto scope = ctx.params.scope("output_head");  // named like the quantile head's
    proj_ = ResidualMLP(ctx.params, "param_projection.proj", ctx.d_model, 4 * ctx.d_model, patch_, Role::hidden,
                        Role::readout);
  }

  at::Tensor forward(const at::Tensor& hidden, const ForwardContext& ctx) override {
    return proj_(hidden, ctx).unsqueeze(-1);
  }

  at::Tensor loss(const at::Tensor& out, const at::Tensor& target, const at::Tensor& weight) override {
    at::Tensor err = out.squeeze(-1) - target;
    at::Tensor per_point = mae_ ? err.abs() : err.pow(2);
    return (per_point * weight).sum() / weight.sum().clamp_min(1.0);
  }

  at::Tensor quantiles(const at::Tensor& out, const std::vector<double>& levels) override {
    const int64_t Q = static_cast<int64_t>(levels.size());
    return out.squeeze(-1).unsqueeze(0).expand({Q, -1, -1, -1, -1}).contiguous();  // (Q,B,V,N,P)
  }

  std::vector<double> default_levels() const override { return nine_levels(); }

 private:
  bool mae_;
  int64_t patch_;
  ResidualMLP proj_;
};

OptionSchema schema() {
  return OptionSchema{}.string("loss", "mse", "training loss on the normalised values", {"mse", "mae"});
}

std::unique_ptr<Head> make(const Json& o, HeadContext& ctx) { return std::make_unique<PointHead>(o, ctx); }

}  // namespace

ORRERY_PLUGIN(head, "point", "0.1.0",
              "Point head: MSE or MAE on the next patch; the point is reported at every level",
              schema, make)
