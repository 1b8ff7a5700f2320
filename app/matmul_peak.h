#pragma once
// The peak of `orrery bench train`'s MFU: the rate the device reaches on a plain matrix product,
// measured in the same process. (The model FLOPs it is compared with are the model's own count,
// Model::step_flops.)
#include <c10/core/Device.h>

#include <cstdint>
#include <string>

#include "orrery/precision.h"

namespace orrery::bench {

// The best rate of an n x n x n matrix product (at::mm, 2 n^3 FLOPs) on `device` in the dtype
// the model's matrix products run in at `precision` (float32, or bfloat16 under autocast):
// n = 2048 and the best of 5 on the CPU, n = 8192 and the best of 10 on an accelerator, after
// one warm-up.
struct MatmulPeak {
  double flops_per_s = 0, best_ms = 0;
  int64_t n = 0, runs = 0;
  std::string dtype;
};
MatmulPeak measure_matmul_peak(const at::Device& device, Precision precision);

}  // namespace orrery::bench
