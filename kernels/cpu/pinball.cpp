// CPU reference of the fused pinball loss (see pinball.h): plain loops, sums in double.
#include "orrery/kernels/pinball.h"

#include <algorithm>

#include "common/elementwise.h"

namespace orrery::kernels {
namespace {

// max(sum_i w_i, 1): the head's weight.sum().clamp_min(1.0), rounded to float as ATen's sum is.
float weight_denominator(const float* weight, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += weight[i];
  return std::max(static_cast<float>(sum), 1.0f);
}

}  // namespace

void pinball_forward_cpu(const float* out, const float* target, const float* weight, const float* tau,
                         int64_t n, int64_t q, float* loss) {
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    double levels = 0;
    for (int64_t j = 0; j < q; ++j) levels += detail::pinball(target[i], out[i * q + j], tau[j]);
    total += weight[i] * (levels / static_cast<double>(q));
  }
  *loss = static_cast<float>(total / weight_denominator(weight, n));
}

void pinball_backward_cpu(const float* out, const float* target, const float* weight, const float* tau,
                          int64_t n, int64_t q, const float* grad_loss, float* grad_out) {
  // Autograd's order: (g / D) through the sum, times w_i through the product, / q through the mean.
  const float g_over_d = *grad_loss / weight_denominator(weight, n);
  const float qf = static_cast<float>(q);
  for (int64_t i = 0; i < n; ++i) {
    const float gp = g_over_d * weight[i] / qf;
    for (int64_t j = 0; j < q; ++j)
      grad_out[i * q + j] = detail::pinball_grad(target[i], out[i * q + j], tau[j], gp);
  }
}

}  // namespace orrery::kernels
