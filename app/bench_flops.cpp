#include "bench_flops.h"

#include <ATen/ATen.h>

#include <set>

#include "bench_common.h"
#include "orrery/error.h"

namespace orrery::bench {

StepFlops toto2_step_flops(Model& model, int64_t batch, int64_t variates, int64_t context) {
  const int64_t N = context / model.patch_size();
  StepFlops f;
  f.tokens = batch * variates * N;
  const double head_tokens = static_cast<double>(batch * variates * (N - 1));
  // Weight matrices by name: the head's (Model::loss feeds it patches 0..N-2) and the rest.
  std::set<std::string> layers;
  int64_t d = 0;
  for (const Param& p : model.params()) {
    if (p.tensor.dim() != 2) continue;  // biases and gains: elementwise
    const std::string& name = p.info.name;
    const bool head = name.rfind("output_head.", 0) == 0;
    f.matmul += 6.0 * static_cast<double>(p.tensor.numel()) * (head ? head_tokens : static_cast<double>(f.tokens));
    const std::string suffix = ".attn.in_proj.weight";
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      layers.insert(name), d = p.tensor.size(1);
  }
  if (layers.empty()) throw Error("bench train: the model has no attention layers to count (a toto2 model?)");
  const double L = static_cast<double>(layers.size()), D = static_cast<double>(d);
  const double B = static_cast<double>(batch), V = static_cast<double>(variates), n = static_cast<double>(N);
  // 3 x (q k^T + A v) = 3 x 4 S^2 d per sequence: L - 1 time layers over B*V sequences of N
  // patches, one variate layer over B*N sequences of V variates.
  f.attention = 3.0 * 4.0 * D * ((L - 1) * B * V * n * n + B * n * V * V);
  return f;
}

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
