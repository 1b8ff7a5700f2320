#pragma once
// The dashboard's state and its frame: a runs table on the left, the views in tabs on the
// right. A pure function of the newest Workspace snapshot plus what the user clicked.
#include <imgui.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "csv_forecast.h"
#include "forecast_worker.h"
#include "runs/run.h"
#include "views/views.h"

namespace orrery::ui {

enum class Tab { loss, forecasts, samples, lr, diagnostics, eval, search, scaling };
Tab parse_tab(const std::string& name);  // errors name the option

class App {
 public:
  // `show_fps` is off for screenshots, so two renders of the same data are identical.
  App(Tab first_tab, const std::string& filter, bool show_fps = true);
  // The Evaluation tab opens on the windows of this data set ("nile", or "nile/A/short");
  // one no forecasts file holds is said in the window, with the names there are.
  void select_eval(const std::string& dataset) { drill_.pending = dataset; }
  // The Forecasts tab's CSV forecast: `forecaster` runs on a worker that calls `wake` with each
  // result. `open` shows the CSV view first; `export_prefix` (headless) writes PREFIX.png, .svg
  // and .csv once the first forecast is in.
  void enable_csv_forecasts(CsvForecaster forecaster, std::function<void()> wake, const CsvForecastSettings& settings,
                            bool open, const std::string& export_prefix);
  // Whether the CSV view, drawn this frame, still waits for its forecast or export (a screenshot
  // waits for it); a view not drawn waits for nothing.
  bool busy() const;
  // The CSV forecast's or its export's error, "" if none: a headless run exits with it.
  std::string csv_error() const;
  // A PNG of a region of the rendered frame the user asked for; the window loop writes it after
  // rendering and reports a failure through export_failed().
  struct PngRequest {
    std::string path;
    plot::Rect region;
  };
  std::optional<PngRequest> take_png_request() { return std::exchange(png_request_, std::nullopt); }
  void export_failed(const std::string& message) { export_message_ = message, export_error_ = true; }
  // Draws one frame over the whole viewport. `job_line` is shown in the header when non-empty.
  void frame(const Workspace& ws, const std::string& job_line);
  // Each run's colour (stable: by first appearance), for tests and the layout file.
  const std::map<std::string, plot::Color>& colors() const { return colors_; }

 private:
  void header(const Workspace& ws, const std::string& job_line);
  void runs_table(const std::vector<std::shared_ptr<const Run>>& shown);
  void loss_tab(const std::vector<StyledRun>& selected);
  void forecasts_tab(const std::vector<StyledRun>& selected, const std::vector<std::shared_ptr<const Run>>& shown);
  void snapshots_view(const std::vector<StyledRun>& selected, const std::vector<std::shared_ptr<const Run>>& shown);
  void csv_forecast_view(const std::vector<std::shared_ptr<const Run>>& shown);
  void csv_controls(const std::vector<std::shared_ptr<const Run>>& shown, const CsvForecastResult* result);
  void export_csv_forecast(const CsvForecastResult& result, plot::Rect region);
  void samples_tab(const std::vector<StyledRun>& selected);
  void lr_tab(const std::vector<std::shared_ptr<const Run>>& shown);
  void diagnostics_tab(const Workspace& ws, const std::vector<StyledRun>& selected);
  void eval_tab(const std::vector<std::shared_ptr<const Run>>& shown);
  void eval_windows(const EvalTable& table, const std::vector<std::shared_ptr<const Run>>& shown);
  void search_tab(const Workspace& ws);
  void scaling_tab(const Workspace& ws);
  plot::Color color_of(const std::string& name);

  Tab first_tab_;
  bool show_fps_;
  bool first_frame_ = true;
  ImGuiTextFilter filter_;
  std::set<std::string> selected_;
  bool follow_ = true;  // until the user picks runs, show the newest ones
  std::map<std::string, plot::Color> colors_;
  LossViewOptions loss_;
  std::string forecast_run_;
  int snapshot_ = 0, series_ = 0;
  bool latest_snapshot_ = true, grid_ = false;
  int coord_index_ = 0, coord_step_ = -1;
  EvalViewOptions eval_;
  // The Evaluation tab's drill-down: one configuration's windows from its run's eval_forecasts.jsonl.
  struct Drill {
    std::string configuration;   // "" = the table
    std::string pending;         // --select, resolved on the first frame with forecasts
    std::string model, baseline; // "" = the file's defaults
    size_t first = 0;            // the first window shown
    bool sort = false;           // the table's rows worst first by the model over the baseline
    std::string message;         // what went wrong (a file of another version, an unknown --select)
  } drill_;
  struct ForecastsFile {
    std::filesystem::file_time_type written;
    std::shared_ptr<const EvalForecasts> forecasts;
    std::string error;
  };
  std::map<std::string, ForecastsFile> forecasts_files_;  // by path, read again when rewritten
  const ForecastsFile& forecasts_file(const std::string& path);
  // The Forecasts tab's CSV forecast (enable_csv_forecasts).
  std::unique_ptr<ForecastWorker> csv_worker_;
  bool csv_view_ = false;                 // the CSV view instead of the runs' snapshots
  CsvForecastSettings csv_;               // as the controls stand
  std::optional<CsvForecastSettings> csv_submitted_;
  std::string export_prefix_ = "forecast";
  bool export_pending_ = false;           // headless --export: once the forecast is in
  bool csv_shown_ = false;                // the CSV view was drawn this frame
  bool csv_drawn_busy_ = true;            // ... without the forecast of its settings (yet)
  std::string export_message_;
  bool export_error_ = false;
  std::optional<PngRequest> png_request_;
  std::string study_, scaling_;  // the folders picked in the Search and Scaling tabs
  float samples_height_ = 0;  // what the Samples tab drew last frame: its scrolled content
  double now_ = 0;
};

}  // namespace orrery::ui
