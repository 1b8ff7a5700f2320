#pragma once
// `orrery forecast`: quantile forecasts of every series in a CSV from saved model weights.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "orrery/host/combination.h"
#include "orrery/host/inference_defaults.h"
#include "orrery/interrupt.h"

namespace orrery {
class Registry;
class Model;

struct ForecastCsvOptions {
  std::string model;   // see load_model: Orrery weights, a run folder or a released checkpoint
  std::string input;   // numeric CSV with a header; every column but "time" is a series
  // Covariates (docs/covariates.md): with any, the targets and covariates are the rows of one
  // series, mixed by the model's variate attention, and the model must read variate roles.
  std::vector<std::string> targets;            // columns to forecast; empty: every column not named below
  std::vector<std::string> past_covariates;    // observed up to the forecast's start
  std::vector<std::string> future_covariates;  // known over the horizon too, from `future`
  std::string future;  // CSV with the known-future columns over the horizon (its first H rows)
  // Covariates (of either kind) whose cells are categories, not numbers: each becomes one 0/1
  // row per category (one_hot.h); only an empty cell is missing there.
  std::vector<std::string> categorical;
  // The known-future covariates through an in-context regression (covariate_regression.h): each
  // target is fitted over its whole history (not only the last `context` steps) on those it
  // follows, and the model forecasts the residual alone, so any model can use them. No past-only
  // covariates with it.
  bool regression = false;
  int64_t regression_lags = 0;  // with regression: fitted over the covariates' lags 0..K
  // Columns that hold one value per series (the same on every row where given): exactly the
  // static covariates the model reads, in any order. They apply to every target of the file.
  std::vector<std::string> static_covariates;
  std::string output;  // CSV to write (atomically); empty = standard output
  std::optional<int64_t> horizon;  // required, at least 1
  // The most recent steps fed to the model; several: a context ensemble averaged level by level,
  // as orrery eval and model:forecast take it (ForecastRequest::contexts). The defaults here are
  // every front end's (inference_defaults.h).
  std::vector<int64_t> contexts = inference_defaults::contexts;
  int64_t decode_block_size = 0;  // ForecastOptions::decode_block_size
  std::string precision = "fp32";  // ForecastOptions::precision, by name
  bool sign_average = false;       // ForecastOptions::sign_average
  bool box_cox = inference_defaults::box_cox;  // ForecastOptions::box_cox, each series' exponent by Guerrero's method
  bool box_cox_check = inference_defaults::box_cox_check;  // with box_cox: ForecastOptions::box_cox_check
  bool box_cox_average = inference_defaults::box_cox_average;  // with box_cox: ForecastOptions::box_cox_average
  int64_t check_origins = inference_defaults::check_origins;  // ForecastOptions::check_origins, for both checks
  int64_t season = 1;              // ... in blocks of this many steps (ForecastOptions::season); and
                                   // the season of the baselines in `combine`
  std::string device = "cpu";
  const Interrupt* interrupt = nullptr;
  // How errors name the options above: `orrery forecast`'s flags here; the dashboard its own.
  struct Names {
    std::string target = "--target", past = "--past-covariates", horizon = "--horizon", context = "--context";
  } names;
  // Baselines the model's forecast is pooled with (combination.h), each fitted on the target's
  // whole column with `season`; empty: the model's alone.
  std::vector<std::string> combine;
  CombineRule combine_rule = CombineRule::mean;
  bool combine_check = false;  // ForecastRequest::combine_check
};

// Writes one row per forecast step: "step", "time" (extrapolated when the input has a time
// column, which must then be evenly spaced), then "<series>_q<level>" for every series and
// level (targets only). A series with no value in its last `context` steps is an error naming its
// column; so is a covariate missing from either file, a known-future covariate with fewer than H
// rows or a gap in them in `future`, a `future` time column that does not continue the input's,
// and a categorical column that is not a covariate.
void forecast_csv(const ForecastCsvOptions& opts, const Registry& registry);

// A CSV's forecast before it is written: what `orrery forecast` prints and the dashboard draws.
struct CsvForecast {
  std::vector<std::string> names;               // the target columns, in order
  std::vector<std::vector<double>> histories;   // each target's column (NaN = missing)
  std::vector<double> levels;
  std::vector<std::vector<std::vector<double>>> quantiles;  // [target][level][step]
  struct Covariate {
    std::string name;           // its column, or "column = category" for a categorical one
    bool known_future = false;
    std::vector<double> history, ahead;  // the input's steps; known-future: the horizon's too
  };
  std::vector<Covariate> covariates;
  // The time column's last value and step; NaN when the input has none.
  double t_last = std::numeric_limits<double>::quiet_NaN(), dt = std::numeric_limits<double>::quiet_NaN();
};

// The forecast itself. `model` is called once the files have been checked (so a bad column is
// told before a slow load) and returns the model to forecast with.
CsvForecast forecast_csv_table(const ForecastCsvOptions& opts, const std::function<Model&()>& model);
// The CSV `orrery forecast` writes: "step", "time" when the input has one, "<column>_q<level>".
std::string csv_forecast_text(const CsvForecast& forecast);

}  // namespace orrery
