#pragma once
// Series as users give them (Lua lists, CSV columns: doubles, NaN for a missing value) into the
// tensors Model::forecast takes. The one conversion every front end uses.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace orrery {

// The largest value in size a forecast takes: the scaler squares deviations and sums them over
// the context in float64, which overflows beyond about 1e154. 1e150 leaves room for the sums.
inline constexpr double kMaxForecastMagnitude = 1e150;

struct SeriesBatch {
  at::Tensor values;    // (B, 1, T) float64: right-aligned, 0 where unobserved or padding
  at::Tensor observed;  // (B, 1, T) bool: true where a finite value was given
};

// The last `context` steps of each series (all when shorter), right-aligned into one batch of
// the longest one's length. Values beyond float32's range are kept (float64); beyond +-1e150,
// where the scaler's float64 sums overflow, they are an error naming the series and step. A
// series with no finite value in what is kept is an error naming it by `labels[i]` ("column 'b'").
SeriesBatch series_batch(const std::vector<std::vector<double>>& series,
                         const std::vector<std::string>& labels,
                         int64_t context = std::numeric_limits<int64_t>::max());

}  // namespace orrery
