#pragma once
// What model.cpp, model_forecast.cpp and model_generate.cpp share inside the Model: the prepared
// input of a forward pass (Model::prepare), a recorded forward, and the rows of a role.
#include <ATen/ATen.h>

#include "orrery/architecture.h"
#include "orrery/batch.h"
#include "orrery/host/graphed_call.h"
#include "orrery/host/model.h"

namespace orrery {

struct Model::Prepared {
  PatchInput in;
  at::Tensor loc, scale, count;  // (B, V, N)
  at::Tensor lags;               // (B, V) each covariate row's move in steps; undefined without covariate_lags
};

// One recorded forward: inputs copied into `in` before each replay, the head's output in `out`.
struct Model::ForwardGraph {
  PatchInput in;
  at::Tensor out;
  std::unique_ptr<GraphedCall> call;
  uint64_t last_used = 0;
};

// (B, V, 1) bool: the rows of `roles` that are `role`.
inline at::Tensor rows_of_role(const at::Tensor& roles, VariateRole role) {
  return (roles == static_cast<int64_t>(role)).unsqueeze(-1);
}

}  // namespace orrery
