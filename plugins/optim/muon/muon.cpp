// Muon (Jordan et al., KellerJordan/Muon:muon.py, `muon_update`): momentum, then an approximate
// orthogonalisation of the update direction, then a shape-dependent scale:
//   m <- lerp(m, g, 1 - beta);  u = lerp(g, m, beta) if nesterov else m   (EMA form)
//   O = NS5(u) (or Polar Express);  p *= 1 - lr*wd;  p -= lr * scale(rows, cols) * O
// with scale = max(1, rows/cols)^0.5 by default (rows = fan_out; >2-D tensors act as
// (size(0), -1) matrices). The per-parameter learning rate is base_lr * schedule factor * the
// parametrisation's Muon-family multiplier. Matrices only: vectors belong to AdamW.
#include <ATen/ATen.h>

#include "orrery/orthogonalise.h"
#include "orrery/plugin.h"

namespace {

class Muon final : public orrery::Optimizer {
 public:
  Muon(const orrery::Json& o, std::vector<orrery::Param>& params,
       const orrery::Parametrisation& param)
      : lr_(o["lr"]), momentum_(o["momentum"]), weight_decay_(o["weight_decay"]),
        nesterov_(o["nesterov"]),
        which_(orrery::parse_orthogonaliser(o["orthogonaliser"].get<std::string>())) {
    for (auto& w : orrery::muon_matrices(o, params, param, "muon")) slots_.push_back({w, at::zeros_like(w.param)});
  }

  void step(const orrery::StepScalars& sc) override {
    at::NoGradGuard no_grad;
    const double beta = sc.momentum >= 0 ? sc.momentum : momentum_;
    for (auto& s : slots_) {
      const at::Tensor& g = s.param.grad();
      if (!g.defined()) continue;
      const double lr = lr_ * sc.lr_factor * s.lr_mult;
      s.m.lerp_(g, 1.0 - beta);
      const at::Tensor u = nesterov_ ? g.lerp(s.m, beta) : s.m;
      const at::Tensor O = orrery::orthogonalise(u, which_, s.dtype);
      if (weight_decay_ != 0) s.param.mul_(1.0 - lr * weight_decay_ * sc.wd_factor);
      s.param.sub_(O, lr * s.scale);
    }
  }

  double base_lr() const override { return lr_; }

  orrery::NamedTensors state_tensors() const override {
    orrery::NamedTensors out;
    for (const auto& s : slots_) out.emplace_back(s.name + ".m", s.m);
    return out;
  }

 private:
  struct Slot : orrery::MuonMatrix {
    at::Tensor m;  // momentum
  };
  double lr_, momentum_, weight_decay_;
  bool nesterov_;
  orrery::Orthogonaliser which_;
  std::vector<Slot> slots_;
};

orrery::OptionSchema schema() {
  orrery::OptionSchema s;
  s.number("lr", 0.02, "base learning rate (in units of spectral norm per update)", 0.0)
      .number("momentum", 0.95, "EMA momentum", 0.0, 1.0)
      .boolean("nesterov", true, "Nesterov look-ahead: orthogonalise lerp(g, m, momentum)")
      .number("weight_decay", 0.0, "decoupled weight decay (multiplied by the learning rate)", 0.0);
  return orrery::orthogonaliser_options(s, "newton_schulz", "keller");
}

std::unique_ptr<orrery::Optimizer> make(const orrery::Json& o, std::vector<orrery::Param>& params,
                                        const orrery::Parametrisation& param) {
  return std::make_unique<Muon>(o, params, param);
}

}  // namespace

ORRERY_PLUGIN(optimizer, "muon", "1.0.0",
              "Muon: orthogonalised Nesterov momentum for matrices (Newton-Schulz or Polar Express)",
              schema, make)
