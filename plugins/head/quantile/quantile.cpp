// Quantile head (Toto 2.0's output head): an output residual MLP (d -> 4d -> P*Q) predicts, at
// patch n, Q quantiles of every step of patch n+1. Trained with the pinball loss
// rho_tau(u) = u * (tau - 1[u < 0]), u = y - q, averaged over levels and observed points.
#include <ATen/ATen.h>

#include "orrery/error.h"
#include "orrery/ops.h"
#include "orrery/plugin.h"

namespace {
using namespace orrery;

class QuantileHead final : public Head {
 public:
  QuantileHead(const Json& o, HeadContext& ctx)
      : levels_(o["levels"].get<std::vector<double>>()), patch_(ctx.patch_size) {
    for (size_t i = 0; i < levels_.size(); ++i) {
      if (levels_[i] <= 0 || levels_[i] >= 1)
        throw Error("head plugin 'quantile': levels must lie strictly between 0 and 1");
      if (i && levels_[i] <= levels_[i - 1])
        throw Error("head plugin 'quantile': levels must be sorted ascending without repeats");
    }
    const int64_t Q = static_cast<int64_t>(levels_.size());
    auto scope = ctx.params.scope("output_head");  // the released Toto 2.0 names
    proj_ = ResidualMLP(ctx.params, "param_projection.proj", ctx.d_model, 4 * ctx.d_model, patch_ * Q,
                        Role::hidden, Role::readout);
    tau_ = at::tensor(levels_, at::kFloat).to(ctx.params.options().device());
  }

  at::Tensor forward(const at::Tensor& hidden, const ForwardContext& ctx) override {
    // Flat output index = step * Q + level (time-step major), as in the reference.
    return proj_(hidden, ctx).unflatten(-1, {patch_, static_cast<int64_t>(levels_.size())});
  }

  at::Tensor loss(const at::Tensor& out, const at::Tensor& target,
                  const at::Tensor& weight) override {
    at::Tensor u = target.unsqueeze(-1) - out;                    // (..., P, Q)
    at::Tensor pinball = at::maximum(tau_ * u, (tau_ - 1) * u).mean(-1);  // mean over levels
    return (pinball * weight).sum() / weight.sum().clamp_min(1.0);
  }

  at::Tensor quantiles(const at::Tensor& out, const std::vector<double>& levels) override {
    at::Tensor knots = std::get<0>(out.sort(-1));  // (..., Q) non-crossing
    std::vector<at::Tensor> picked;
    for (double l : levels) picked.push_back(interpolate(knots, l));
    return at::stack(picked, 0);
  }

  std::vector<double> default_levels() const override { return levels_; }

 private:
  // Linear interpolation between the two nearest knots; flat beyond the outermost ones.
  at::Tensor interpolate(const at::Tensor& knots, double l) const {
    const size_t Q = levels_.size();
    if (l <= levels_.front()) return knots.select(-1, 0);
    if (l >= levels_.back()) return knots.select(-1, Q - 1);
    size_t hi = 1;
    while (levels_[hi] < l) ++hi;
    const double w = (l - levels_[hi - 1]) / (levels_[hi] - levels_[hi - 1]);
    return knots.select(-1, hi - 1) * (1 - w) + knots.select(-1, hi) * w;
  }

  std::vector<double> levels_;
  int64_t patch_;
  ResidualMLP proj_;
  at::Tensor tau_;
};

OptionSchema schema() {
  return OptionSchema{}.number_list("levels", nine_levels(),
                                    "quantile levels, sorted, strictly inside (0, 1)");
}

std::unique_ptr<Head> make(const Json& o, HeadContext& ctx) {
  return std::make_unique<QuantileHead>(o, ctx);
}

}  // namespace

ORRERY_PLUGIN(head, "quantile", "0.1.0",
              "Quantile head: residual-MLP readout of Q quantiles per step of the next patch, "
              "pinball loss, quantiles sorted at inference",
              schema, make)
