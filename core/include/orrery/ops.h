#pragma once
// Building blocks shared by architectures and heads. Every multiplier comes from the active
// parametrisation at construction, so a block reads like the paper and holds no SP/u-muP branch.
#include <ATen/core/Tensor.h>

#include "orrery/param.h"

namespace orrery {

// y = multiplier * (x W^T + b), W: (fan_out, fan_in).
struct Linear {
  at::Tensor weight, bias;  // bias undefined when absent
  double multiplier = 1.0;
  Linear() = default;
  Linear(ParamFactory& f, const std::string& name, int64_t fan_in, int64_t fan_out, Role role,
         bool with_bias, int depth = -1);
  at::Tensor operator()(const at::Tensor& x) const;
};

// x / sqrt(mean(x^2) + eps) over the last dimension, without a gain (Toto 2.0's default).
at::Tensor rms_norm(const at::Tensor& x, double eps);

// a * branch + b * skip, with (a, b) from Parametrisation::residual_weights.
struct Residual {
  double branch = 1.0, skip = 1.0;
  Residual() = default;
  Residual(const Parametrisation& p, int index, int count);
  at::Tensor operator()(const at::Tensor& h, const at::Tensor& skip_x) const;
};

// Residual MLP: out = residual(linear2(act(linear1(x))), skip_proj(x)). Toto 2.0 uses it as the
// patch input projection (64 -> 4d -> d) and as the output projection (d -> 4d -> outputs).
struct ResidualMLP {
  Linear linear1, linear2, skip_proj;
  double act_scale = 1.0;
  Residual residual;
  ResidualMLP() = default;
  ResidualMLP(ParamFactory& f, const std::string& name, int64_t in, int64_t hidden, int64_t out,
              Role in_role, Role out_role);
  at::Tensor operator()(const at::Tensor& x) const;
};

}  // namespace orrery
