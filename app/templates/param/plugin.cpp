// @NAME@: a parametrisation plugin. For every parameter the architecture asks for, by role:
//
//   init        W ~ N(0, (init_scale / sqrt(fan_in))^2); gains start at 1
//   forward     y = W x                      (no multiplier)
//   readout     lr multiplier readout_lr     (the output layer's rate, as muP varies it)
//   other       lr multiplier 1; residual x <- f(x) + x; attention scale 1/sqrt(d_head)
//
// An architecture never picks an init or a learning rate: it asks the parametrisation, so a
// script switches between this and sp, mup or umup with one word.
#include <ATen/ATen.h>

#include <cmath>

#include "orrery/plugin.h"

namespace {
using namespace orrery;

class Param final : public Parametrisation {
 public:
  explicit Param(const Json& o) : init_scale_(o["init_scale"]), readout_lr_(o["readout_lr"]) {}

  std::string name() const override { return "@NAME@"; }

  at::Tensor init(const ParamInfo& info, at::Generator& gen) const override {
    if (info.role == Role::gain) return at::ones(info.shape);
    const double std = init_scale_ / std::sqrt(static_cast<double>(info.fan_in));
    return at::empty(info.shape).normal_(0.0, std, gen);
  }
  double linear_multiplier(const ParamInfo&) const override { return 1.0; }
  double lr_multiplier(const ParamInfo& info, OptimizerFamily) const override {
    return info.role == Role::readout ? readout_lr_ : 1.0;
  }
  std::pair<double, double> residual_weights(int, int) const override { return {1.0, 1.0}; }
  double activation_scale(const std::string&) const override { return 1.0; }
  double attention_scale(int64_t d_head) const override { return 1.0 / std::sqrt(static_cast<double>(d_head)); }

 private:
  double init_scale_, readout_lr_;
};

OptionSchema schema() {
  return OptionSchema{}
      .number("init_scale", 1.0, "initial weights' standard deviation times sqrt(fan_in)", 0.0)
      .number("readout_lr", 1.0, "learning-rate multiplier of readout weights", 0.0);
}

std::unique_ptr<Parametrisation> make(const Json& o) { return std::make_unique<Param>(o); }

}  // namespace

ORRERY_PLUGIN(parametrisation, "@NAME@", "0.1.0", "@NAME@: fan-in Gaussian init and a readout learning rate (a scaffold)",
              schema, make)
