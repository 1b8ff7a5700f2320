// Unit-scaled maximal update parametrisation (u-muP; Blake et al. 2024), as Toto 2.0 uses it
// through dd-unit-scaling. Every weight starts N(0, 1) (biases 0, gains 1) and every op carries
// an explicit scale, so activations are near unit RMS at any width and a learning rate tuned on
// a narrow proxy transfers to wide models:
//   hidden/input linear   y = (x W^T + b) / sqrt(fan_in)
//   readout linear        y = (x W^T + b) / fan_in
//   unit-scaled SiLU      1.76678 * silu(x)            (patch MLPs only)
//   attention             softmax(q k^T / d_head)      (muP's 1/d, not 1/sqrt(d))
//   residual branch i     tau/sqrt(1+tau^2) * f(x) + 1/sqrt(1+tau^2) * x, tau from the rule below
// Backward scales (scale_bwd, dd-unit-scaling's world-size-aware form), with B the rows of the
// global batch = local rows x world size x accumulation steps:
//   hidden/input linear   dL/dx x fan_in^-1/2 (constrained to the forward scale), dL/dW x B^-1/2
//   readout linear        dL/dx x fan_out^-1/2 (unconstrained),                  dL/dW x B^-1/2
//   gains                 dL/dg x sqrt(D / global elements)
//   residual branches     the branch weight moves from the branch's output to its input's gradient
//
// Depth (L layers in the stack, L_base = base_depth the proxy's, m_L = L / L_base, alpha =
// depth_alpha the residual exponent; alpha = 1/2 is u-muP's depth-muP, alpha = 1 CompleteP,
// Dey et al. 2025):
//   residual branch       multiplier a_i m_L^-alpha / sqrt(L_base) against a unit embedding:
//                         the tau rule below with L_eff = L m_L^(2 alpha - 1) in place of L
//   in-stack rates        x L^-1/2 m_L^(alpha - 1/2) = L_base^-1/2 m_L^(alpha - 1), matrices,
//                         gains and biases alike (alpha = 1/2: L^-1/2 whatever L_base; alpha = 1:
//                         the constant L_base^-1/2, each layer's update shrinking with its branch)
// At alpha = 1/2 every value is the same double as before the option existed; at L = L_base both
// alphas give the same model and updates. The default is alpha = 1 (it was 1/2 before 0.3.0: a
// model saved then rebuilds with 1/2, see OptionSchema::default_was).
//
// Learning-rate multipliers follow unit_scaling's Adam rule: weights fan_in^-1/2 times the
// in-stack depth factor d above. Muon-family optimizers (whose update O has spectral norm ~1
// before their own shape scale s = sqrt(fan_out/fan_in) or Keller's) get one of two rules, with
// the same d: the update's size is set by the rate, not by the gradient's scale, as Adam's is,
// so each layer's contribution through its branch multiplier must shrink the same way:
//   spectral  d / multiplier (sqrt(fan_in); fan_in for a readout): ||dW_eff|| = lr d s, muP's
//             spectral condition on the effective weight W_eff = multiplier * W (default:
//             NorMuon's, Muon's and Dion2's optimum then stays put from width 64 to 512)
//   toto2     d, DataDog's rule as Toto 2.0 trains: ||dW_eff|| = lr d s / sqrt(fan_in), which
//             shrinks with width under the 1/sqrt(fan_in) multiplier (the optimum rises about
//             half an octave per doubling)
// (dW_eff: the effective weight's update; the spectral norm of the weight the op multiplies by.)
// Adam's epsilon: CompleteP scales it by m_L^-alpha inside the stack because there the chain
// rule shrinks every gradient by the branch multiplier. u-muP's backward scales undo exactly
// that (the branch's output gets the stream's gradient, unscaled), so with backward_scales the
// in-stack gradients keep their size at any depth and epsilon keeps its value; without them it
// is eps m_L^-alpha inside the stack and eps outside, as CompleteP's split has it.
// Weight decay is AdamW's, coupled to each parameter's rate (p <- p (1 - lr_p wd)): in-stack
// matrices decay by lr wd L^-1/2 m_L^(alpha - 1/2) fan_in^-1/2 per step, CompleteP's depth coupling
// (lr wd m_L^(alpha-1)); gains and biases do not decay (adamw's decay_vectors = false).
// CompleteP also makes the decay width-free (wd x m_N for hidden matrices); u-muP has no base
// width and keeps the decay proportional to the rate, as before.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "orrery/plugin.h"

