#pragma once
// A micro-batch's forward and backward recorded once per batch shape and replayed
// (graphed_call.h: one CUDA graph on a GPU). The recording adds into the parameters' gradients
// in place, so between steps they are zeroed (zero_grads), never released. What `train` does
// with graph = true, and `bench train --graph on`.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "orrery/batch.h"
#include "orrery/forward_context.h"
#include "orrery/host/graphed_call.h"
#include "orrery/param.h"

namespace orrery {
class Model;

class MicroStepGraphs {
 public:
  // Each micro-batch's loss carries 1/accumulate of the step's. `ctx` is copied, host reads off.
  MicroStepGraphs(Model& model, const ForwardContext& ctx, int64_t accumulate);

  // The micro-batch's loss (a tensor the next run overwrites); its gradients are added to the
  // parameters'. `keep` may be undefined (no patch masking).
  at::Tensor run(const Batch& b, const at::Tensor& keep);

  static void zero_grads(std::vector<Param>& params);

 private:
  struct Recording {
    Batch in;
    at::Tensor keep, loss;
    std::unique_ptr<GraphedCall> call;
  };
  static constexpr size_t kMaxShapes = 8;
  std::unique_ptr<Recording> record(const Batch& b, const at::Tensor& keep);

  Model& model_;
  ForwardContext ctx_;
  int64_t accumulate_;
  std::map<std::string, std::unique_ptr<Recording>> recordings_;
};

}  // namespace orrery
