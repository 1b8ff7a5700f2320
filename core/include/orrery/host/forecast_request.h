#pragma once
// One forecast, however it is asked for: model:forecast, `orrery forecast`, `orrery eval` and the
// dashboard each turn their input into a ForecastRequest and call answer(). A request holds its
// series as data: each series' target rows, covariate rows and static values. answer() checks the
// covariates against the horizon, fits the in-context regression where asked (forecasting the
// residual and adding the fit back), assembles the rows and their roles, cuts the histories to the
// longest context, and calls the model once per batch of series with the context ensemble,
// Box-Cox and sign averaging of the options. So the same request gives the same numbers through
// every front end.
#include <cstdint>
#include <string>
#include <vector>

#include "orrery/batch.h"
#include "orrery/host/combination.h"
#include "orrery/host/model.h"

namespace orrery {

struct RequestSeries {
  // Its target rows (usually one), each a history in data units, NaN where missing; all of one
  // length when the series has covariates. Each label names its row in errors ("a.csv: column 'x'").
  std::vector<std::vector<double>> targets;
  std::vector<std::string> labels;
  struct Covariate {
    std::string label;
    VariateRole role;            // past: known up to the forecast's start; future: through the horizon too
    std::vector<double> values;  // past: the history's steps; future: the history's, then the horizon's
  };
  std::vector<Covariate> covariates;
  std::vector<double> statics;  // its static covariates in the model's order (static_values.h); empty: none
};

struct ForecastRequest {
  std::vector<RequestSeries> series;
  int64_t horizon = 0;
  // Empty: each forecast from its whole history. One context c: from its last c steps. Several:
  // a context ensemble, the forecasts from the last c steps for each c averaged level by level
  // (ForecastOptions::contexts).
  std::vector<int64_t> contexts;
  // The known-future covariates through an in-context regression (covariate_regression.h): each
  // target row fitted on them over its whole history, the model forecasting the residual from the
  // history alone, the fit over the horizon added back. Then no covariate is a row of the model's.
  bool regression = false;
  int64_t regression_lags = 0;  // with regression: fitted over the covariates' lags 0..K
  int64_t batch_size = 64;      // series a pass
  // Classical forecasters each target row's forecast is pooled with (combination.h), each fitted on
  // the row's whole history (its values as given, before any regression) with `combine_season`.
  std::vector<std::string> combine;
  CombineRule combine_rule = CombineRule::mean;
  int64_t combine_season = 1;
  // Each target row keeps the combination only where it forecast the row's own last horizons
  // (options.check_origins of them) better than the model alone did (combination.h); elsewhere
  // the model's forecast.
  bool combine_check = false;
  // Levels, Box-Cox and its season, sign averaging, block decoding, precision, graphs, the mean
  // and the interrupt; answer() sets the contexts, roles, future values and statics itself.
  ForecastOptions options;
};

// A target row's forecast in data units: quantiles[level][step], the median and, when the
// options asked for it, the mean.
struct TargetForecast {
  std::vector<std::vector<double>> quantiles;
  std::vector<double> median, mean;
};

struct ForecastAnswer {
  std::vector<double> levels;
  std::vector<std::vector<TargetForecast>> series;  // [series][target row]
};

// Errors name the row at fault by its label: a covariate of the wrong length, a known-future one
// without a value (or beyond +-1e150) at a horizon step, a series with nothing observed in its
// context; and the request's own: a horizon, context or batch size out of range, a regression
// without known-future covariates or with past-only ones.
ForecastAnswer answer(Model& model, const ForecastRequest& request);

// The contexts a request may take: each at least 1 step, none twice; else an error that starts
// with `what` ("evaluation", "forecast: --context").
void check_contexts(const std::vector<int64_t>& contexts, const std::string& what);

}  // namespace orrery
