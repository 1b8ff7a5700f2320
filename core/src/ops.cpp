#include "orrery/ops.h"

#include <ATen/ATen.h>

namespace orrery {

Linear::Linear(ParamFactory& f, const std::string& name, int64_t fan_in, int64_t fan_out,
               Role role, bool with_bias, int depth) {
  auto scope = f.scope(name);
  weight = f.make("weight", role, {fan_out, fan_in}, fan_in, fan_out, depth);
  if (with_bias) bias = f.make("bias", Role::bias, {fan_out}, fan_in, fan_out, depth);
  multiplier = f.parametrisation().linear_multiplier(f.params().end()[with_bias ? -2 : -1].info);
}

at::Tensor Linear::operator()(const at::Tensor& x) const {
  at::Tensor y = at::linear(x, weight, bias);
  return multiplier == 1.0 ? y : y * multiplier;
}

at::Tensor rms_norm(const at::Tensor& x, double eps) {
  at::Tensor ms = x.to(at::kFloat).pow(2).mean(-1, /*keepdim=*/true);
  return x * at::rsqrt(ms + eps).to(x.scalar_type());
}

Residual::Residual(const Parametrisation& p, int index, int count) {
  std::tie(branch, skip) = p.residual_weights(index, count);
}

at::Tensor Residual::operator()(const at::Tensor& h, const at::Tensor& skip_x) const {
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
  residual = Residual(f.parametrisation(), -1, 0);
}

at::Tensor ResidualMLP::operator()(const at::Tensor& x) const {
  at::Tensor h = at::silu(linear1(x));
  if (act_scale != 1.0) h = h * act_scale;
  return residual(linear2(h), skip_proj(x));
}

}  // namespace orrery
