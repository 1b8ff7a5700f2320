#pragma once
// The host's input pipeline, shared by every architecture (as Toto 2.0 and TiRex build it):
// causal patch scaler -> asinh -> 64-wide patch tokens, and contiguous patch masking.
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <vector>

namespace orrery {

struct ScaledValues {
  at::Tensor z;      // (B, V, T) float32: (x - loc)/scale where observed, 0 elsewhere
  at::Tensor loc;    // (B, V, N) float64 (float32 on MPS): statistics at the last step of each
  at::Tensor scale;  // patch; scale >= min_scale. Kept in float64, so data beyond float32's
                     // range reads back without overflow.
  at::Tensor count;  // (B, V, N) float32: observations up to the end of each patch
};

// Running mean and Bessel-corrected standard deviation over observed points up to the end of
// each patch, computed in float64 (shifted by the first observation to avoid cancellation).
// Each patch is normalised with its own end-of-patch statistics; nothing after a patch's end
// influences it. `window` > 0 keeps only the last `window` patches' observations (the patch's
// own included), so the statistics follow a trending level instead of lagging at the mean of
// the whole history; a window with fewer than two observations, or with no spread, takes the
// whole history's, and a patch with no observation keeps the last observed patch's. `count` is
// the whole history's either way.
ScaledValues causal_patch_scale(const at::Tensor& values, const at::Tensor& observed,
                                int64_t patch_size, double min_scale = 1e-6, int64_t window = 0);

// (B, V, T) asinh-scaled values and observation mask -> (B, V, N, 2P) tokens:
// [P values || P flags], flag = 1 where unobserved.
at::Tensor patch_tokens(const at::Tensor& z, const at::Tensor& observed, int64_t patch_size);

// Contiguous patch masking (TiRex / Toto 2.0): per series draw a span c ~ U{1..c_max} and a rate
// p ~ U(0, p_max); spans of c patches are masked with probability p. Returns (B, V, N) bool,
// true = kept.
at::Tensor contiguous_patch_mask(int64_t batch, int64_t variates, int64_t patches, int64_t c_max,
                                 double p_max, at::Generator& gen);

// The masks of a training run's steps, from one generator. Under data parallelism every rank
// draws the masks of the whole global batch, micro-batch j of rank q being number j * world + q,
// and keeps its own: the ranks need only agree on each micro-batch's variate count
// (data_parallel_step.h), and the masks are those one process would draw for all of them.
class PatchMasker {
 public:
  struct Options {
    bool on = true;          // off: no masks (every patch kept)
    int64_t patches = 0;     // per series: context_length / patch_size
    int64_t max_span = 16;   // c_max
    double max_rate = 0.4;   // p_max
  };
  PatchMasker(const Options& options, uint64_t seed);

  // This rank's masks for its micro-batches of a step: one (batch, V, N) mask each, or undefined
  // tensors when masking is off. `variates` holds every micro-batch's variate count in the global
  // order above.
  std::vector<at::Tensor> draw(int64_t batch, const std::vector<int64_t>& variates, int64_t world, int64_t rank,
                               const at::Device& device);

  // The generator's state as hex text, for checkpoints, and back (throws orrery::Error on bad text).
  std::string state();
  void set_state(const std::string& hex);

 private:
  Options options_;
  at::Generator gen_;
};

// Expands a (B, V, N) patch mask to (B, V, N*P) steps.
at::Tensor expand_patch_mask(const at::Tensor& patch_mask, int64_t patch_size);

}  // namespace orrery
