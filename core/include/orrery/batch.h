#pragma once
#include <ATen/core/Tensor.h>

namespace orrery {
// What a data source yields and the model consumes.
struct Batch {
  at::Tensor values;      // (B, V, T) float32, arbitrary data units
  at::Tensor observed;    // (B, V, T) bool, true = observed
  at::Tensor series_ids;  // (B, V) int64: variates with equal ids belong to one series
  int64_t season = 1;     // natural seasonality of the data (1 = none known)
};
}  // namespace orrery
