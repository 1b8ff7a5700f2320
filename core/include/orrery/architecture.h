#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "orrery/forward_context.h"
#include "orrery/json.h"
#include "orrery/param.h"

namespace orrery {

// The patch tokens the host builds for every architecture (causal scaler, asinh, flags).
struct PatchInput {
  at::Tensor tokens;       // (B, V, N, 2P): P scaled values then P unobserved flags
  at::Tensor series_ids;   // (B, V) int64
  at::Tensor patch_valid;  // (B, V, N) bool: false for patches with no observation at all
  // (B, V) int64 VariateRole; undefined when every variate is a target. A known-future row's
  // patch n holds the covariate's patch n + 1 (Model::prepare), so what patch n forecasts, the
  // targets' patch n + 1, sees the covariate's values for those very steps across variates.
  at::Tensor roles = {};
  // (B, V, S): each row's series' static covariates as asinh of their data values (Model::prepare),
  // in static_covariates() order; undefined for an architecture that reads none.
  at::Tensor statics = {};
  // (B, V, N) float: each covariate row's match with its series' target so far, as the model
  // reads the row (covariate rows moved by their lags; host/covariate_lags.h covariate_match),
  // for a model with covariate_lags whose architecture reads_covariate_match(); undefined otherwise.
  at::Tensor covariate_match = {};
};

struct ArchitectureContext {
  ParamFactory& params;
  int64_t patch_size;
};

// State an architecture keeps between incremental calls of block decoding (e.g. the keys and
// values of causal layers). `length` patches are committed; the next call starts after them.
class DecodeCache {
 public:
  virtual ~DecodeCache() = default;
  int64_t length = 0;
};

// Model FLOPs of a training step (forward and backward), counted the usual way (Kaplan et al.
// 2020; PaLM, appendix B): every weight matrix 6 FLOPs per parameter per token it is applied to
// (forward 2, backward 4), attention's q k^T and A v 4 S_q S_k d_model per sequence forward and
// twice that backward, causal layers at the full S^2 (PaLM's convention, which most published MFU
// figures use). Norms, activations, the loss and the optimizer are not counted.
struct StepFlops {
  double matmul = 0, attention = 0;
  double total() const { return matmul + attention; }
};

class Architecture {
 public:
  virtual ~Architecture() = default;
  virtual int64_t d_model() const = 0;
  // Whether forward() reads PatchInput::roles. One that does not sees covariates as targets, so
  // the host refuses a batch with covariates for it rather than forecast as if it had none.
  virtual bool reads_roles() const { return false; }
  // The static covariates forward() reads from PatchInput::statics, by name and in order; empty
  // (the default) for one that reads none, to which the host gives none.
  virtual std::vector<std::string> static_covariates() const { return {}; }
  // Whether forward() reads PatchInput::covariate_match, which the host computes only for a model
  // whose covariate_lags aligns its known-future rows (and refuses to build one without).
  virtual bool reads_covariate_match() const { return false; }
  // Hidden states (B, V, N, d_model); position n may depend only on patches <= n of the
  // same series. `ctx` goes to every shared op (ops.h) the architecture calls.
  virtual at::Tensor forward(const PatchInput& in, const ForwardContext& ctx) = 0;

  // Incremental decoding. An architecture that can reuse work between calls returns a cache
  // for sequences of up to `max_patches`; nullptr (the default) makes the host recompute the
  // whole sequence each block, which gives the same result.
  virtual std::unique_ptr<DecodeCache> new_cache(int64_t max_patches) { return nullptr; }
  // The patches of `in` sit at positions cache.length, cache.length + 1, ... and see the cached
  // ones exactly as forward() would. Afterwards the first `commit` of them join the cache and the
  // rest are forgotten. Returns the hidden states of `in`.
  virtual at::Tensor forward_cached(const PatchInput& in, DecodeCache& cache, int64_t commit,
                                    const ForwardContext& ctx) {
    throw std::logic_error("forward_cached called on an architecture without a decode cache");
  }

  // Its FLOPs in a training step on `batch` series of `variates` variates and `patches` patches
  // (StepFlops' convention), for `orrery bench train`'s MFU. nullopt (the default): not counted.
  virtual std::optional<StepFlops> step_flops(int64_t batch, int64_t variates, int64_t patches) const {
    return std::nullopt;
  }
};

using ArchitectureFactory = std::unique_ptr<Architecture> (*)(const Json& options,
                                                              ArchitectureContext& ctx);
}  // namespace orrery
