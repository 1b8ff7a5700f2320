// @NAME@: an optimizer plugin. For each parameter p with gradient g, at step t:
//
//   m <- beta * m + (1 - beta) * g                     (a momentum of the gradient)
//   p <- p * (1 - lr_t * weight_decay) - lr_t * m      (decoupled weight decay, then the step)
//   lr_t = lr * schedule factor * the parametrisation's multiplier for p's role
//
// Keeping the parametrisation's multiplier is what lets a rate tuned on a small model carry to a
// wide one under u-muP or muP. Edit step(); keep every tensor you carry across steps in
// state_tensors(), so that checkpoints and --resume hold it.
#include <ATen/ATen.h>

#include "orrery/plugin.h"

namespace {
using namespace orrery;

class Optim final : public Optimizer {
 public:
  Optim(const Json& o, std::vector<Param>& params, const Parametrisation& param)
      : lr_(o["lr"]), beta_(o["beta"]), weight_decay_(o["weight_decay"]) {
    for (auto& p : params)
      slots_.push_back({p.info.name, p.tensor, at::zeros_like(p.tensor),
                        param.lr_multiplier(p.info, OptimizerFamily::sgd_like)});
  }

  void step(const StepScalars& s) override {
    at::NoGradGuard no_grad;  // the update is not part of any graph
    const double beta = s.momentum >= 0 ? s.momentum : beta_;
    for (auto& slot : slots_) {
      const at::Tensor& g = slot.param.grad();
      if (!g.defined()) continue;  // a parameter this step did not reach
      const double lr = lr_ * s.lr_factor * slot.lr_mult;
      slot.m.mul_(beta).add_(g, 1.0 - beta);
      if (weight_decay_ != 0) slot.param.mul_(1.0 - lr * weight_decay_ * s.wd_factor);
      slot.param.sub_(slot.m, lr);
    }
  }

  double base_lr() const override { return lr_; }

  NamedTensors state_tensors() const override {
    NamedTensors out;
    for (const auto& slot : slots_) out.emplace_back(slot.name + ".m", slot.m);
    return out;
  }

 private:
  struct Slot {
    std::string name;
    at::Tensor param, m;
    double lr_mult;
  };
  double lr_, beta_, weight_decay_;
  std::vector<Slot> slots_;
};

OptionSchema schema() {
  return OptionSchema{}
      .number("lr", 1e-2, "base learning rate", 0.0)
      .number("beta", 0.9, "momentum of the gradient", 0.0, 1.0)
      .number("weight_decay", 0.0, "decoupled weight decay", 0.0);
}

std::unique_ptr<Optimizer> make(const Json& o, std::vector<Param>& params, const Parametrisation& param) {
  return std::make_unique<Optim>(o, params, param);
}

}  // namespace

ORRERY_PLUGIN(optimizer, "@NAME@", "0.1.0", "@NAME@: momentum SGD with decoupled weight decay (a scaffold)", schema, make)
