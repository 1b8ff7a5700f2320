// SGD with momentum, as torch.optim.SGD (coupled L2 weight decay, added to the gradient):
//   d = g + wd*p
//   b <- d on the first step, else b <- momentum*b + (1 - dampening)*d
//   d = d + momentum*b if nesterov else b
//   p -= lr * d
// The per-parameter learning rate is base_lr * schedule factor * the parametrisation's
// SGD-family multiplier; the weight-decay schedule factor multiplies wd.
#include <ATen/ATen.h>

#include "orrery/error.h"
#include "orrery/plugin.h"

namespace {

class Sgd final : public orrery::Optimizer {
 public:
  Sgd(const orrery::Json& o, std::vector<orrery::Param>& params,
      const orrery::Parametrisation& param)
      : lr_(o["lr"]), momentum_(o["momentum"]), dampening_(o["dampening"]),
        weight_decay_(o["weight_decay"]), nesterov_(o["nesterov"]) {
    if (nesterov_ && (momentum_ <= 0 || dampening_ != 0))
      throw orrery::Error("sgd: nesterov needs momentum > 0 and dampening = 0");
    for (auto& p : params)
      slots_.push_back({p.info.name, p.tensor, at::zeros_like(p.tensor),
                        param.lr_multiplier(p.info, orrery::OptimizerFamily::sgd_like)});
  }

  void step(const orrery::StepScalars& sc) override {
    at::NoGradGuard no_grad;
    const double momentum = sc.momentum >= 0 ? sc.momentum : momentum_;
    const double wd = weight_decay_ * sc.wd_factor;
    for (auto& s : slots_) {
      const at::Tensor& g = s.param.grad();
      if (!g.defined()) continue;
      const double lr = lr_ * sc.lr_factor * s.lr_mult;
      at::Tensor d = wd != 0 ? g.add(s.param, wd) : g;  // a new tensor: .grad() stays as it was
      if (momentum != 0) {
        if (!s.started) s.buf.copy_(d), s.started = true;  // torch: the first buffer is the gradient
        else s.buf.mul_(momentum).add_(d, 1.0 - dampening_);
        d = nesterov_ ? d.add(s.buf, momentum) : s.buf;
      }
      s.param.sub_(d, lr);
    }
  }

  orrery::NamedTensors state_tensors() const override {
    orrery::NamedTensors out;
    for (const auto& s : slots_) out.emplace_back(s.name + ".buf", s.buf);
    return out;
  }
  orrery::Json counters() const override {
    orrery::Json started = orrery::Json::array();
    for (const auto& s : slots_) started.push_back(s.started);
    return {{"started", started}};
  }
  void restore_counters(const orrery::Json& c) override {
    const orrery::Json& started = c.at("started");
    if (started.size() != slots_.size()) throw orrery::Error("sgd: the saved state has " + std::to_string(started.size()) +
                                                             " momentum flags for " + std::to_string(slots_.size()) + " parameters");
    for (size_t i = 0; i < slots_.size(); ++i) slots_[i].started = started[i];
  }

  double base_lr() const override { return lr_; }

 private:
  struct Slot {
    std::string name;
    at::Tensor param, buf;  // buf: momentum buffer, the gradient itself on its first step
    double lr_mult;
    bool started = false;
  };
  double lr_, momentum_, dampening_, weight_decay_;
  bool nesterov_;
  std::vector<Slot> slots_;
};

orrery::OptionSchema schema() {
  return orrery::OptionSchema{}
      .number("lr", 1e-2, "base learning rate", 0.0)
      .number("momentum", 0.9, "momentum (0 = plain SGD)", 0.0, 1.0)
      .number("dampening", 0.0, "dampening of the momentum (torch.optim.SGD)", 0.0, 1.0)
      .boolean("nesterov", false, "Nesterov momentum (needs momentum > 0, dampening 0)")
      .number("weight_decay", 0.0, "L2 penalty added to the gradient (coupled, not decoupled)",
              0.0);
}

std::unique_ptr<orrery::Optimizer> make(const orrery::Json& o, std::vector<orrery::Param>& params,
                                        const orrery::Parametrisation& param) {
  return std::make_unique<Sgd>(o, params, param);
}

}  // namespace

ORRERY_PLUGIN(optimizer, "sgd", "1.0.0",
              "SGD with momentum, Nesterov and coupled L2 weight decay (torch.optim.SGD)", schema,
              make)
