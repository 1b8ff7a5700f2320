#pragma once
// The two halves of `orrery bench train`'s MFU: the model FLOPs of one training step, counted
// from the model's shapes, and the peak the device reaches on a plain matrix product, measured
// in the same process.
#include <c10/core/Device.h>

#include <cstdint>
#include <string>

#include "orrery/host/model.h"
#include "orrery/precision.h"

namespace orrery::bench {

// Model FLOPs of one training step (forward, backward) of a toto2 model with the quantile head,
// counted the usual way (Kaplan et al. 2020; PaLM, appendix B):
//   * every weight matrix costs 2 FLOPs per parameter per token it is applied to in the forward
//     pass, 4 in the backward (the input's gradient and the weight's): 6 per parameter per token.
//     A token is one patch of one variate; the head sees every patch but the last.
//   * attention adds 2 x 2 x S_q x S_k x d_model per sequence in the forward (q k^T and A v over
//     all heads), twice that backward. Causal time layers are counted at FULL S x S (PaLM's
//     convention, which most published MFU figures use), though a causal kernel can skip about
//     half; the variate layer attends across the V variates at each patch.
//   * norms, activations, the scaler, the loss, clipping and the optimizer are not counted:
//     they are elementwise, a few FLOPs per parameter or activation.
// The layout is toto2's default (one variate layer per group of all the layers: the last),
// which is what the bench builds.
struct StepFlops {
  double matmul = 0, attention = 0;
  double total() const { return matmul + attention; }
  int64_t tokens = 0;  // patch tokens per step entering the transformer: B x V x T/32
};
StepFlops toto2_step_flops(Model& model, int64_t batch, int64_t variates, int64_t context);

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
