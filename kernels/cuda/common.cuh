#pragma once
// What the kernels share: error checks that throw, launch geometry, and a block-wide sum.
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace orrery::kernels::cuda {

constexpr int kThreads = 256;       // threads per block, a multiple of the warp size
constexpr int kMaxBlocks = 1024;    // grid-stride loops cover the rest

// The asynchronous API reports a bad launch at the next call: check right after each one so the
// message names the kernel that failed.
inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("orrery kernels: ") + what + ": " + cudaGetErrorString(e));
}
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

// Enough blocks for `count` elements at one per thread, at most kMaxBlocks (and at least one).
inline int blocks_for(int64_t count) {
  const int64_t b = (count + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1 ? 1 : (b > kMaxBlocks ? kMaxBlocks : b));
}

// Bytes rounded up so that consecutive workspace slices stay 256-byte aligned.
inline size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

// Sum of `x` over the block (blockDim.x == kThreads); the result is valid in thread 0. The
// shuffle tree and the fixed shared-memory order make it deterministic.
template <typename T>
__device__ T block_sum(T x) {
  __shared__ T warp_sums[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_down_sync(0xffffffffu, x, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = x;
  __syncthreads();
  T total = 0;
  if (threadIdx.x == 0)
    for (int w = 0; w < kThreads / 32; ++w) total += warp_sums[w];
  __syncthreads();  // the shared slots may be reused by the caller's next block_sum
  return total;
}

}  // namespace orrery::kernels::cuda
