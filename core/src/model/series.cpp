#include "orrery/host/series.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "orrery/error.h"

namespace orrery {
SeriesBatch series_batch(const std::vector<std::vector<double>>& series,
                         const std::vector<std::string>& labels, int64_t context) {
  if (series.empty()) throw Error("no series given");
  if (context < 1) throw Error("the context must be at least one step, got " + std::to_string(context));
  int64_t width = 0;
  for (const auto& s : series) width = std::max(width, std::min<int64_t>(static_cast<int64_t>(s.size()), context));
  const int64_t B = static_cast<int64_t>(series.size());
  SeriesBatch out{at::zeros({B, 1, std::max<int64_t>(width, 1)}, at::kDouble),
                  at::zeros({B, 1, std::max<int64_t>(width, 1)}, at::kBool)};
  double* v = out.values.data_ptr<double>();
  bool* m = out.observed.data_ptr<bool>();
  for (int64_t b = 0; b < B; ++b) {
    const auto& s = series[b];
    const int64_t kept = std::min<int64_t>(static_cast<int64_t>(s.size()), context);
    const int64_t from = static_cast<int64_t>(s.size()) - kept, to = (b + 1) * width - kept;
    bool any = false;
    auto label = [&] { return b < static_cast<int64_t>(labels.size()) ? labels[b] : "series " + std::to_string(b + 1); };
    for (int64_t t = 0; t < kept; ++t) {
      const double x = s[from + t];
      const bool finite = std::isfinite(x);
      if (finite && std::fabs(x) > kMaxForecastMagnitude) {
        char text[32];
        std::snprintf(text, sizeof text, "%.6g", x);
        throw Error(label() + ": the value " + text + " at step " + std::to_string(from + t + 1) +
                    " is beyond +-1e150, where the forecast's float64 scaling overflows; rescale the series");
      }
      v[to + t] = finite ? x : 0.0;
      m[to + t] = finite;
      any |= finite;
    }
    if (!any) {
      throw Error(label() + (s.empty() ? " is empty" : " has no observed value" +
                                                         std::string(kept < static_cast<int64_t>(s.size()) ? " in its last " + std::to_string(kept) + " steps" : "")) +
                  ": there is nothing to forecast from");
    }
  }
  return out;
}

}  // namespace orrery
