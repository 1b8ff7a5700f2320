// @NAME@: a head plugin, a Gaussian forecast of each step of the next patch. From the hidden
// state h_n of patch n, for each step j of patch n + 1 (values in the model's normalised space):
//
//   (mu_j, s_j) = proj(h_n)                     (a residual MLP, d -> 4d -> 2P)
//   sigma_j     = softplus(s_j) + 1e-3
//   loss        = mean over observed steps of  log sigma_j + (y_j - mu_j)^2 / (2 sigma_j^2)
//   q_level     = mu_j + sigma_j * sqrt(2) * erfinv(2 level - 1)
//
// Edit the distribution; keep the shapes: forward gives (B, V, N, P, 2), quantiles (Q, B, V, N, P).
#include <ATen/ATen.h>

#include <cmath>

#include "orrery/ops.h"
#include "orrery/plugin.h"

namespace {
using namespace orrery;

class GaussianHead final : public Head {
 public:
  GaussianHead(const Json& o, HeadContext& ctx) : patch_(ctx.patch_size), min_sigma_(o["min_sigma"]) {
    auto scope = ctx.params.scope("output_head");
    proj_ = ResidualMLP(ctx.params, "proj", ctx.d_model, 4 * ctx.d_model, 2 * patch_, Role::hidden, Role::readout);
  }

  at::Tensor forward(const at::Tensor& hidden, const ForwardContext& ctx) override {
    at::Tensor out = proj_(hidden, ctx);  // (B, V, N, 2P)
    auto sizes = out.sizes().vec();
    sizes.back() = patch_;
    sizes.push_back(2);
    return out.reshape(sizes);  // (B, V, N, P, 2): mu, raw scale
  }

  at::Tensor loss(const at::Tensor& out, const at::Tensor& target, const at::Tensor& weight) override {
    const at::Tensor mu = out.select(-1, 0), sigma = this->sigma(out);
    const at::Tensor nll = sigma.log() + (target - mu).pow(2) / (2 * sigma.pow(2));
    return (nll * weight).sum() / weight.sum().clamp_min(1.0);
  }

  at::Tensor quantiles(const at::Tensor& out, const std::vector<double>& levels) override {
    const at::Tensor mu = out.select(-1, 0), sigma = this->sigma(out);
    std::vector<at::Tensor> qs;
    for (double level : levels) {
      const double z = std::sqrt(2.0) * at::erfinv(at::scalar_tensor(2 * level - 1, at::kDouble)).item<double>();
      qs.push_back(mu + sigma * z);
    }
    return at::stack(qs);  // (Q, B, V, N, P)
  }

  std::vector<double> default_levels() const override { return nine_levels(); }

 private:
  at::Tensor sigma(const at::Tensor& out) const { return at::softplus(out.select(-1, 1)) + min_sigma_; }
  int64_t patch_;
  double min_sigma_;
  ResidualMLP proj_;
};

OptionSchema schema() {
  return OptionSchema{}.number("min_sigma", 1e-3, "the smallest standard deviation, in normalised units", 1e-9);
}

std::unique_ptr<Head> make(const Json& o, HeadContext& ctx) { return std::make_unique<GaussianHead>(o, ctx); }

}  // namespace

ORRERY_PLUGIN(head, "@NAME@", "0.1.0", "@NAME@: a Gaussian forecast of each step, trained by its likelihood (a scaffold)",
              schema, make)
