// Student-T mixture head (Toto 1.0, kept as an alternative to the quantile head). Each step of
// the next patch gets its own embedding (unembed: d -> P*d), and four linear maps of it give a
// mixture of k Student-T distributions in the model's normalised space:
//   df = 2 + softplus(.), loc, scale = softplus(.), weights = softmax(.)
// (each clamped at the float epsilon, as the reference). Loss, as Toto 1.0 pre-trained:
//   0.575 * NLL(y) + 0.425 * log1p(0.5 * ((mean - y) / 0.1)^2)
// where the robust term (Barron's loss with alpha = 0, delta = 0.1) acts on the mixture mean.
// Quantiles come from numeric inversion of the mixture CDF.
#include <ATen/ATen.h>

#include <limits>

#include "orrery/ops.h"
#include "orrery/plugin.h"
#include "student_t.h"

namespace {
using namespace orrery;

class StudentTMixtureHead final : public Head {
 public:
  StudentTMixtureHead(const Json& o, HeadContext& ctx)
      : k_(o["components"]), patch_(ctx.patch_size), d_(ctx.d_model),
        nll_weight_(o["nll_weight"]), delta_(o["robust_delta"]) {
    ParamFactory& f = ctx.params;
    auto scope = f.scope("output_head");  // as Toto 1.0 names its output head
    unembed_ = Linear(f, "unembed", d_, d_ * patch_, Role::hidden, true);
    df_ = Linear(f, "df", d_, k_, Role::readout, true);
    loc_ = Linear(f, "loc", d_, k_, Role::readout, true);
    scale_ = Linear(f, "scale", d_, k_, Role::readout, true);
    weights_ = Linear(f, "mixture_weights", d_, k_, Role::readout, true);
  }

  // (B, V, N, d) -> (B, V, N, P, 4, k): df, loc, scale and log weight of every component.
  at::Tensor forward(const at::Tensor& hidden, const ForwardContext& ctx) override {
    const double eps = std::numeric_limits<float>::epsilon();
    at::Tensor e = unembed_(hidden, ctx).unflatten(-1, {patch_, d_});
    at::Tensor df = 2 + at::softplus(df_(e, ctx)).clamp_min(eps);
    at::Tensor scale = at::softplus(scale_(e, ctx)).clamp_min(eps);
    at::Tensor log_w = at::log_softmax(weights_(e, ctx), -1);
    return at::stack({df, loc_(e, ctx), scale, log_w}, -2);
  }

  at::Tensor loss(const at::Tensor& out, const at::Tensor& target, const at::Tensor& weight) override {
    student_t::Mixture m = mixture(out);
    at::Tensor nll = -m.log_pdf(target);
    at::Tensor robust = at::log1p(0.5 * ((m.mean() - target) / delta_).pow(2));
    at::Tensor per_point = nll_weight_ * nll + (1 - nll_weight_) * robust;
    return (per_point * weight).sum() / weight.sum().clamp_min(1.0);
  }

  at::Tensor quantiles(const at::Tensor& out, const std::vector<double>& levels) override {
    return mixture(out).quantiles(levels);
  }

  std::vector<double> default_levels() const override { return nine_levels(); }

 private:
  static student_t::Mixture mixture(const at::Tensor& out) {
    return {out.select(-2, 0), out.select(-2, 1), out.select(-2, 2), out.select(-2, 3)};
  }

  int64_t k_, patch_, d_;
  double nll_weight_, delta_;
  Linear unembed_, df_, loc_, scale_, weights_;
};

OptionSchema schema() {
  return OptionSchema{}
      .integer("components", 24, "Student-T components per step (Toto 1.0: 24)", 1, 1024)
      .number("nll_weight", 0.575, "weight of the NLL; the robust term on the mean gets the rest", 0.0, 1.0)
      .number("robust_delta", 0.1, "scale delta of the robust term log1p(0.5 ((mean - y)/delta)^2)", 1e-9);
}

std::unique_ptr<Head> make(const Json& o, HeadContext& ctx) {
  return std::make_unique<StudentTMixtureHead>(o, ctx);
}

}  // namespace

ORRERY_PLUGIN(head, "studentt_mixture", "0.1.0",
              "Toto 1.0's head: a mixture of k Student-T per step (df = 2 + softplus), loss "
              "0.575 NLL + 0.425 robust term on the mixture mean, quantiles by CDF inversion",
              schema, make)
