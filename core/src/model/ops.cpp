#include "orrery/ops.h"

#include <ATen/ATen.h>

#include <cmath>

#include "orrery/error.h"

namespace orrery {

at::Tensor scale_grad(const at::Tensor& x, double s) {
  if (s == 1.0 || !x.requires_grad() || !at::GradMode::is_enabled()) return x;
  // A view carries the hook, so hooks never pile up on a parameter across steps.
  at::Tensor y = x.view_as(x);
  y.register_hook([s](const at::Tensor& g) { return g * s; });
  return y;
}

void ActivationProbe::record(const std::string& name, const at::Tensor& x) {
  const at::Tensor v = x.detach().to(at::kDouble);
  ActivationRecord r;
  r.name = name;
  r.rms = v.pow(2).mean().sqrt().item<double>();
  if (since_) {
    const size_t i = records_.size();
    if (i >= since_->size() || (*since_)[i].name != name || !(*since_)[i].value.defined() ||
        !(*since_)[i].value.sizes().equals(v.sizes()))
      throw Error("activation " + std::to_string(i) + " ('" + name + "') has no counterpart in the earlier "
                  "measurement: measure the same model on the same batch, with keep = true the first time");
    r.change = (v - (*since_)[i].value.to(v.device())).pow(2).mean().sqrt().item<double>();
  }
  if (keep_) r.value = v.to(at::kFloat).cpu();
  records_.push_back(std::move(r));
}

Linear::Linear(ParamFactory& f, const std::string& name_, int64_t fan_in, int64_t fan_out,
               Role role, bool with_bias, int depth)
    : name(f.full_name(name_)), param_(&f.parametrisation()) {
  auto scope = f.scope(name_);
  weight = f.make("weight", role, {fan_out, fan_in}, fan_in, fan_out, depth);
  info_ = f.params().end()[-1].info;
  if (with_bias) bias = f.make("bias", Role::bias, {fan_out}, fan_in, fan_out, depth);
  multiplier = param_->linear_multiplier(info_);
}

at::Tensor Linear::operator()(const at::Tensor& x, const ForwardContext& ctx) const {
  // Autograd would give every gradient the forward multiplier m; a parametrisation that scales
  // the backward replaces it by its own scales at the global batch.
  double gx = multiplier, gw = multiplier;
  if (param_ && param_->scales_backward() && at::GradMode::is_enabled()) {
    const int64_t rows = x.numel() / x.size(-1) * ctx.batch_multiplier;
    const auto g = param_->linear_grads(info_, rows);
    gx = g.input, gw = g.weight;
  }
  at::Tensor y = multiplier == 1.0 && gx == 1.0 && gw == 1.0 ? at::linear(x, weight, bias)
                                                             : scaled_linear(x, weight, bias, multiplier, gx, gw);
  ctx.record(name, y);
  return y;
}

Gain::Gain(ParamFactory& f, const std::string& name, int64_t dim, int depth, ParamFactory::Init init)
    : param_(&f.parametrisation()) {
  weight = f.make(name, Role::gain, {dim}, dim, dim, depth, init);
  info_ = f.params().back().info;
}

at::Tensor Gain::applied_to(const at::Tensor& x, const ForwardContext& ctx) const {
  if (!param_ || !param_->scales_backward() || !at::GradMode::is_enabled()) return weight;
  return scale_grad(weight, param_->gain_grad_scale(info_, x.numel() * ctx.batch_multiplier));
}

at::Tensor rms_norm(const at::Tensor& x, double eps) {
  at::Tensor ms = x.to(at::kFloat).pow(2).mean(-1, /*keepdim=*/true);
  return x * at::rsqrt(ms + eps).to(x.scalar_type());
}

Residual::Residual(ParamFactory& f, const std::string& name_, int index, int count)
    : name(f.full_name(name_)), split_(f.parametrisation().scales_backward()) {
  std::tie(branch, skip) = f.parametrisation().residual_weights(index, count);
}

at::Tensor Residual::operator()(const at::Tensor& x,
                                const std::function<at::Tensor(const at::Tensor&)>& f,
                                const ForwardContext& ctx) const {
  at::Tensor out;
  if (split_ && branch != 0.0) {
    // residual_split: d/dx gets a through the branch; residual_add: a * h forward only.
    at::Tensor h = f(scale_grad(x, branch));
    out = scale_grad(h, 1.0 / branch) * branch + x * skip;
  } else {
    out = add(f(x), x);
  }
  ctx.record(name, out);
  return out;
}

at::Tensor Residual::add(const at::Tensor& h, const at::Tensor& skip_x) const {
  if (branch == 1.0 && skip == 1.0) return h + skip_x;
  return h * branch + skip_x * skip;
}

ResidualMLP::ResidualMLP(ParamFactory& f, const std::string& name, int64_t in, int64_t hidden,
                         int64_t out, Role in_role, Role out_role) {
  auto scope = f.scope(name);
  linear1 = Linear(f, "linear1", in, hidden, in_role, true);
  linear2 = Linear(f, "linear2", hidden, out, out_role, true);
  skip_proj = Linear(f, "skip_proj", in, out, out_role == Role::readout ? Role::readout : in_role, true);
  act_scale = f.parametrisation().activation_scale("silu");
  residual = Residual(f, "residual", -1, 0);
}

at::Tensor ResidualMLP::operator()(const at::Tensor& x, const ForwardContext& ctx) const {
  at::Tensor h = at::silu(linear1(x, ctx));
  if (act_scale != 1.0) h = h * act_scale;
  at::Tensor out = residual.add(linear2(h, ctx), skip_proj(x, ctx));
  ctx.record(residual.name, out);
  return out;
}

}  // namespace orrery
