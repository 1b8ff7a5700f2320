#pragma once
// One NorMuon step on one rows x cols float32 parameter (plugins/optim/normuon with
// normalise_axis = "row", orthogonaliser = "polar_express", ortho_dtype = "float32"):
//   m <- lerp(m, g, 1 - momentum);  u = nesterov ? lerp(g, m, momentum) : m
//   O = PolarExpress(u);  n0 = ||O||_F
//   v_r <- lerp(v_r, mean_c O_rc^2, 1 - beta2);  O_rc /= sqrt(v_r) + eps;  O *= n0 / (||O||_F + eps)
//   O *= scale
//   p <- p - decay * p * [O p >= 0]   (cautious; otherwise p <- p * (1 - decay) when decay != 0)
//   p <- p - lr * O
// lerp(a, b, w) = a + w (b - a) for |w| < 0.5 and b - (b - a)(1 - w) otherwise, as ATen's.
// Scalars arrive as doubles and are rounded to float where ATen rounds them.
#include <cstddef>
#include <cstdint>

#include "orrery/kernels/cuda_types.h"

namespace orrery::kernels {

struct NormuonStep {
  double lr = 0.02;       // effective rate: base * schedule factor * parametrisation multiplier
  double momentum = 0.95;
  double beta2 = 0.95;
  double eps = 1e-10;
  double decay = 0.0;     // the whole decay factor: lr * weight_decay * schedule factor
  double scale = 1.0;     // shape scale of the update (orrery::shape_scale)
  bool nesterov = true;
  bool cautious = true;
};

// Host memory. p, g, m: rows*cols floats; v: rows floats (the per-row second moment).
void normuon_step_cpu(float* p, const float* g, float* m, float* v, int64_t rows, int64_t cols,
                      const NormuonStep& s);
// The part after the orthogonaliser, on a given orthogonalised update O (rows*cols, read only):
// normalisation, scale, weight decay and update of p and v.
void normuon_update_cpu(float* p, float* v, const float* O, int64_t rows, int64_t cols,
                        const NormuonStep& s);

// Device memory on `stream` (Polar Express through cuBLAS on `handle`, see polar_express.h).
// The device scratch holds normuon_cuda_workspace_bytes(rows, cols) bytes. Errors throw
// std::runtime_error.
size_t normuon_cuda_workspace_bytes(int64_t rows, int64_t cols);
void normuon_step_cuda(float* p, const float* g, float* m, float* v, int64_t rows, int64_t cols,
                       const NormuonStep& s, void* workspace, cublasHandle_t handle,
                       cudaStream_t stream);
// Its parts, for callers that orthogonalise otherwise: u = (nesterov) momentum of g (m updated),
// and the update from O (the scratch: normuon_update_cuda_workspace_bytes(rows)).
void normuon_momentum_cuda(const float* g, float* m, float* u, int64_t count, const NormuonStep& s,
                           cudaStream_t stream);
size_t normuon_update_cuda_workspace_bytes(int64_t rows);
void normuon_update_cuda(float* p, float* v, const float* O, int64_t rows, int64_t cols,
                         const NormuonStep& s, void* workspace, cudaStream_t stream);

}  // namespace orrery::kernels
