#pragma once
// Augmentations of training batches, each applied to a sample with its own probability (a data
// mixture's `augment` option): the transforms under which a forecaster should behave the same
// way, so that a prior covers more of where real series live.
//   sign_flip      the sample negated (a forecaster should be odd: f(-x) = -f(x))
//   time_reversal  the sample read backwards (a trend or a cycle is as likely either way), over
//                  the span from its first observed step to its last, so that the unobserved
//                  padding before a short series stays in front
//   mixup          TSMixup (Chronos): a convex combination, Dirichlet(1.5) weights, of this
//                  sample and one or two others of the batch, each first divided by its mean
//                  absolute value; the result keeps this sample's scale, and is observed where
//                  all of them are
//   level_shift    a step at a random time in that span, of a normal size relative to the
//                  sample's spread (observed steps only)
//   missing        a stretch of up to 15% of the span marked unobserved
// Randomness comes from the batch's seed alone, on a stream of its own, so a run without
// augmentations draws what it always drew.
#include <ATen/core/Tensor.h>

#include <cstdint>

#include "orrery/json.h"

namespace orrery {

struct Augmentations {
  double sign_flip = 0, time_reversal = 0, mixup = 0, level_shift = 0, missing = 0;

  bool any() const { return sign_flip > 0 || time_reversal > 0 || mixup > 0 || level_shift > 0 || missing > 0; }
  // From {name = probability, ...}; unknown names and probabilities outside [0, 1] are errors
  // naming `owner`'s option.
  static Augmentations parse(const Json& table, const std::string& owner);
  Json to_json() const;
};

// Augments a batch in place: values [B, V, T] float and observed [B, V, T] bool, on the CPU.
void augment(at::Tensor& values, at::Tensor& observed, const Augmentations& a, uint64_t seed);

}  // namespace orrery
