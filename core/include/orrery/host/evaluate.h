#pragma once
// Rolling-window evaluation of a model against the seasonal-naive baseline on the same
// windows, scored with GIFT-Eval's MASE and CRPS (see scoring.h).
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "orrery/host/interrupt.h"
#include "orrery/json.h"

namespace orrery {
class Model;

struct SeriesInput {
  std::string name;
  std::vector<double> values;  // NaN = missing
  int64_t season = 1;
};

struct EvalConfig {
  int64_t horizon = 12;
  int64_t windows = 1;      // last `windows` non-overlapping windows of `horizon` steps
  int64_t context = 2048;   // most recent steps fed to the model (the MASE scale uses all history)
};

// Returns {"horizon", "windows", "levels", "series": [{name, windows, mase, crps, naive_mase,
// naive_crps}], "overall": {...pooled...}, "forecasts": [{name, history, target, quantiles}]}
// where "forecasts" holds each series' last window for plots.
Json evaluate(Model& model, const std::vector<SeriesInput>& series, const EvalConfig& cfg,
              const Interrupt* interrupt = nullptr);

// A (Q, H) tensor of quantile forecasts as rows[q][h] of doubles.
std::vector<std::vector<double>> quantile_rows(const at::Tensor& q);

}  // namespace orrery
