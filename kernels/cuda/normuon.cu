// CUDA NorMuon step (see normuon.h): momentum (element-wise), Polar Express (polar_express.cu),
// then the update in three launches: one block per row for the row statistics and v, one block
// for the two Frobenius norms, and one thread per element for normalisation, decay and update.
#include "orrery/kernels/normuon.h"

#include "common/elementwise.h"
#include "cuda/common.cuh"
#include "orrery/kernels/polar_express.h"

namespace orrery::kernels {
namespace {

using cuda::kThreads;

__global__ void momentum(const float* g, float* m, float* u, int64_t count, float w, float beta,
                         bool nesterov) {
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < count;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float mi = detail::lerp(m[e], g[e], w);
    m[e] = mi;
    u[e] = nesterov ? detail::lerp(g[e], mi, beta) : mi;
  }
}

// Per row r: ss_r = sum_c O_rc^2, v_r <- lerp(v_r, ss_r / cols, w2), d_r = sqrt(v_r) + eps, and
// ss_r / d_r^2, the row's share of the normalised update's squared norm.
__global__ void row_stats(const float* O, float* v, int64_t rows, int64_t cols, float w2, float eps,
                          float* d, double* row_ss, double* row_after) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    double ss = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float o = O[r * cols + c];
      ss += static_cast<double>(o) * o;
    }
    ss = cuda::block_sum(ss);
    if (threadIdx.x == 0) {
      const float vr = detail::lerp(v[r], static_cast<float>(ss / static_cast<double>(cols)), w2);
      const float dr = sqrtf(vr) + eps;
      v[r] = vr;
      d[r] = dr;
      row_ss[r] = ss;
      row_after[r] = ss / (static_cast<double>(dr) * dr);
    }
  }
}

// One block: keep = ||O|| / (||O'|| + eps), the factor that restores the update's norm.
__global__ void norm_ratio(const double* row_ss, const double* row_after, int64_t rows, float eps,
                           float* keep) {
  double before = 0, after = 0;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) before += row_ss[r], after += row_after[r];
  before = cuda::block_sum(before);
  after = cuda::block_sum(after);
  if (threadIdx.x == 0) *keep = static_cast<float>(sqrt(before)) / (static_cast<float>(sqrt(after)) + eps);
}

__global__ void apply(float* p, const float* O, const float* d, const float* keep, int64_t rows,
                      int64_t cols, float scale, float lr, float decay, float keep_decay,
                      bool cautious, bool plain_decay) {
  const float k = *keep;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < rows * cols;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float o = O[e] / d[e / cols] * k * scale;
    float x = p[e];
    if (cautious) {
      if (o * x >= 0) x = x - decay * x;  // decay where the update also pulls x towards zero
    } else if (plain_decay) {
      x = x * keep_decay;
    }
    p[e] = x - lr * o;
  }
}

struct UpdateWorkspace {
  double *row_ss, *row_after;
  float *d, *keep;
  UpdateWorkspace(void* base, int64_t rows) {
    char* p = static_cast<char*>(base);
    row_ss = reinterpret_cast<double*>(p);
    p += cuda::aligned(sizeof(double) * rows);
    row_after = reinterpret_cast<double*>(p);
    p += cuda::aligned(sizeof(double) * rows);
    d = reinterpret_cast<float*>(p);
    p += cuda::aligned(sizeof(float) * rows);
    keep = reinterpret_cast<float*>(p);
  }
};

}  // namespace

void normuon_momentum_cuda(const float* g, float* m, float* u, int64_t count, const NormuonStep& s,
                           cudaStream_t stream) {
  momentum<<<cuda::blocks_for(count), kThreads, 0, stream>>>(
      g, m, u, count, static_cast<float>(1.0 - s.momentum), static_cast<float>(s.momentum), s.nesterov);
  cuda::check_launch("normuon momentum");
}

size_t normuon_update_cuda_workspace_bytes(int64_t rows) {
  return 2 * cuda::aligned(sizeof(double) * rows) + cuda::aligned(sizeof(float) * rows) + cuda::aligned(sizeof(float));
}

void normuon_update_cuda(float* p, float* v, const float* O, int64_t rows, int64_t cols,
                         const NormuonStep& s, void* workspace, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const UpdateWorkspace ws(workspace, rows);
  const float eps = static_cast<float>(s.eps);
  const int row_blocks = static_cast<int>(rows < 65535 ? rows : 65535);
  row_stats<<<row_blocks, kThreads, 0, stream>>>(O, v, rows, cols, static_cast<float>(1.0 - s.beta2),
                                                 eps, ws.d, ws.row_ss, ws.row_after);
  cuda::check_launch("normuon row_stats");
  norm_ratio<<<1, kThreads, 0, stream>>>(ws.row_ss, ws.row_after, rows, eps, ws.keep);
  cuda::check_launch("normuon norm_ratio");
  apply<<<cuda::blocks_for(rows * cols), kThreads, 0, stream>>>(
      p, O, ws.d, ws.keep, rows, cols, static_cast<float>(s.scale), static_cast<float>(s.lr),
      static_cast<float>(s.decay), static_cast<float>(1.0 - s.decay), s.cautious, s.decay != 0);
  cuda::check_launch("normuon apply");
}

size_t normuon_cuda_workspace_bytes(int64_t rows, int64_t cols) {
  return cuda::aligned(sizeof(float) * rows * cols) + cuda::aligned(normuon_update_cuda_workspace_bytes(rows)) +
         polar_express_cuda_workspace_bytes(1, rows, cols);
}

void normuon_step_cuda(float* p, const float* g, float* m, float* v, int64_t rows, int64_t cols,
                       const NormuonStep& s, void* workspace, cublasHandle_t handle,
                       cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  char* base = static_cast<char*>(workspace);
  float* u = reinterpret_cast<float*>(base);
  void* update_ws = base + cuda::aligned(sizeof(float) * rows * cols);
  void* polar_ws = static_cast<char*>(update_ws) + cuda::aligned(normuon_update_cuda_workspace_bytes(rows));
  normuon_momentum_cuda(g, m, u, rows * cols, s, stream);
  polar_express_cuda(u, u, 1, rows, cols, polar_ws, handle, stream);  // O in place of u
  normuon_update_cuda(p, v, u, rows, cols, s, update_ws, stream);
}

}  // namespace orrery::kernels
