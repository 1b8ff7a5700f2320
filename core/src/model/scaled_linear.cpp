// y = m (x W^T + b) with the gradients g_x dy W and g_w dy^T x (and g_w sum dy for b): a linear
// map whose forward multiplier and backward scales ride on the matrix products' alpha and beta.
// Through autograd the same map costs a pass over the output forward and backward for m, and
// one over each input gradient for the scales (u-muP's scale_bwd); measured on toto2-4m those
// passes were about a tenth of a CPU training step.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/custom_function.h>

#include "orrery/ops.h"

namespace orrery {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// alpha * (a @ b), with no pass beyond the product.
at::Tensor scaled_mm(const at::Tensor& a, const at::Tensor& b, double alpha) {
  if (alpha == 1.0) return at::mm(a, b);
  return at::addmm(at::zeros({}, a.options()), a, b, /*beta=*/0.0, alpha);
}

// m (x W^T + b) over the last dimension of x, in `dtype`.
at::Tensor scaled_forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, double m) {
  const at::Tensor x2 = x.reshape({-1, x.size(-1)});
  at::Tensor y = b.defined() ? at::addmm(b, x2, w.t(), m, m) : scaled_mm(x2, w.t(), m);
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = w.size(0);
  return y.view(shape);
}

struct ScaledLinearFunction : public torch::autograd::Function<ScaledLinearFunction> {
  // An absent bias is an empty optional: autograd takes no undefined tensor as an input.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w,
                            const std::optional<at::Tensor>& bias, double m, double gx, double gw) {
    const at::Tensor b = bias.value_or(at::Tensor());
    // Under autocast the products run in its dtype; backward, which autocast does not reach,
    // then works on the same casts and hands each gradient back in its input's dtype.
    const c10::DeviceType device = x.device().type();
    const at::ScalarType dtype =
        at::autocast::is_autocast_enabled(device) ? at::autocast::get_autocast_dtype(device) : w.scalar_type();
    const at::Tensor xc = x.to(dtype), wc = w.to(dtype), bc = b.defined() ? b.to(dtype) : b;
    ctx->save_for_backward({xc, wc});
    ctx->saved_data["gx"] = gx, ctx->saved_data["gw"] = gw;
    ctx->saved_data["x_dtype"] = x.scalar_type(), ctx->saved_data["w_dtype"] = w.scalar_type();
    ctx->saved_data["bias"] = b.defined();
    return scaled_forward(xc, wc, bc, m);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& xc = saved[0];
    const at::Tensor& wc = saved[1];
    const double gx = ctx->saved_data["gx"].toDouble(), gw = ctx->saved_data["gw"].toDouble();
    const at::Tensor dy = grads[0].reshape({-1, wc.size(0)}).to(wc.scalar_type());
    at::Tensor dx, dw, db;
    if (ctx->needs_input_grad(0))
      dx = scaled_mm(dy, wc, gx).view(xc.sizes()).to(ctx->saved_data["x_dtype"].toScalarType());
    const at::ScalarType w_dtype = ctx->saved_data["w_dtype"].toScalarType();
    if (ctx->needs_input_grad(1)) dw = scaled_mm(dy.t(), xc.reshape({-1, xc.size(-1)}), gw).to(w_dtype);
    if (ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2)) db = (dy.sum(0, false, at::kFloat) * gw).to(w_dtype);
    return {dx, dw, db, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor scaled_linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, double m, double gx,
                         double gw) {
  const bool records = at::GradMode::is_enabled() &&
                       (x.requires_grad() || w.requires_grad() || (b.defined() && b.requires_grad()));
  if (records) return ScaledLinearFunction::apply(x, w, b.defined() ? std::optional<at::Tensor>(b) : std::nullopt, m, gx, gw);
  if (m == 1.0) return at::linear(x, w, b);
  // Without a gradient to record, autocast's own casts apply as they would to at::linear.
  return scaled_forward(x, w, b, m);
}

}  // namespace orrery
