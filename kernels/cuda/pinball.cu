// CUDA pinball loss (see pinball.h). Forward: per-block partial sums of w_i rho_ij / q and of
// w_i in double, then one block adds the partials in a fixed order (deterministic) and divides.
// Backward: the same weight sum, then one thread per (point, level).
#include "orrery/kernels/pinball.h"

#include "common/elementwise.h"
#include "cuda/common.cuh"

namespace orrery::kernels {
namespace {

using cuda::kMaxBlocks;
using cuda::kThreads;

// Workspace: kMaxBlocks loss partials, kMaxBlocks weight partials (double), then the float
// denominator max(sum w, 1) that the backward reads.
struct Workspace {
  double* loss_parts;
  double* weight_parts;
  float* denominator;
  explicit Workspace(void* base)
      : loss_parts(static_cast<double*>(base)), weight_parts(loss_parts + kMaxBlocks),
        denominator(reinterpret_cast<float*>(weight_parts + kMaxBlocks)) {}
};

__global__ void partial_sums(const float* out, const float* target, const float* weight,
                             const float* tau, int64_t n, int64_t q, bool with_loss,
                             double* loss_parts, double* weight_parts) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  double loss = 0, wsum = 0;
  if (with_loss) {
    // One element per (point, level): consecutive threads read consecutive predictions.
    for (int64_t e = first; e < n * q; e += stride) {
      const int64_t i = e / q, j = e - i * q;
      loss += static_cast<double>(weight[i]) * detail::pinball(target[i], out[e], tau[j]) / static_cast<double>(q);
    }
  }
  for (int64_t i = first; i < n; i += stride) wsum += weight[i];
  loss = cuda::block_sum(loss);
  wsum = cuda::block_sum(wsum);
  if (threadIdx.x == 0) {
    loss_parts[blockIdx.x] = loss;
    weight_parts[blockIdx.x] = wsum;
  }
}

// One block: add the `parts` partials, store max(sum w, 1) and, if asked, the loss.
__global__ void finish(const double* loss_parts, const double* weight_parts, int parts,
                       float* denominator, float* loss) {
  double l = 0, w = 0;
  for (int b = threadIdx.x; b < parts; b += blockDim.x) l += loss_parts[b], w += weight_parts[b];
  l = cuda::block_sum(l);
  w = cuda::block_sum(w);
  if (threadIdx.x == 0) {
    const float d = fmaxf(static_cast<float>(w), 1.0f);  // weight.sum().clamp_min(1.0)
    *denominator = d;
    if (loss) *loss = static_cast<float>(l / d);
  }
}

__global__ void gradient(const float* out, const float* target, const float* weight, const float* tau,
                         int64_t n, int64_t q, const float* grad_loss, const float* denominator,
                         float* grad_out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const float g_over_d = *grad_loss / *denominator;
  const float qf = static_cast<float>(q);
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n * q; e += stride) {
    const int64_t i = e / q, j = e - i * q;
    const float gp = g_over_d * weight[i] / qf;  // autograd's order, as the CPU reference
    grad_out[e] = detail::pinball_grad(target[i], out[e], tau[j], gp);
  }
}

// The sums both directions start with; returns nothing, leaves the denominator in `ws`.
void reduce(const float* out, const float* target, const float* weight, const float* tau, int64_t n,
            int64_t q, float* loss, const Workspace& ws, cudaStream_t stream) {
  const int blocks = cuda::blocks_for(loss ? n * q : n);
  partial_sums<<<blocks, kThreads, 0, stream>>>(out, target, weight, tau, n, q, loss != nullptr,
                                                ws.loss_parts, ws.weight_parts);
  cuda::check_launch("pinball partial_sums");
  finish<<<1, kThreads, 0, stream>>>(ws.loss_parts, ws.weight_parts, blocks, ws.denominator, loss);
  cuda::check_launch("pinball finish");
}

}  // namespace

size_t pinball_cuda_workspace_bytes() { return 2 * kMaxBlocks * sizeof(double) + 256; }

void pinball_forward_cuda(const float* out, const float* target, const float* weight, const float* tau,
                          int64_t n, int64_t q, float* loss, void* workspace, cudaStream_t stream) {
  reduce(out, target, weight, tau, n, q, loss, Workspace(workspace), stream);
}

void pinball_backward_cuda(const float* out, const float* target, const float* weight,
                           const float* tau, int64_t n, int64_t q, const float* grad_loss,
                           float* grad_out, void* workspace, cudaStream_t stream) {
  const Workspace ws(workspace);
  reduce(out, target, weight, tau, n, q, nullptr, ws, stream);
  gradient<<<cuda::blocks_for(n * q), kThreads, 0, stream>>>(out, target, weight, tau, n, q,
                                                             grad_loss, ws.denominator, grad_out);
  cuda::check_launch("pinball gradient");
}

}  // namespace orrery::kernels
