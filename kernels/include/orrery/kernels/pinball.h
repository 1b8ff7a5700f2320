#pragma once
// Pinball (quantile) loss of the quantile head (plugins/head/quantile), forward and backward,
// fused over the Q quantile levels. For n points i with target y_i and weight w_i, predictions
// out[i*q + j] at levels tau_j (point-major, level fastest: the head's (..., P, Q) layout):
//   u_ij = y_i - out_ij,   rho_ij = max(tau_j u_ij, (tau_j - 1) u_ij)
//   loss = sum_i w_i (1/q) sum_j rho_ij  /  max(sum_i w_i, 1)
// and d loss / d out_ij = -g w_i / (q max(sum_i w_i, 1)) * s_ij with s_ij = tau_j where
// u_ij > 0, tau_j - 1 where u_ij < 0 and tau_j - 1/2 where u_ij = 0 (at::maximum's gradient
// splits a tie evenly), g being the gradient of whatever consumed the loss (1 for the loss itself).
// A weight of 0 masks a point out; every pointer holds float32.
#include <cstddef>
#include <cstdint>

#include "orrery/kernels/cuda_types.h"

namespace orrery::kernels {

// Host memory. Sums run in double; `loss` is one float.
void pinball_forward_cpu(const float* out, const float* target, const float* weight, const float* tau,
                         int64_t n, int64_t q, float* loss);
// `grad_loss` points at one float (g above); `grad_out` receives n*q floats.
void pinball_backward_cpu(const float* out, const float* target, const float* weight, const float* tau,
                          int64_t n, int64_t q, const float* grad_loss, float* grad_out);

// Device memory, enqueued on `stream`, no host synchronisation: the scalars `loss` and
// `grad_loss` live on the device too. Both need a device scratch of pinball_cuda_workspace_bytes()
// (it does not depend on n); its sums are reduced in a fixed order, so results are deterministic.
// Errors (a bad launch) throw std::runtime_error.
size_t pinball_cuda_workspace_bytes();
void pinball_forward_cuda(const float* out, const float* target, const float* weight, const float* tau,
                          int64_t n, int64_t q, float* loss, void* workspace, cudaStream_t stream);
void pinball_backward_cuda(const float* out, const float* target, const float* weight,
                           const float* tau, int64_t n, int64_t q, const float* grad_loss,
                           float* grad_out, void* workspace, cudaStream_t stream);

}  // namespace orrery::kernels
