// Standard parametrisation: what PyTorch does by default. nn.Linear's init (Kaiming-uniform with
// a = sqrt(5), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases), unit gains, no
// forward multipliers, one learning rate for every parameter, plain residual sums, and the
// usual 1/sqrt(d_head) attention scale. Nothing here transfers across widths; that is the point
// of comparing it with u-muP.
#include <ATen/ATen.h>

#include <cmath>

#include "orrery/plugin.h"

namespace {

class StandardParametrisation final : public orrery::Parametrisation {
 public:
  std::string name() const override { return "sp"; }

  at::Tensor init(const orrery::ParamInfo& info, at::Generator& gen) const override {
    if (info.role == orrery::Role::gain) return at::ones(info.shape);
    const double bound = 1.0 / std::sqrt(static_cast<double>(info.fan_in));
    return at::empty(info.shape).uniform_(-bound, bound, gen);
  }
  double linear_multiplier(const orrery::ParamInfo&) const override { return 1.0; }
  double lr_multiplier(const orrery::ParamInfo&, orrery::OptimizerFamily) const override {
    return 1.0;
  }
  std::pair<double, double> residual_weights(int, int) const override { return {1.0, 1.0}; }
  double activation_scale(const std::string&) const override { return 1.0; }
  double attention_scale(int64_t d_head) const override {
    return 1.0 / std::sqrt(static_cast<double>(d_head));
  }
};

orrery::OptionSchema schema() { return {}; }

std::unique_ptr<orrery::Parametrisation> make(const orrery::Json&) {
  return std::make_unique<StandardParametrisation>();
}

}  // namespace

ORRERY_PLUGIN(parametrisation, "sp", "1.0.0",
              "Standard parametrisation (PyTorch defaults): fan-in uniform init, one learning rate",
              schema, make)
