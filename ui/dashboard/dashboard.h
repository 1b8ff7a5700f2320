#pragma once
// `orrery ui`: the live dashboard window (Dear ImGui 1.86 + GLFW + OpenGL3).
#include <functional>
#include <optional>
#include <string>

#include "csv_forecast.h"

namespace orrery::ui {

// Work to run beside the window (an experiment script): `run` on a worker thread, `cancel`
// from the UI thread when the window closes first. The script only writes run files; the
// dashboard reads them back through the RunWatcher, so neither side ever waits on the other.
struct BackgroundJob {
  std::string label;
  std::function<int()> run;
  std::function<void()> cancel;
};

struct DashboardOptions {
  std::string runs_dir = "runs";
  int width = 1600, height = 900;
  std::string view = "loss";     // the tab shown first: loss, forecasts, samples, lr, diagnostics, eval, search, scaling
  std::string filter;            // the runs table's filter, as typed
  // Headless: render `after` frames into a hidden window, save a PNG and exit. With a job,
  // the frames count from the job's end.
  std::string screenshot;
  int after = 3;
  std::string layout;            // with a screenshot: the plots' pixel frames as JSON
  float hover_x = -1, hover_y = -1;  // with a screenshot: where the mouse rests (hover read-outs)
  std::string select;  // the Evaluation tab opens on this data set's windows (its eval_forecasts.jsonl)
  // The Forecasts tab forecasts a CSV with this (the program's forecast path); `csv` is what its
  // controls start with, shown first when `csv_given`. `export_prefix`: once the forecast is in,
  // write PREFIX.png, PREFIX.svg and PREFIX.csv (the numbers as `orrery forecast` writes them).
  std::optional<CsvForecaster> forecaster;
  CsvForecastSettings csv;
  bool csv_given = false;
  std::string export_prefix;
};

// Opens the window and runs until it closes (or the screenshot is written). Returns the job's
// exit code, or 0. Errors (no display, a PNG that cannot be written) throw orrery::Error.
int run_dashboard(const DashboardOptions& options, BackgroundJob* job = nullptr);

}  // namespace orrery::ui
