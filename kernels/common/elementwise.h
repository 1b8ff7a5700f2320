#pragma once
// The per-element formulas of the kernels, compiled for host and device from one source. Each
// mirrors the ATen expression it replaces, in float, operation by operation.
#include "common/host_device.h"

namespace orrery::kernels::detail {

// ATen's lerp (ATen/native/Lerp.h): the form that is exact at the nearer end point.
inline ORRERY_HD float lerp(float a, float b, float w) {
  return (w < 0.5f && w > -0.5f) ? a + w * (b - a) : b - (b - a) * (1.0f - w);
}

// The quantile head's rho = at::maximum(tau * u, (tau - 1) * u), u = y - out.
inline ORRERY_HD float pinball(float y, float out, float tau) {
  const float u = y - out;
  const float a = tau * u, b = (tau - 1.0f) * u;
  return a > b ? a : b;
}

// d rho / d out times the incoming gradient `gp` (already w_i / (q D) g), as autograd forms it:
// at::maximum passes the gradient to the larger operand and half to each on a tie, then the
// products by tau and tau - 1 and the sign of u = y - out.
inline ORRERY_HD float pinball_grad(float y, float out, float tau, float gp) {
  const float u = y - out;
  const float tm1 = tau - 1.0f;
  const float a = tau * u, b = tm1 * u;
  float du;
  if (a > b) du = gp * tau;
  else if (a < b) du = gp * tm1;
  else du = (gp / 2) * tau + (gp / 2) * tm1;
  return -du;
}

}  // namespace orrery::kernels::detail
