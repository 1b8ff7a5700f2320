#pragma once
#include <ATen/core/Tensor.h>

#include <memory>

#include "orrery/json.h"
#include "orrery/param.h"

namespace orrery {

// The patch tokens the host builds for every architecture (causal scaler, asinh, flags).
struct PatchInput {
  at::Tensor tokens;       // (B, V, N, 2P): P scaled values then P unobserved flags
  at::Tensor series_ids;   // (B, V) int64
  at::Tensor patch_valid;  // (B, V, N) bool: false for patches with no observation at all
};

struct ArchitectureContext {
  ParamFactory& params;
  int64_t patch_size;
};

class Architecture {
 public:
  virtual ~Architecture() = default;
  virtual int64_t d_model() const = 0;
  // Hidden states (B, V, N, d_model); position n may depend only on patches <= n of the
  // same series.
  virtual at::Tensor forward(const PatchInput& in) = 0;
};

using ArchitectureFactory = std::unique_ptr<Architecture> (*)(const Json& options,
                                                              ArchitectureContext& ctx);
}  // namespace orrery
