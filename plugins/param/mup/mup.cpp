// Maximal update parametrisation (muP; Yang et al., Tensor Programs V), in the Adam form that
// microsoft/mup implements, relative to a base model of width `base_width`
// (width_mult = d_model / base_width; at the base width muP is SP):
//   init          SP's fan-in init everywhere; the readout's is rescaled by sqrt(width_mult)
//   multipliers   readout output / width_mult (MuReadout); none elsewhere
//   attention     softmax(attn_mult * q k^T / d_head): 1/d, equal to 1/sqrt(d) at d = attn_mult^2
//   Adam LR       hidden matrices lr / width_mult; input weights, biases, gains, readout lr
//   SGD LR        hidden matrices lr; every vector-like parameter lr * width_mult
//   Muon LR       hidden matrices lr: Muon's spectral shape factor already is the muP rule
// Residual branches add plainly, and autograd's gradients are left as they are.
#include <ATen/ATen.h>

#include <cmath>

#include "orrery/plugin.h"

namespace {
using namespace orrery;

class MaximalUpdate final : public Parametrisation {
 public:
  explicit MaximalUpdate(const Json& o)
      : base_width_(o["base_width"].get<double>()), attn_mult_(o["attn_mult"]),
        zero_readout_(o["readout_zero_init"]) {}

  std::string name() const override { return "mup"; }

  at::Tensor init(const ParamInfo& info, at::Generator& gen) const override {
    if (info.role == Role::gain) return at::ones(info.shape);
    if (info.role == Role::readout && zero_readout_) return at::zeros(info.shape);
    double bound = 1.0 / std::sqrt(static_cast<double>(info.fan_in));
    if (info.role == Role::readout) bound *= std::sqrt(width_mult(info));
    return at::empty(info.shape).uniform_(-bound, bound, gen);
  }

  double linear_multiplier(const ParamInfo& w) const override {
    return w.role == Role::readout ? 1.0 / width_mult(w) : 1.0;
  }

  double lr_multiplier(const ParamInfo& info, OptimizerFamily family) const override {
    const double m = width_mult(info);
    const bool hidden = info.role == Role::hidden;
    switch (family) {
      case OptimizerFamily::adam_like: return hidden ? 1.0 / m : 1.0;
      case OptimizerFamily::sgd_like: return hidden ? 1.0 : m;
      case OptimizerFamily::muon_like: return 1.0;
    }
    return 1.0;
  }

  std::pair<double, double> residual_weights(int, int) const override { return {1.0, 1.0}; }
  double activation_scale(const std::string&) const override { return 1.0; }
  double attention_scale(int64_t d_head) const override {
    return attn_mult_ / static_cast<double>(d_head);
  }

 private:
  // Parameters made without a model width (a bare head) count as the base model.
  double width_mult(const ParamInfo& info) const {
    return info.width > 0 ? static_cast<double>(info.width) / base_width_ : 1.0;
  }
  double base_width_, attn_mult_;
  bool zero_readout_;
};

OptionSchema schema() {
  return OptionSchema{}
      .number("base_width", 128, "d_model of the base (proxy) model, where muP equals SP", 1.0)
      .number("attn_mult", 8, "attention logits are attn_mult * q.k / d_head (8: SP at d_head 64)", 0.0)
      .boolean("readout_zero_init", false, "start the readout at zero (TP5's recommendation)");
}

std::unique_ptr<Parametrisation> make(const Json& o) { return std::make_unique<MaximalUpdate>(o); }

}  // namespace

ORRERY_PLUGIN(parametrisation, "mup", "1.0.0",
              "muP (Tensor Programs V, microsoft/mup Adam form) relative to a base width: readout "
              "1/width_mult, hidden Adam LR 1/width_mult, 1/d attention",
              schema, make)
