#pragma once
// Building blocks shared by architectures and heads. Every multiplier and backward scale comes
// from the active parametrisation at construction, so a block reads like the paper and holds no
// SP/u-muP branch.
#include <ATen/core/Tensor.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "orrery/forward_context.h"
#include "orrery/param.h"

namespace orrery {

// Identity in the forward pass; the gradient is multiplied by s in the backward pass
// (u-muP's scale_bwd). Free when s == 1 or when no gradient is being recorded.
at::Tensor scale_grad(const at::Tensor& x, double s);

// m (x W^T + b) over the last dimension of x, whose gradients are gx dy W for x and gw dy^T x
// (gw sum dy for b): the multiplier and scales carried by the matrix products themselves
// (scaled_linear.cpp). b may be undefined.
at::Tensor scaled_linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, double m, double gx,
                         double gw);

// y = multiplier * (x W^T + b), W: (fan_out, fan_in), with the parametrisation's backward scales.
struct Linear {
  at::Tensor weight, bias;  // bias undefined when absent
  double multiplier = 1.0;
  std::string name;
  Linear() = default;
  Linear(ParamFactory& f, const std::string& name, int64_t fan_in, int64_t fan_out, Role role,
         bool with_bias, int depth = -1);
  at::Tensor operator()(const at::Tensor& x, const ForwardContext& ctx) const;
 private:
  const Parametrisation* param_ = nullptr;
  ParamInfo info_;
};

// A learned vector applied elementwise to activations (a norm weight, Toto's PerDimScale). Its
// gradient gets the parametrisation's batch-dependent scale for the activation it multiplies.
struct Gain {
  at::Tensor weight;  // (dim)
  Gain() = default;
  Gain(ParamFactory& f, const std::string& name, int64_t dim, int depth,
       ParamFactory::Init init = ParamFactory::Init::parametrised);
  // The weight as applied to `x` (broadcasting over its last dimension): the same values,
  // with the gradient scaled for x's size across the global batch.
  at::Tensor applied_to(const at::Tensor& x, const ForwardContext& ctx) const;
 private:
  const Parametrisation* param_ = nullptr;
  ParamInfo info_;
};

// x / sqrt(mean(x^2) + eps) over the last dimension, without a gain (Toto 2.0's default).
at::Tensor rms_norm(const at::Tensor& x, double eps);

// A residual branch x <- a * f(x) + b * x, with (a, b) from Parametrisation::residual_weights.
// Under backward scaling it is u-muP's residual_split/residual_add pair: the same forward, but
// the gradient into the branch's input carries the factor a instead of its output, so the
// gradients inside the branch stay unit-scaled.
struct Residual {
  double branch = 1.0, skip = 1.0;
  std::string name;
  Residual() = default;
  Residual(ParamFactory& f, const std::string& name, int index, int count);
  at::Tensor operator()(const at::Tensor& x, const std::function<at::Tensor(const at::Tensor&)>& f,
                        const ForwardContext& ctx) const;
  // a * h + b * skip_x for a branch whose input is not the skip (a residual MLP's projection).
  at::Tensor add(const at::Tensor& h, const at::Tensor& skip_x) const;
 private:
  bool split_ = false;
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
  at::Tensor operator()(const at::Tensor& x, const ForwardContext& ctx) const;
};

}  // namespace orrery
