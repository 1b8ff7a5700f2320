// NorMuon (Li et al., arXiv 2510.05491; official zichongli5/NorMuon:normuon.py, `normuon_update`):
// Muon whose orthogonalised update gets a per-neuron (row) second-moment normalisation that keeps
// the update's Frobenius norm:
//   m <- lerp(m, g, 1 - beta);  u = lerp(g, m, beta) if nesterov else m
//   O = PE(u) (or NS5);  n0 = ||O||_F
//   v <- lerp(v, mean(O*O, dim=-1), 1 - beta2);  O /= sqrt(v) + eps;  O *= n0 / ||O||_F
//   O *= scale(rows, cols);  cautious weight decay of p by lr*wd;  p -= lr * O
// Defaults follow DataDog's dd_unit_scaling wrapper: Polar Express, scale sqrt(fan_out/fan_in)
// ("spectral_norm"), cautious weight decay (mask = (O * p) >= 0).
#include <ATen/ATen.h>

#include "orrery/orthogonalise.h"
#include "orrery/plugin.h"

namespace {

class NorMuon final : public orrery::Optimizer {
 public:
  NorMuon(const orrery::Json& o, std::vector<orrery::Param>& params,
          const orrery::Parametrisation& param)
      : lr_(o["lr"]), momentum_(o["momentum"]), beta2_(o["beta2"]), eps_(o["eps"]),
        weight_decay_(o["weight_decay"]), nesterov_(o["nesterov"]), cautious_(o["cautious_wd"]),
        which_(orrery::parse_orthogonaliser(o["orthogonaliser"].get<std::string>())) {
    const bool longer = o["normalise_axis"].get<std::string>() == "longer";
    for (auto& w : orrery::muon_matrices(o, params, param, "normuon")) {
      // nanochat's "longer" axis normalises columns of wide matrices, whose rows O ~ U V^T
      // already has orthonormal; the official code always normalises rows.
      const int64_t dim = longer && w.rows < w.cols ? -2 : -1;
      const auto v_shape = dim == -1 ? std::vector<int64_t>{w.rows, 1} : std::vector<int64_t>{1, w.cols};
      slots_.push_back({w, at::zeros_like(w.param), at::zeros(v_shape, w.param.options()), dim});
    }
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
      at::Tensor O = orrery::orthogonalise(u, which_, s.dtype).to(s.v.scalar_type());
      at::Tensor O2 = O.view({s.rows, s.cols});  // >2-D: normalise the (out, -1) matrix in place
      orrery::normuon_normalise_(O2, s.v, beta2_, eps_, s.dim);
      O.mul_(s.scale);
      const double decay = lr * weight_decay_ * sc.wd_factor;
      if (cautious_) orrery::cautious_weight_decay_(s.param, O, decay);
      else if (decay != 0) s.param.mul_(1.0 - decay);
      s.param.sub_(O, lr);
    }
  }

  double base_lr() const override { return lr_; }

  orrery::NamedTensors state_tensors() const override {
    orrery::NamedTensors out;
    for (const auto& s : slots_) out.emplace_back(s.name + ".m", s.m), out.emplace_back(s.name + ".v", s.v);
    return out;
  }

 private:
  struct Slot : orrery::MuonMatrix {
    at::Tensor m, v;  // momentum, and the neurons' running mean square
    int64_t dim;      // the axis v normalises along
  };
  double lr_, momentum_, beta2_, eps_, weight_decay_;
  bool nesterov_, cautious_;
  orrery::Orthogonaliser which_;
  std::vector<Slot> slots_;
};

orrery::OptionSchema schema() {
  orrery::OptionSchema s;
  s.number("lr", 0.02, "base learning rate", 0.0)
      .number("momentum", 0.95, "EMA momentum", 0.0, 1.0)
      .number("beta2", 0.95, "decay of the per-row second moment of the orthogonalised update",
              0.0, 1.0)
      .boolean("nesterov", true, "Nesterov look-ahead: orthogonalise lerp(g, m, momentum)")
      .number("eps", 1e-10, "epsilon of the normalisation", 0.0)
      .number("weight_decay", 0.0, "weight decay (multiplied by the learning rate)", 0.0)
      .boolean("cautious_wd", true, "decay only where the update also moves the weight to zero")
      .string("normalise_axis", "row",
              "row: per output neuron (official); longer: columns of wide matrices (nanochat)",
              {"row", "longer"});
  return orrery::orthogonaliser_options(s, "polar_express", "spectral");
}

std::unique_ptr<orrery::Optimizer> make(const orrery::Json& o, std::vector<orrery::Param>& params,
                                        const orrery::Parametrisation& param) {
  return std::make_unique<NorMuon>(o, params, param);
}

}  // namespace

ORRERY_PLUGIN(optimizer, "normuon", "1.0.0",
              "NorMuon: Muon with per-neuron normalisation of the orthogonalised update", schema,
              make)
