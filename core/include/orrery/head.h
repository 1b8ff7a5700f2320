#pragma once
#include <ATen/core/Tensor.h>

#include <ATen/core/Generator.h>

#include <memory>
#include <vector>

#include "orrery/error.h"
#include "orrery/forward_context.h"
#include "orrery/json.h"
#include "orrery/param.h"

namespace orrery {

struct HeadContext {
  ParamFactory& params;  // a head opens its own name scope for its parameters
  int64_t d_model;
  int64_t patch_size;
};

// A head turns hidden states at patch n into a prediction of patch n+1, in the model's
// normalised space (asinh of scaled values), and scores it against targets in that space.
// A head over classes (token ids) predicts the data's own values instead: predicts_raw_values(),
// and the host then passes values to the architecture and the loss unscaled.
class Head {
 public:
  virtual ~Head() = default;
  // True when the targets are the values as the data hold them (class ids), not normalised: the
  // host neither scales the input nor the targets, and refuses quantile forecasts for it.
  virtual bool predicts_raw_values() const { return false; }
  // (B, V, N, d) -> head-specific raw output with leading dims (B, V, N, P, ...). `ctx` goes
  // to every shared op (ops.h) the head calls.
  virtual at::Tensor forward(const at::Tensor& hidden, const ForwardContext& ctx) = 0;
  // Mean loss over observed target points. target: (B, V, N, P); weight: same shape,
  // non-negative (0 = not observed): the loss is the weighted mean.
  virtual at::Tensor loss(const at::Tensor& out, const at::Tensor& target,
                          const at::Tensor& weight) = 0;
  // Quantiles (Q, B, V, N, P) at `levels` (sorted ascending), in normalised space.
  virtual at::Tensor quantiles(const at::Tensor& out, const std::vector<double>& levels) = 0;
  // The levels this head reports by default.
  virtual std::vector<double> default_levels() const = 0;
  // Values drawn from the prediction at every position of `out` (B, V, N, P), for generation:
  // `temperature` divides the logits (0: the most likely value), `top_k` > 0 keeps only that
  // many most likely classes. A head that cannot draw throws (the default).
  virtual at::Tensor sample(const at::Tensor& out, double temperature, int64_t top_k, at::Generator& gen) {
    (void)out, (void)temperature, (void)top_k, (void)gen;
    throw Error("it cannot draw samples (Head::sample)");
  }
};

// Toto 2.0's nine quantile knots 0.1 .. 0.9: the levels every head reports by default.
inline std::vector<double> nine_levels() { return {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}; }

using HeadFactory = std::unique_ptr<Head> (*)(const Json& options, HeadContext& ctx);
}  // namespace orrery
