#pragma once
// A backtest: a model on the last windows of a researcher's own series, at a horizon they choose,
// against the seasonal-naive forecast of the same windows, scored with GIFT-Eval's MASE and CRPS
// (scoring.h). Not the GIFT-Eval protocol, which chooses horizons and windows by frequency and
// scores whole benchmarks with baselines (eval_protocol.h): orrery.backtest and orrery.eval.
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "orrery/interrupt.h"
#include "orrery/json.h"

namespace orrery {
class Model;

struct SeriesInput {
  std::string name;
  std::vector<double> values;  // NaN = missing
  int64_t season = 1;
  // Covariate rows (docs/covariates.md), each as long as `values`: past-only ones are read up to
  // a window's start, known-future ones over its horizon too. Empty: no covariates.
  std::vector<std::vector<double>> past, future;
  std::vector<double> statics = {};  // its static covariates (the source's order); empty: none
};

struct BacktestConfig {
  int64_t horizon = 12;
  int64_t windows = 1;      // last `windows` non-overlapping windows of `horizon` steps
  int64_t context = 2048;   // most recent steps fed to the model (the MASE scale uses all history)
};

// Returns {"horizon", "windows", "levels", "series": [{name, windows, mase, crps, naive_mase,
// naive_crps}], "overall": {...pooled...}, "forecasts": [{name, history, target, quantiles}]}
// where "forecasts" holds each series' last window for plots.
Json backtest(Model& model, const std::vector<SeriesInput>& series, const BacktestConfig& cfg,
              const Interrupt* interrupt = nullptr);

// A (Q, H) tensor of quantile forecasts as rows[q][h] of doubles.
std::vector<std::vector<double>> quantile_rows(const at::Tensor& q);

}  // namespace orrery
