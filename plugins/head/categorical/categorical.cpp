// Categorical head: a distribution over `classes` ids (a tokenizer's vocabulary) for each step of
// the next patch, scored by cross-entropy. The unembedding is untied from any input embedding
// (nanochat's lm_head), and its logits are soft-capped, c tanh(z / c) with c = 15, so that none
// runs away. Targets are the data's own values (token ids, predicts_raw_values); a step whose
// weight is 0 (unobserved) is ignored, as cross_entropy's ignore_index ignores it.
#include <ATen/ATen.h>

#include <limits>

#include "orrery/class_ids.h"
#include "orrery/error.h"
#include "orrery/ops.h"
#include "orrery/plugin.h"

namespace {
using namespace orrery;

class CategoricalHead final : public Head {
 public:
  CategoricalHead(const Json& o, HeadContext& ctx)
      : classes_(o["classes"]), patch_(ctx.patch_size), softcap_(o["softcap"]) {
    auto scope = ctx.params.scope("lm_head");
    unembed_ = Linear(ctx.params, "unembed", ctx.d_model, patch_ * classes_, Role::readout, false);
  }

  bool predicts_raw_values() const override { return true; }

  // Logits (B, V, N, P, classes) in float32.
  at::Tensor forward(const at::Tensor& hidden, const ForwardContext& ctx) override {
    at::Tensor z = unembed_(hidden, ctx).to(at::kFloat);
    if (softcap_ > 0) z = softcap_ * at::tanh(z / softcap_);
    return z.unflatten(-1, {patch_, classes_});
  }

  // Mean cross-entropy in nats over the steps with weight, weighted.
  at::Tensor loss(const at::Tensor& out, const at::Tensor& target, const at::Tensor& weight) override {
    const at::Tensor scored = weight > 0;
    if (!are_class_ids(target, classes_, scored))
      throw Error("head plugin 'categorical': targets must be class ids 0 .. " + std::to_string(classes_ - 1) +
                  " (classes), and the data hold other values: use a text source whose vocabulary has as many ids");
    const at::Tensor ids = at::where(scored, target, at::zeros({}, target.options())).to(at::kLong);
    const at::Tensor nll = at::logsumexp(out, -1) - out.gather(-1, ids.unsqueeze(-1)).squeeze(-1);
    return (nll * weight).sum() / weight.sum().clamp_min(1.0);
  }

  at::Tensor quantiles(const at::Tensor&, const std::vector<double>&) override {
    throw Error("head plugin 'categorical' predicts classes, not quantiles of values");
  }

  std::vector<double> default_levels() const override { return nine_levels(); }

  // A class per position: the most likely at temperature 0, else drawn from softmax(z / T) over
  // the top_k most likely (all when top_k is 0).
  at::Tensor sample(const at::Tensor& out, double temperature, int64_t top_k, at::Generator& gen) override {
    const at::Tensor z = out.to(at::kCPU, at::kFloat);
    const auto positions = z.sizes().slice(0, z.dim() - 1);
    if (!z.isfinite().all().item<bool>())
      throw Error("the logits to draw from are not finite (the weights have diverged)");
    if (temperature <= 0) return z.argmax(-1).to(at::kFloat).to(out.device());
    at::Tensor scaled = z / temperature;
    if (top_k > 0 && top_k < classes_) {
      const at::Tensor kth = std::get<0>(scaled.topk(top_k, -1)).narrow(-1, top_k - 1, 1);
      scaled = at::where(scaled < kth, at::full({}, -std::numeric_limits<float>::infinity(), scaled.options()), scaled);
    }
    const at::Tensor p = at::softmax(scaled, -1).reshape({-1, classes_});
    return at::multinomial(p, 1, false, gen).view(positions).to(at::kFloat).to(out.device());
  }

 private:
  int64_t classes_, patch_;
  double softcap_;
  Linear unembed_;
};

OptionSchema schema() {
  return OptionSchema{}
      .integer("classes", 4096, "ids to predict: the tokenizer's vocabulary (the architecture's vocab_size)", 2,
               1 << 24)
      .number("softcap", 15.0, "logits soft-capped to (-softcap, softcap) by softcap tanh(z / softcap); 0 = none", 0.0);
}

std::unique_ptr<Head> make(const Json& o, HeadContext& ctx) { return std::make_unique<CategoricalHead>(o, ctx); }

}  // namespace

ORRERY_PLUGIN(head, "categorical", "0.1.0",
              "Categorical head over token ids: untied unembedding, logits soft-capped at 15, cross-entropy (nats); "
              "predicts the data's own values, so the host leaves them unscaled",
              schema, make)
