// CUDA Polar Express over a batch of same-shape matrices (see polar_express.h). The matrix
// products are cuBLAS strided-batched SGEMMs; the normalisation and the element-wise
// combinations of each step are the kernels below.
//
// cuBLAS is column-major: a row-major rows x cols matrix M is, to it, the cols x rows matrix
// M^T with leading dimension cols. Each product below is written for those transposed views.
#include "orrery/kernels/polar_express.h"

#include <cublas_v2.h>

#include <climits>

#include "cuda/common.cuh"

namespace orrery::kernels {
namespace {

using cuda::kThreads;

constexpr int kNormChunks = 32;     // blocks summing each matrix's squares: one warp adds them up
constexpr int kMaxGridY = 65535;    // CUDA's limit on gridDim.y; larger batches loop

// parts[b * kNormChunks + chunk] = the chunk's share of sum(G_b^2), in double.
__global__ void sum_squares(const float* in, int64_t count, int64_t batch, double* parts) {
  for (int64_t b = blockIdx.y; b < batch; b += gridDim.y) {
    const float* g = in + b * count;
    double acc = 0;
    for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < count;
         e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
      acc += static_cast<double>(g[e]) * g[e];
    }
    acc = cuda::block_sum(acc);
    if (threadIdx.x == 0) parts[b * kNormChunks + blockIdx.x] = acc;
  }
}

// X_b = G_b / (1.02 ||G_b|| + 1e-6), in float as orthogonalise.cpp's expression on float tensors.
__global__ void normalise(const float* in, float* X, int64_t count, int64_t batch, const double* parts) {
  __shared__ float denom;
  for (int64_t b = blockIdx.y; b < batch; b += gridDim.y) {
    if (threadIdx.x == 0) {
      double sumsq = 0;
      for (int c = 0; c < kNormChunks; ++c) sumsq += parts[b * kNormChunks + c];  // fixed order
      denom = static_cast<float>(sqrt(sumsq)) * 1.02f + 1e-6f;
    }
    __syncthreads();
    for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < count;
         e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
      X[b * count + e] = in[b * count + e] / denom;
    }
    __syncthreads();  // every thread has read denom before the next matrix overwrites it
  }
}

// x <- alpha x + beta y: addmm's beta*input + alpha*product, for b*A + c*A^2 and a*X + (...)X.
__global__ void combine(float* x, float alpha, const float* y, float beta, int64_t count) {
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < count;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    x[e] = alpha * x[e] + beta * y[e];
  }
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("orrery kernels: ") + what + ": " + cublasGetStatusString(s));
}

// C = op(A) op(B) for each of `batch` column-major problems (alpha 1, beta 0).
void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
          const float* A, int lda, long long stride_a, const float* B, int ldb, long long stride_b,
          float* C, int ldc, long long stride_c, int batch) {
  const float one = 1.0f, zero = 0.0f;
  check(cublasSgemmStridedBatched(h, ta, tb, m, n, k, &one, A, lda, stride_a, B, ldb, stride_b,
                                  &zero, C, ldc, stride_c, batch),
        "polar express cublasSgemmStridedBatched");
}

void launch_combine(float* x, double alpha, const float* y, double beta, int64_t count,
                    cudaStream_t stream) {
  combine<<<cuda::blocks_for(count), kThreads, 0, stream>>>(x, static_cast<float>(alpha), y,
                                                           static_cast<float>(beta), count);
  cuda::check_launch("polar express combine");
}

struct Workspace {
  float *X, *A, *AA;
  double* norm_parts;
  Workspace(void* base, int64_t batch, int64_t rows, int64_t cols) {
    const int64_t s = rows > cols ? cols : rows;
    char* p = static_cast<char*>(base);
    X = reinterpret_cast<float*>(p);
    p += cuda::aligned(sizeof(float) * batch * rows * cols);
    A = reinterpret_cast<float*>(p);
    p += cuda::aligned(sizeof(float) * batch * s * s);
    AA = reinterpret_cast<float*>(p);
    p += cuda::aligned(sizeof(float) * batch * s * s);
    norm_parts = reinterpret_cast<double*>(p);
  }
};

}  // namespace

size_t polar_express_cuda_workspace_bytes(int64_t batch, int64_t rows, int64_t cols) {
  const int64_t s = rows > cols ? cols : rows;
  return cuda::aligned(sizeof(float) * batch * rows * cols) + 2 * cuda::aligned(sizeof(float) * batch * s * s) +
         cuda::aligned(sizeof(double) * batch * kNormChunks);
}

void polar_express_cuda(const float* in, float* out, int64_t batch, int64_t rows, int64_t cols,
                        void* workspace, cublasHandle_t handle, cudaStream_t stream) {
  if (batch <= 0 || rows <= 0 || cols <= 0) return;
  if (rows > INT_MAX || cols > INT_MAX || batch > INT_MAX)
    throw std::runtime_error("orrery kernels: polar_express_cuda: a size exceeds cuBLAS's int range");
  const Workspace ws(workspace, batch, rows, cols);
  const int64_t count = rows * cols;
  const dim3 norm_grid(kNormChunks, static_cast<unsigned>(batch < kMaxGridY ? batch : kMaxGridY));
  sum_squares<<<norm_grid, kThreads, 0, stream>>>(in, count, batch, ws.norm_parts);
  cuda::check_launch("polar express sum_squares");
  normalise<<<norm_grid, kThreads, 0, stream>>>(in, ws.X, count, batch, ws.norm_parts);
  cuda::check_launch("polar express normalise");

  check(cublasSetStream(handle, stream), "cublasSetStream");
  check(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");  // alpha, beta
  const int r = static_cast<int>(rows), c = static_cast<int>(cols), b = static_cast<int>(batch);
  const bool tall = rows > cols;
  const int s = tall ? c : r;
  const long long sx = count, sa = static_cast<long long>(s) * s;
  // Five steps ping-pong between the scratch X and `out`; the fifth lands in `out`. `in` is not
  // read after the normalisation, so `out` may be `in`.
  int k = 0;
  for (const auto& [a, bc, cc] : polar_express_coefficients()) {
    const float* src = k % 2 == 0 ? ws.X : out;
    float* dst = k % 2 == 0 ? out : ws.X;
    // The column-major view of src is S = X^T (c x r, leading dimension c).
    if (tall)  // A = X^T X = S S^T (c x c)
      gemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, c, c, r, src, c, sx, src, c, sx, ws.A, c, sa, b);
    else       // A = X X^T = S^T S (r x r)
      gemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, r, r, c, src, c, sx, src, c, sx, ws.A, r, sa, b);
    // AA = A A: the column-major view of A is A^T, and A^T A^T = (A A)^T is AA's row-major view.
    gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, ws.A, s, sa, ws.A, s, sa, ws.AA, s, sa, b);
    launch_combine(ws.AA, cc, ws.A, bc, batch * sa, stream);  // AA <- c A^2 + b A =: B
    if (tall)  // Y = X B, so Y^T = B^T X^T: (view of B) times S
      gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, c, r, c, ws.AA, c, sa, src, c, sx, dst, c, sx, b);
    else       // Y = B X, so Y^T = X^T B^T: S times (view of B)
      gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, c, r, r, src, c, sx, ws.AA, r, sa, dst, c, sx, b);
    launch_combine(dst, 1.0, src, a, batch * count, stream);  // Y <- Y + a X
    ++k;
  }
}

}  // namespace orrery::kernels