namespace {
using namespace orrery;

// logint(a, lo, hi) = exp(a ln hi + (1 - a) ln lo): unit_scaling's log-interpolation.
double logint(double a, double lo, double hi) { return std::exp(a * std::log(hi) + (1 - a) * std::log(lo)); }

class UnitScaledMuP final : public Parametrisation {
 public:
  explicit UnitScaledMuP(const Json& o)
      : residual_mult_(o["residual_mult"]), residual_attn_ratio_(o["residual_attn_ratio"]),
        alpha_(o["depth_alpha"]), base_depth_(o["base_depth"]), backward_(o["backward_scales"]),
        spectral_muon_(o["muon_rule"] == "spectral") {}

  std::string name() const override { return "umup"; }

  at::Tensor init(const ParamInfo& info, at::Generator& gen) const override {
    if (info.role == Role::bias) return at::zeros(info.shape);
    if (info.role == Role::gain) return at::ones(info.shape);
    return at::empty(info.shape).normal_(0.0, 1.0, gen);
  }

  double linear_multiplier(const ParamInfo& w) const override {
    const double fan_in = static_cast<double>(w.fan_in);
    return w.role == Role::readout ? 1.0 / fan_in : 1.0 / std::sqrt(fan_in);
  }

  double lr_multiplier(const ParamInfo& info, OptimizerFamily family) const override {
    const double depth = depth_factor(info);
    const bool matrix = info.role == Role::input || info.role == Role::hidden;
    if (family == OptimizerFamily::muon_like) {
      // Only matrices reach a Muon-family optimizer; a vector's rate is the depth factor alone.
      const bool weight = matrix || info.role == Role::readout;
      return spectral_muon_ && weight ? depth / linear_multiplier(info) : depth;
    }
    return matrix ? depth / std::sqrt(double(info.fan_in)) : depth;
  }

  double eps_multiplier(const ParamInfo& info) const override {
    if (backward_ || info.stack_depth <= 0) return 1.0;
    return std::pow(depth_mult(info.stack_depth), -alpha_);
  }

  // Branch i of 2L (attention = 2l, MLP = 2l + 1):
  //   a_mlp = m sqrt(2/(1 + r^2)),  a_attn = r a_mlp,
  //   tau_i = a_i / sqrt(L_eff + n_attn a_attn^2 + n_mlp a_mlp^2)  over the branches before i,
  //   L_eff = L m_L^(2 alpha - 1)  (L itself at alpha = 1/2 or at the base depth).
  // Outside the stack (index -1) tau = 1: an even mix, as in Toto 2.0's patch MLPs.
  std::pair<double, double> residual_weights(int index, int count) const override {
    double tau = 1.0;
    if (index >= 0) {
      const double r = residual_attn_ratio_, m = residual_mult_;
      const double a_mlp = m * std::sqrt(2.0 / (1.0 + r * r)), a_attn = r * a_mlp;
      const int n_attn = (index + 1) / 2, n_mlp = index / 2;
      const double a = index % 2 == 0 ? a_attn : a_mlp;
      const int layers = count / 2;
      const double l_eff = layers * std::pow(depth_mult(layers), 2 * alpha_ - 1);
      tau = a / std::sqrt(l_eff + n_attn * a_attn * a_attn + n_mlp * a_mlp * a_mlp);
    }
    const double norm = std::sqrt(1.0 + tau * tau);
    return {tau / norm, 1.0 / norm};
  }

