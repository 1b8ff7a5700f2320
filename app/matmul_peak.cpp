#include "matmul_peak.h"

#include <ATen/ATen.h>


#include "bench_common.h"
#include "orrery/error.h"

namespace orrery::bench {

MatmulPeak measure_matmul_peak(const at::Device& device, Precision precision) {
  MatmulPeak m;
  m.n = device.is_cpu() ? 2048 : 8192;
  m.runs = device.is_cpu() ? 5 : 10;
  const auto dtype = precision == Precision::bf16 ? at::kBFloat16 : at::kFloat;
  m.dtype = precision == Precision::bf16 ? "bfloat16" : "float32";
  auto opts = at::TensorOptions().dtype(dtype).device(device);
  at::Tensor a = at::randn({m.n, m.n}, opts), b = at::randn({m.n, m.n}, opts);
  at::Tensor c = at::empty({m.n, m.n}, opts);
  const Timing t = time_runs(1, m.runs, device, [&] { at::mm_out(c, a, b); });
  m.best_ms = t.min;
  m.flops_per_s = 2.0 * static_cast<double>(m.n) * m.n * m.n / (t.min / 1e3);
  return m;
}

}  // namespace orrery::bench
