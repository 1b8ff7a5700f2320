#pragma once
// What the dashboard knows about one run, read from its folder (config.json, metrics.jsonl,
// forecasts.jsonl, summary.json, evaluation.json, eval.json), and what it knows about
// experiments that wrote their own results (coord_check.json). Plain values only: no torch, no
// ImGui.
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "orrery/json.h"

namespace orrery::ui {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// (x, y) pairs in arrival order; x is the step.
struct Curve {
  std::vector<double> x, y;
  void add(double xv, double yv) { x.push_back(xv), y.push_back(yv); }
  bool empty() const { return x.empty(); }
  double last() const { return y.empty() ? kNaN : y.back(); }
};

// A covariate row of a forecast series: its history and, when known over the horizon, its values
// there (the forecast read them); a past-only row has none after the forecast start.
struct CovariateRow {
  bool known_future = false;
  std::vector<double> history, future;  // NaN = missing
};

struct ForecastSeries {
  std::string name;
  std::vector<double> history, target;           // NaN = missing
  std::vector<std::vector<double>> quantiles;    // [level][step]
  std::vector<CovariateRow> covariates;          // drawn under the target, in the series' order
  std::vector<std::pair<std::string, double>> statics;  // its static covariates, named in the title
};

// The forecasts of one moment of a run: a training step, or the final evaluation.
struct ForecastSnapshot {
  std::string label;  // "step 400", "evaluation"
  int64_t step = -1;  // -1 for the evaluation
  std::vector<double> levels;
  std::vector<ForecastSeries> series;
};

// eval.json, written by `orrery eval` (core/src/eval/eval_protocol.cpp): every model's scores per
// configuration (data set, frequency, term), raw and as ratios to seasonal naive on the same
// windows. Not to be confused with evaluation.json, a run's final forecast snapshot.
struct EvalScores {
  double mase = kNaN, crps = kNaN, coverage = kNaN;  // NaN = null in the file
  double mase_ratio = kNaN, crps_ratio = kNaN;       // below 1 beats seasonal naive
};
struct EvalConfiguration {
  std::string dataset, frequency, term;
  int64_t horizon = 0, windows = 0, items = 0;
  std::string label() const { return dataset + "/" + frequency + "/" + term; }
};
struct EvalResult {
  EvalConfiguration where;  // only dataset, frequency and term are filled
  std::string model;
  EvalScores scores;
};
struct EvalModelSummary {
  std::string model;
  double mase = kNaN, crps = kNaN, coverage = kNaN;  // geometric means of the ratios (coverage: mean)
  int64_t configurations = 0;
};
struct Evaluation {
  std::string protocol;  // "GIFT-Eval"
  std::vector<std::string> terms;
  std::vector<EvalConfiguration> configurations;  // in the file's order
  std::vector<EvalResult> results;
  std::vector<EvalModelSummary> summary;          // one per model, in the order it was run
};
// nullptr when `j` holds no evaluation (an empty object: the file is gone); entries of the
// wrong shape are skipped, never thrown on.
std::shared_ptr<const Evaluation> parse_eval(const Json& j);

// forecasts.jsonl, written beside eval.json by `orrery eval`: every window's history (its last
// steps), actual values, and each forecaster's quantiles and scores on that window alone.
struct EvalWindow {
  std::string dataset, frequency, term, series;
  int64_t start = 0, season = 1;  // the series' step the window's first actual value is at
  std::vector<double> history, actual;                                 // NaN = missing
  std::map<std::string, std::vector<std::vector<double>>> forecasts;   // forecaster -> [level][step]
  std::map<std::string, std::pair<double, double>> scores;             // forecaster -> (MASE, CRPS)
  std::string configuration() const { return dataset + "/" + frequency + "/" + term; }
};
struct EvalForecasts {
  std::string split;
  std::vector<double> levels;
  std::vector<std::string> forecasters;  // in the evaluation's order
  std::vector<EvalWindow> windows;       // in the file's order: configuration by configuration
};
// The file at `path`; an error naming the file and the line for one that is not a forecasts
// file, one of another version (naming both), or a line that is not a window.
EvalForecasts read_eval_forecasts(const std::string& path);
// A window's forecast as a snapshot draw_forecast draws: its history, actual values and the
// named forecaster's quantiles (empty when the window has none of it).
ForecastSnapshot window_snapshot(const EvalForecasts& f, const EvalWindow& w, const std::string& forecaster);

// Text a model of token ids drew after a validation: the prompt (a held-out row's start) and
// what followed it.
struct TextSample {
  int64_t step = 0;
  std::string prompt, text;
};

enum class RunStatus { running, done, interrupted, failed, stale };
const char* status_name(RunStatus s);

struct Run {
  std::string name;   // path relative to the watched folder
  std::string dir;
  // From config.json.
  Json config;
  std::string arch, head, param, optimizer;  // plugin names ("normuon+adamw" when routed)
  double lr = kNaN;                          // the first optimizer group's learning rate
  int64_t width = 0;                         // d_model
  int64_t depth = 0;                         // layers of the depth-scaled stack
  int64_t planned_steps = 0;
  uint64_t seed = 0;
  int64_t world_size = 1;                    // data-parallel processes (series_per_s is all of theirs)
  // From metrics.jsonl.
  Curve train_loss, val_loss, grad_norm, elapsed;
  // The validation loss per unit the scored steps stand for, in bits (bits per byte for text),
  // when the data carry units; `val_unit` names it ("byte").
  Curve val_bits;
  std::string val_unit;
  std::vector<TextSample> samples;  // in step order
  Curve spikes;                // (step, loss) of each loss spike
  std::vector<double> skipped;  // steps skipped for a non-finite loss or gradient
  // Per optimizer group ("normuon:hidden", "adamw:rest"); a run logged before learning rates
  // were per group has one curve, "lr".
  std::map<std::string, Curve> lr_curves, update_rms, param_rms;
  int64_t step = 0;
  double series_per_s = kNaN, eta_s = kNaN, elapsed_s = kNaN;
  // From summary.json (present once the run ended).
  bool finished = false;
  double final_loss = kNaN;
  std::string error;
  bool interrupted = false;
  std::vector<std::shared_ptr<const ForecastSnapshot>> forecasts;  // training steps, then evaluation
  std::shared_ptr<const Evaluation> eval;  // from eval.json; nullptr until one is readable
  double last_write = 0;      // newest modification time of its files (seconds since epoch)
  int bad_lines = 0;          // lines of metrics.jsonl that were not JSON
  RunStatus status(double now) const;
  double latest_loss() const;  // final loss when finished, else the latest logged loss
  // What a learning-rate sweep ranks by: the latest held-out loss when the run scores one (it
  // does not scatter with the last training batches), else latest_loss().
  double sweep_loss() const;
};

// Folds one metrics.jsonl event into the run; unknown events are ignored.
void apply_metrics_event(Run& run, const Json& event);
// Fills the config fields from config.json's content.
void apply_config(Run& run, const Json& config);
// An empty object (the summary was deleted) makes the run unfinished again.
void apply_summary(Run& run, const Json& summary);
// A forecasts.jsonl line, or evaluation.json (label "evaluation"); nullptr when it holds none.
std::shared_ptr<const ForecastSnapshot> parse_forecast_event(const Json& event);
std::shared_ptr<const ForecastSnapshot> parse_evaluation(const Json& evaluation);

// scripts/coord_check.lua's results: activation RMS per layer, width and step.
struct CoordCheck {
  std::string name;  // the experiment folder, relative to the watched folder
  double written = 0;  // the file's modification time
  std::string axis = "width";   // what varies across the columns: "width" or "depth"
  std::vector<int64_t> points;  // its values (widths, or depths at one width)
  int64_t steps = 0;
  std::string optimizer;
  struct Layer {
    std::string name;
    bool readout = false;
    std::vector<std::vector<double>> rms;     // [t][point index]
    std::vector<std::vector<double>> change;  // [t][point index]: RMS of the change since step 0
  };
  std::map<std::string, std::vector<Layer>> params;  // parametrisation -> layers
};
CoordCheck parse_coord_check(const Json& j, std::string name);

struct SearchStudy;   // study.h
struct ScalingStudy;

// Everything under one watched folder at one moment. Immutable once published.
struct Workspace {
  std::string root;
  std::vector<std::shared_ptr<const Run>> runs;  // sorted by name
  std::vector<std::shared_ptr<const CoordCheck>> coord_checks;  // oldest first
  std::vector<std::shared_ptr<const SearchStudy>> studies;      // orrery.search's study.json, oldest first
  std::vector<std::shared_ptr<const ScalingStudy>> scalings;    // scaling.lua's scaling.json, oldest first
  uint64_t version = 0;  // grows whenever anything changed
};

}  // namespace orrery::ui