  double activation_scale(const std::string& nonlinearity) const override {
    if (nonlinearity == "silu") return logint(0.8, 2.0, std::sqrt(2.0 / (1.0 - 1.0 / M_PI)));
    return 1.0;
  }

  double attention_scale(int64_t d_head) const override { return 1.0 / static_cast<double>(d_head); }

  bool scales_backward() const override { return backward_; }

  LinearGrads linear_grads(const ParamInfo& w, int64_t global_rows) const override {
    const double weight = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(global_rows, 1)));
    // A readout maps to a few outputs: its gradient into x is summed over fan_out of them.
    if (w.role == Role::readout) return {1.0 / std::sqrt(static_cast<double>(w.fan_out)), weight};
    return {linear_multiplier(w), weight};
  }

  double gain_grad_scale(const ParamInfo& g, int64_t global_numel) const override {
    const double d = static_cast<double>(g.shape.empty() ? 1 : g.shape.back());
    return std::sqrt(d / static_cast<double>(std::max<int64_t>(global_numel, 1)));
  }

 private:
  // m_L = L / L_base.
  double depth_mult(int layers) const { return layers / base_depth_; }
  // The in-stack rate factor L^-1/2 m_L^(alpha - 1/2): written so that alpha = 1/2 (pow(x, 0) = 1)
  // and L = L_base (pow(1, y) = 1) give 1/sqrt(L) exactly. Outside the stack: 1.
  double depth_factor(const ParamInfo& info) const {
    if (info.stack_depth <= 0) return 1.0;
    return 1.0 / std::sqrt(double(info.stack_depth)) * std::pow(depth_mult(info.stack_depth), alpha_ - 0.5);
  }
  double residual_mult_, residual_attn_ratio_, alpha_, base_depth_;
  bool backward_;
  bool spectral_muon_;
};

OptionSchema schema() {
  return OptionSchema{}
      .number("residual_mult", 0.75,
              "overall residual branch strength (Toto 2.0: 0.75; unit_scaling's default: 1)", 0.0)
      .number("residual_attn_ratio", std::sqrt(128.0 / std::log(128.0)),
              "attention:MLP branch ratio; Toto 2.0 uses sqrt(S/ln S) with S = 128 trained "
              "patches (5.13622) to balance its unscaled attention; 1 for unit-scaled attention",
              0.0)
      .number("depth_alpha", 1.0,
              "residual exponent: branch multipliers m_L^-alpha and in-stack rates L_base^-1/2 "
              "m_L^(alpha-1), m_L = layers / base_depth; 1 = CompleteP (Dey et al. 2025; the "
              "measured default, docs/results/depth_transfer), 0.5 = u-muP's depth-muP (Toto 2.0, the "
              "released checkpoints; the default before 0.3.0)",
              0.5, 1.0)
      .default_was(0.5)
      .number("base_depth", 2,
              "layers of the proxy whose rates are being transferred; at this depth every "
              "depth_alpha gives the same model (no effect at depth_alpha = 0.5)",
              1.0)
      .boolean("backward_scales", true,
               "unit-scale gradients (scale_bwd); false keeps autograd's chain rule for ablations")
      .string("muon_rule", "spectral",
              "Muon-family learning rates: spectral = the depth factor / the forward multiplier, so "
              "the effective weight's update has spectral norm lr * the depth factor * the "
              "optimizer's shape scale at any width (the rate transfers across widths; docs/training.md); "
              "toto2 = the depth factor only (DataDog's rule, as Toto 2.0 trains: the rate must "
              "grow with width)",
              {"toto2", "spectral"});
}

std::unique_ptr<Parametrisation> make(const Json& o) { return std::make_unique<UnitScaledMuP>(o); }

}  // namespace

ORRERY_PLUGIN(parametrisation, "umup", "0.3.0",
              "Unit-scaled muP (Toto 2.0): N(0,1) init, 1/sqrt(fan_in) and readout 1/fan_in "
              "multipliers, unit-scaled SiLU, 1/d_head attention, tau residual rule with a depth "
              "exponent (depth-muP or CompleteP)",
              schema, make)
