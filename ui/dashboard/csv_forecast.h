#pragma once
// The Forecasts tab's own forecast: a column of a CSV, forecast by a model the user picks, beside
// a classical baseline. The dashboard knows no model: the program hands it a CsvForecaster that
// forecasts through the same path as `orrery forecast` (app/csv_forecaster.cpp), and the tab runs
// it on a worker thread (forecast_worker.h).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "orrery/host/inference_defaults.h"
#include "orrery/interrupt.h"
#include "runs/run.h"

namespace orrery::ui {

// What the tab's controls (or `orrery ui --model M --input FILE.csv ...`) ask for.
struct CsvForecastSettings {
  std::string model;    // Orrery weights, a run folder or a released checkpoint folder
  std::string input;    // a CSV, as `orrery forecast --input` reads it
  std::string column;   // the series to forecast; "" = the first that is not a covariate
  std::vector<std::string> covariates;  // past-only covariate columns (the model must read roles)
  int64_t horizon = 24;
  // How the model forecasts, by default as every front end does (inference_defaults.h).
  std::vector<int64_t> contexts = inference_defaults::contexts;  // several: a context ensemble
  bool box_cox = inference_defaults::box_cox;
  bool box_cox_check = inference_defaults::box_cox_check;  // with box_cox: kept per series by its own check
  bool box_cox_average = inference_defaults::box_cox_average;  // with box_cox: averaged with the plain forecast
  int64_t season = 1;                   // Box-Cox's blocks and the baseline's season
  std::string baseline = "ets";         // "" = none
  bool operator==(const CsvForecastSettings&) const = default;
};

struct CsvForecastResult {
  CsvForecastSettings settings;        // what it answers
  std::vector<std::string> columns;    // the file's series columns, for the column picker
  ForecastSnapshot model, baseline;    // one series each; the baseline's empty without one
  std::string model_name;              // the model as its folder or file names it
  std::string csv;                     // the model's forecast, as `orrery forecast` writes it
  std::string error;                   // what went wrong, shown in the window
  double seconds = 0;
};

struct CsvForecaster {
  // Runs on the worker thread; errors come back in CsvForecastResult::error. `interrupt` asks it
  // to stop (a newer request, or the window closing): it throws orrery::Interrupted.
  std::function<CsvForecastResult(const CsvForecastSettings&, const Interrupt& interrupt)> forecast;
  std::vector<std::string> baselines;  // the names the baseline picker offers
};

}  // namespace orrery::ui
