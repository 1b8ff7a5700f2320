#pragma once
// Forecasts measured the way GIFT-Eval measures them (Aksu et al. 2024, "GIFT-Eval: A Benchmark
// for General Time Series Forecasting Model Evaluation", and its code): per data set and term, the prediction length of its frequency, the last
// `test_windows` non-overlapping windows of every series (each window's input is the whole
// history before it; a model truncates it to its context), MASE of the median, CRPS as the mean
// weighted quantile loss over nine levels and the coverage of the 10-90 band, pooled over all
// windows and steps of the configuration; each divided by seasonal naive's on the same windows,
// and aggregated by geometric mean across configurations. Any forecaster takes part: an Orrery
// model (all windows of a data set in a few batched forward passes) or a classical baseline.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "orrery/data_source.h"
#include "orrery/host/backtest.h"
#include "orrery/host/combination.h"
#include "orrery/host/eval_forecasts.h"
#include "orrery/host/inference_defaults.h"
#include "orrery/frequency.h"
#include "orrery/interrupt.h"
#include "orrery/json.h"

namespace orrery {
class Model;

struct EvalDataset {
  std::string name;
  Frequency frequency;
  std::vector<SeriesInput> series;  // univariate items (a multivariate set's variates, each)
  std::string origin;               // the file it came from
};

// A folder with a manifest.json (assets/data's layout: {"datasets": [{"name", "file",
// "frequency"}, ...]}), a manifest itself, or one CSV file: every column but "time" is a
// series, one row per step; its frequency is `frequency`, or inferred from a "time" column of
// ISO dates. Errors name the manifest entry or file at fault.
std::vector<EvalDataset> load_eval_datasets(const std::string& path, const std::string& frequency = "");
// `path` as load_eval_datasets reads it: the default, assets/data, where the working directory has
// none, is an install's own bundled benchmark (share/orrery/assets/data).
std::string eval_data_path(const std::string& path);

// The series a data source reads from files (csv, parquet: any layout), whole: one data set per
// frequency, each variate an item (each target variate, with its series' covariate rows, when the
// source has covariate columns). `frequency` overrides the series' own (needed when they have
// no times); `label` names the set ("csv"), or its file's stem when the source reads one file.
// A generator holds no fixed series: an error says to evaluate on files.
std::vector<EvalDataset> eval_datasets(const DataSource& source, const std::string& label,
                                       const std::string& frequency = "");

class EvalForecaster {
 public:
  virtual ~EvalForecaster() = default;
  virtual std::string name() const = 0;
  // One forecast per history: quantiles[i][q][h] at `levels`.
  virtual std::vector<std::vector<std::vector<double>>> forecast(
      const std::vector<std::vector<double>>& histories, int64_t season, int64_t horizon,
      const std::vector<double>& levels) = 0;
  // A window's covariate rows as it may read them: past-only ones over its history, known-future
  // ones over its history and horizon.
  struct Covariates {
    std::vector<std::vector<double>> past, future;
    std::vector<double> statics = {};  // the series' static covariates
  };
  // forecast() given each window's covariates. A forecaster that does not read them (a baseline,
  // a model scored without them) forecasts from the histories alone.
  virtual std::vector<std::vector<std::vector<double>>> forecast_with(
      const std::vector<std::vector<double>>& histories, const std::vector<Covariates>& covariates, int64_t season,
      int64_t horizon, const std::vector<double>& levels) {
    (void)covariates;
    return forecast(histories, season, horizon, levels);
  }
};

// How a model forecasts each window, beyond the steps it reads (ForecastOptions).
struct ForecastRecipe {
  bool sign_average = false;  // ForecastOptions::sign_average
  bool box_cox = false;       // ForecastOptions::box_cox: each window's exponent by Guerrero's method
                              // in blocks of its season
  bool box_cox_check = false;  // with box_cox: ForecastOptions::box_cox_check, each window's own check
  bool box_cox_average = false;  // with box_cox: ForecastOptions::box_cox_average, averaged with the plain
  int64_t check_origins = 1;   // ForecastOptions::check_origins: the horizons each check scores
};
// A model's forecasts, `batch_size` windows per forward pass, each fed its last `contexts` steps
// (several: ForecastOptions::contexts, the forecasts from each averaged), as `recipe` says. With
// `covariates` it reads the windows' covariates (forecast_with), which needs a model that reads
// variate roles.
std::unique_ptr<EvalForecaster> model_forecaster(Model& model, std::string name, std::vector<int64_t> contexts,
                                                 int64_t batch_size, const Interrupt* interrupt = nullptr,
                                                 ForecastRecipe recipe = {}, bool covariates = false);
// The same model through the one forecast path's in-context regression on the windows' known-future
// covariates (ForecastRequest::regression), over their lags 0..max_lag: "NAME/regression", or
// "NAME/lagged-regression" when max_lag > 0. A window without any is forecast as it is.
std::unique_ptr<EvalForecaster> model_regression_forecaster(Model& model, const std::string& name,
                                                            std::vector<int64_t> contexts, int64_t batch_size,
                                                            const Interrupt* interrupt, ForecastRecipe recipe,
                                                            int64_t max_lag);
// A classical baseline (baselines.h): naive, seasonal_naive, theta, ets.
// `interrupt` is checked before each window's fit.
std::unique_ptr<EvalForecaster> baseline_forecaster(const std::string& name, const Interrupt* interrupt = nullptr);
// `inner` with an in-context regression on each window's known-future covariates, named
// A baseline (any forecaster) as "INNER/regression": a linear fit of the target on those it follows over the whole history
// (covariates chosen by a test on their changes); `inner` forecasts the residual from the
// history alone and the fit over the horizon is added to every quantile
// (covariate_regression.h). A window without known-future covariates, or where the fit takes
// none in, is forecast as `inner` forecasts it (so on a data set without covariates the two
// score alike). max_lag > 0: the fit's candidates are the covariates at lags 0..max_lag, and it is
// named "INNER/lagged-regression".
std::unique_ptr<EvalForecaster> regression_forecaster(std::unique_ptr<EvalForecaster> inner, int64_t max_lag = 0);

struct EvalProtocol {
  std::vector<Term> terms{Term::short_term};
  // GIFT-Eval's validation split instead of its test windows: per series the one window of the
  // prediction length just before the test windows, its history everything before it. What a
  // search tunes on, so that the test windows stay unseen until the tuned model is scored.
  bool validation = false;
  // Rolling origins of the validation split: a series gets up to this many windows of the
  // prediction length, back to back, ending where its test windows begin: as many as it takes to
  // cover a tenth of the steps before its test windows (GIFT-Eval's rule for the test windows,
  // per series), at least one, so long series are validated more densely. 1: GIFT-Eval's split.
  int64_t validation_windows = 1;
  std::vector<double> levels{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  // Also score every window on its own ("windows" in the result), so that two forecasters can
  // be compared window by window, paired (large for a large benchmark: off by default).
  bool per_window = false;
  // Also keep every window's forecasts ("forecasts" in the result: one entry per window with its
  // data set, series, start, the last steps of its history, the actual values, and each
  // forecaster's quantiles and seasonal naive's), which evaluate_request writes to
  // eval_forecasts.jsonl beside eval.json for the dashboard and orrery plot.
  bool keep_forecasts = false;
};


// Every forecaster on every data set and term. `progress` gets a line per configuration.
// Returns {"protocol", "skipped": [{dataset, term, why}] (too short for a medium or long term),
// "configurations": [{dataset, frequency, term, horizon, windows, items,
// season}], "rows": [{dataset, frequency, term, bucket, model, mase, crps, coverage, mase_ratio,
// crps_ratio}] (bucket: the frequency bucket below), "summary": [{model, mase, crps, score, coverage, configurations}]} where the
// summary's mase and crps are geometric means of the ratios to seasonal naive, and score the
// geometric mean of (mase_ratio + crps_ratio) / 2 (Toto 2.0's search objective, the M4 OWA's form),
// and "buckets": [{by, bucket, model, mase, crps, score, configurations}], the same means by
// frequency (yearly, quarterly, monthly, higher: weekly and up) and by the length of a window's
// history (context <48, 48-127, 128-512, >512 steps; each configuration on its windows there).
// With `per_window`, "windows": [{dataset, term, window, model, mase, crps}], each window scored
// alone (window counts from 1 in the configuration's order; mase and crps unnormalised).
Json run_eval(const std::vector<EvalDataset>& datasets, const std::vector<EvalForecaster*>& forecasters,
              const EvalProtocol& protocol, const std::function<void(const std::string&)>& progress = {},
              const Interrupt* interrupt = nullptr);

// The results as a table: one row per configuration, two columns per model (MASE and CRPS
// ratios), then the geometric means, overall and by frequency bucket (and relative to ets's
// when ets is among the models).
std::string format_eval_table(const Json& result);
// eval.json (everything) and eval.csv (the rows, with their frequency bucket) in `dir`, written
// atomically.
void write_eval(const Json& result, const std::string& dir);

// What `orrery eval` and orrery.eval{} ask for: models by name, data, baselines, protocol. On data
// with covariates a model that reads variate roles is scored twice on the same windows, with its
// covariates (under its name) and without them (NAME/no-covariates); on data with known-future
// covariates every model (model_regression_forecaster) and baseline (regression_forecaster) is
// also scored through the in-context regression (NAME/regression), and a baseline that takes regressors itself (arima) with them as
// regressors (NAME/xreg: a regression with ARIMA errors, fitted jointly).
struct EvalRequest {
  std::vector<std::pair<std::string, Model*>> models;
  std::string data = "assets/data";  // see load_eval_datasets; with `source`, the plugin's name
  std::shared_ptr<const DataSource> source;  // when set, evaluate its series (eval_datasets)
  std::string frequency;             // for a single CSV, or a source's untimed series
  std::vector<std::string> baselines{"naive", "seasonal_naive", "theta", "ets"};
  EvalProtocol protocol;
  // Steps of history each model reads; several: a context ensemble (ForecastOptions::contexts),
  // recorded in the result's protocol. The defaults here are every front end's (inference_defaults.h).
  std::vector<int64_t> contexts = inference_defaults::contexts;
  int64_t batch_size = 64;
  bool sign_average = false;         // the models' forecasts sign-averaged (ForecastOptions), recorded
                                     // in the result's protocol
  bool box_cox = inference_defaults::box_cox;  // the models forecast Box-Cox transforms (ForecastRecipe),
                                               // recorded in the result's protocol
  bool box_cox_check = inference_defaults::box_cox_check;  // with box_cox: each window keeps it only
                                                           // where its own check says so
  bool box_cox_average = inference_defaults::box_cox_average;  // with box_cox: averaged with the plain
                                                               // forecast (ForecastRecipe), recorded
  // > 0: on known-future covariates every forecaster is also scored through the regression over
  // the covariates' lags 0..regression_lags (NAME/lagged-regression; CovariateRegression::fit's
  // max_lag), beside NAME/regression (lag 0). Recorded in the result's protocol.
  int64_t regression_lags = 0;
  // Baselines each model is also pooled with (combination.h), scored as NAME+b1+b2 ("/median"
  // with the median rule); recorded in the result's protocol.
  std::vector<std::string> combine;
  CombineRule combine_rule = CombineRule::mean;
  bool combine_check = false;  // each window keeps the pool only where its own check says so ("/checked")
  // The horizons each check (box_cox_check, combine_check) scores, each held out in turn
  // (ForecastOptions::check_origins); recorded in the result's protocol when a check is on.
  int64_t check_origins = inference_defaults::check_origins;
  std::string out;                   // folder for eval.json and eval.csv; "" = none
  bool forecasts = true;             // with `out`: every window's forecasts too, eval_forecasts.jsonl
  bool quiet = false;                // no progress lines and no table
};
// Runs it, prints progress and the table (unless quiet), writes `out`; returns run_eval's
// result with "table" (the printed text) and "out" added.
Json evaluate_request(const EvalRequest& request, const Interrupt* interrupt = nullptr);

}  // namespace orrery
