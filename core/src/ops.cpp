#include "orrery/ops.h"

#include <ATen/ATen.h>

#include <cmath>

namespace orrery {

at::Tensor scale_grad(const at::Tensor& x, double s) {
  if (s == 1.0 || !x.requires_grad() || !at::GradMode::is_enabled()) return x;
  // A view carries the hook, so hooks never pile up on a parameter across steps.
  at::Tensor y = x.view_as(x);
  y.register_hook([s](const at::Tensor& g) { return g * s; });
  return y;
}

namespace {
int64_t g_batch_multiplier = 1;
thread_local ActivationProbe* g_probe = nullptr;
}  // namespace

int64_t global_batch_multiplier() { return g_batch_multiplier; }
GlobalBatchScope::GlobalBatchScope(int64_t m) : saved_(g_batch_multiplier) { g_batch_multiplier = m; }
GlobalBatchScope::~GlobalBatchScope() { g_batch_multiplier = saved_; }

ActivationProbe::ActivationProbe() : outer_(g_probe) { g_probe = this; }
ActivationProbe::~ActivationProbe() { g_probe = outer_; }

void ActivationProbe::record(const std::string& name, const at::Tensor& x) {
  if (!g_probe || name.empty()) return;
  const double rms = x.detach().to(at::kDouble).pow(2).mean().sqrt().item<double>();
  g_probe->values_.emplace_back(name, rms);
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

at::Tensor Linear::operator()(const at::Tensor& x_in) const {
  at::Tensor x = x_in, w = weight, b = bias;
  if (param_ && param_->scales_backward() && at::GradMode::is_enabled()) {
    // Autograd gives every gradient the forward multiplier m; replace it by the
    // parametrisation's scales at the global batch.
    const int64_t rows = x.numel() / x.size(-1) * global_batch_multiplier();
    const auto g = param_->linear_grads(info_, rows);
    x = scale_grad(x, g.input / multiplier);
    w = scale_grad(w, g.weight / multiplier);
    if (b.defined()) b = scale_grad(b, g.weight / multiplier);
  }
  at::Tensor y = at::linear(x, w, b);
  if (multiplier != 1.0) y = y * multiplier;
  ActivationProbe::record(name, y);
  return y;
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
                                const std::function<at::Tensor(const at::Tensor&)>& f) const {
  at::Tensor out;
  if (split_ && branch != 0.0) {
    // residual_split: d/dx gets a through the branch; residual_add: a * h forward only.
    at::Tensor h = f(scale_grad(x, branch));
    out = scale_grad(h, 1.0 / branch) * branch + x * skip;
  } else {
    out = add(f(x), x);
  }
  ActivationProbe::record(name, out);
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

at::Tensor ResidualMLP::operator()(const at::Tensor& x) const {
  at::Tensor h = at::silu(linear1(x));
  if (act_scale != 1.0) h = h * act_scale;
  at::Tensor out = residual.add(linear2(h), skip_proj(x));
  ActivationProbe::record(residual.name, out);
  return out;
}

}  // namespace orrery
