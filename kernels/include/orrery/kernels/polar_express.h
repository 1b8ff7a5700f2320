#pragma once
// Polar Express orthogonalisation (core/src/train/orthogonalise.cpp's polar_express, float32) over a
// batch of same-shape matrices. Each row-major rows x cols matrix G becomes
//   X_0 = G / (1.02 ||G||_F + 1e-6)
//   X_{k+1} = a_k X_k + (b_k A + c_k A^2) X_k,  A = X_k X_k^T   (rows <= cols)
//   X_{k+1} = a_k X_k + X_k (b_k A + c_k A^2),  A = X_k^T X_k   (rows > cols)
// for the 5 (a_k, b_k, c_k) of polar_express_coefficients(), so X_5 ~ U V^T of G = U S V^T.
#include <array>
#include <cstddef>
#include <cstdint>

#include "orrery/kernels/cuda_types.h"

namespace orrery::kernels {

// The 5 Polar Express tuples (a, b, c) of Amsel et al. with safety factor 1.02, the same
// numbers as core/src/train/orthogonalise.cpp's kPolarExpress (the parity test against it would
// catch a difference).
const std::array<std::array<double, 3>, 5>& polar_express_coefficients();

// Host memory: `in` and `out` hold batch * rows * cols floats (they may be the same buffer).
// Matrix products accumulate in double.
void polar_express_cpu(const float* in, float* out, int64_t batch, int64_t rows, int64_t cols);

// Device memory on `stream`. The products are cuBLAS strided-batched SGEMMs on `handle`, whose
// stream this call sets to `stream` (and its pointer mode to host); leave the handle's math mode at its default (no TF32) for
// float32 results. `in` and `out` may be the same buffer. The device scratch `workspace` holds
// polar_express_cuda_workspace_bytes(batch, rows, cols) bytes. Errors throw std::runtime_error.
size_t polar_express_cuda_workspace_bytes(int64_t batch, int64_t rows, int64_t cols);
void polar_express_cuda(const float* in, float* out, int64_t batch, int64_t rows, int64_t cols,
                        void* workspace, cublasHandle_t handle, cudaStream_t stream);

}  // namespace orrery::kernels
