// Dion2 (Ahn, Amsel, Langford, arXiv 2512.16928; microsoft/dion:dion/dion2.py,
// `dion2_pre_orthogonalize` / `dion2_post_orthogonalize`): orthogonalise only a fraction of the
// momentum's rows or columns each step, with error feedback on the rest:
//   M <- M + G
//   along the shorter dimension (rows if rows <= cols), idx = the k = ceil(fraction * size)
//   slices of M with the largest L1 norm;  S = M[idx];  M[idx] <- ef_decay * M[idx]
//   O = PE(S);  p *= 1 - lr*wd;  p[idx] -= lr * scale(rows, cols) * O
// where scale uses the whole matrix's shape (sqrt(fan_out/fan_in) by default) and weight decay the
// unscaled learning rate. ef_decay plays the role of momentum: StepScalars::momentum overrides it.
#include <ATen/ATen.h>

#include <cmath>

#include "orrery/error.h"
#include "orrery/orthogonalise.h"
#include "orrery/plugin.h"

namespace {

class Dion2 final : public orrery::Optimizer {
 public:
  Dion2(const orrery::Json& o, std::vector<orrery::Param>& params,
        const orrery::Parametrisation& param)
      : lr_(o["lr"]), fraction_(o["fraction"]), ef_decay_(o["ef_decay"]),
        weight_decay_(o["weight_decay"]),
        which_(orrery::parse_orthogonaliser(o["orthogonaliser"].get<std::string>())) {
    if (fraction_ <= 0) throw orrery::Error("dion2: fraction must be in (0, 1]");
    for (auto& w : orrery::muon_matrices(o, params, param, "dion2")) {
      const int64_t dim = w.rows <= w.cols ? 0 : 1;  // select among the fewer slices
      const int64_t size = dim == 0 ? w.rows : w.cols;
      const auto k = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(fraction_ * size)));
      slots_.push_back({w, at::zeros({w.rows, w.cols}, w.param.options()), dim, std::min(k, size)});
    }
  }

  void step(const orrery::StepScalars& sc) override {
    at::NoGradGuard no_grad;
    const double ef_decay = sc.momentum >= 0 ? sc.momentum : ef_decay_;
    for (auto& s : slots_) {
      const at::Tensor& g = s.param.grad();
      if (!g.defined()) continue;
      const double lr = lr_ * sc.lr_factor * s.lr_mult;
      s.M.add_(g.reshape({s.rows, s.cols}));
      const at::Tensor idx = select_slices(s);
      const at::Tensor S = s.M.index_select(s.dim, idx);
      s.M.index_copy_(s.dim, idx, S * ef_decay);  // error feedback: the rest keeps accumulating
      const at::Tensor O = orrery::orthogonalise(S, which_, s.dtype);
      if (weight_decay_ != 0) s.param.mul_(1.0 - lr * weight_decay_ * sc.wd_factor);
      at::Tensor P = s.param.view({s.rows, s.cols});
      P.index_add_(s.dim, idx, O.to(P.scalar_type()), -lr * s.scale);
    }
  }

  double base_lr() const override { return lr_; }

  orrery::NamedTensors state_tensors() const override {
    orrery::NamedTensors out;
    for (const auto& s : slots_) out.emplace_back(s.name + ".M", s.M);
    return out;
  }

 private:
  struct Slot : orrery::MuonMatrix {
    at::Tensor M;    // the (rows, cols) momentum of the flattened parameter
    int64_t dim, k;  // the axis slices are chosen along, and how many
  };

  // Indices of the k slices along s.dim with the largest L1 norm of the momentum.
  static at::Tensor select_slices(const Slot& s) {
    const at::Tensor l1 = s.M.abs().sum(1 - s.dim);
    return std::get<1>(l1.topk(s.k));
  }

  double lr_, fraction_, ef_decay_, weight_decay_;
  orrery::Orthogonaliser which_;
  std::vector<Slot> slots_;
};

orrery::OptionSchema schema() {
  orrery::OptionSchema s;
  s.number("lr", 0.02, "base learning rate", 0.0)
      .number("fraction", 0.5, "fraction of rows or columns orthogonalised per step", 0.0, 1.0)
      .number("ef_decay", 0.95, "error-feedback decay of the selected momentum slices", 0.0, 1.0)
      .number("weight_decay", 0.01, "decoupled weight decay (multiplied by the learning rate)", 0.0);
  return orrery::orthogonaliser_options(s, "polar_express", "spectral");
}

std::unique_ptr<orrery::Optimizer> make(const orrery::Json& o, std::vector<orrery::Param>& params,
                                        const orrery::Parametrisation& param) {
  return std::make_unique<Dion2>(o, params, param);
}

}  // namespace

ORRERY_PLUGIN(optimizer, "dion2", "1.0.0",
              "Dion2: Muon on the top fraction of momentum rows or columns, with error feedback",
              schema, make)
