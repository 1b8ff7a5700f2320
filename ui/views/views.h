#pragma once
// The dashboard's views as functions of run data onto a Canvas. The live dashboard and the SVG
// report call the same functions; the dashboard adds hover read-outs from the returned frames.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../plot/plot.h"
#include "../runs/run.h"
#include "../runs/study.h"

namespace orrery::ui {

// A run and the colour it has everywhere on screen.
struct StyledRun {
  std::shared_ptr<const Run> run;
  plot::Color color;
};

// ---- loss curves ---------------------------------------------------------------------------
struct LossViewOptions {
  bool log_x = false, log_y = true;
  double smoothing = 0.6;   // TensorBoard-style debiased exponential moving average, 0 = raw
  bool time_axis = false;   // x = seconds since the run started instead of steps
  bool show_validation = true;
};
// Train (solid; the raw curve faint beneath the smoothed one) and validation (dashed, dots)
// loss over steps, with the learning rate in a strip beneath. Runs whose validation reports bits
// per unit (text: bits per byte) add a strip of those between the two. Frames: {loss, lr} or
// {loss, lr, bits}.
std::vector<plot::PlotFrame> draw_loss_view(plot::Canvas& c, plot::Rect r, std::span<const StyledRun> runs,
                                            const LossViewOptions& o);
// The debiased EMA of y with weight w.
std::vector<double> smooth(std::span<const double> y, double w);
// The x a run's point at `step` is drawn at (step or elapsed seconds).
double run_x(const Run& run, double step, bool time_axis);

// ---- text samples --------------------------------------------------------------------------
// A piece of a wrapped string: bytes [begin, end).
struct WrappedLine {
  size_t begin = 0, end = 0;
};
// `s` broken at each '\n' and wherever a line would grow wider than `width`: after a space when
// one fits, else between UTF-8 characters; every piece holds at least one character.
std::vector<WrappedLine> wrap_text(const plot::Canvas& c, std::string_view s, float width);
// Each run's text samples, newest first: the step, then the prompt (muted) and the continuation,
// wrapped to the width. Draws from the top of `r` on and returns the height it took (more than
// r.h() when it does not fit; the caller scrolls or clips).
float draw_samples(plot::Canvas& c, plot::Rect r, std::span<const StyledRun> runs);

// ---- quantile fans -------------------------------------------------------------------------
// One series of a snapshot: the context, nested central bands (10-90, 20-80, 30-70, 40-60 for
// nine levels; whatever symmetric pairs the levels hold), the median and the actual values.
// `y_range`, when given, is the value axis' range (shared with a neighbouring panel); else the
// series' own.
plot::PlotFrame draw_forecast(plot::Canvas& c, plot::Rect r, const ForecastSnapshot& snap, size_t series,
                              const std::string& title, bool legend = true, const plot::Range* y_range = nullptr);
// The values a series of a snapshot spans: its context, actual values and quantiles.
plot::Range forecast_y_range(const ForecastSnapshot& snap, size_t series);
// Two snapshots' first series side by side on one value axis (a model's fan beside a baseline's):
// the left with the legend when `legend`. Returns both panels' frames.
std::pair<plot::PlotFrame, plot::PlotFrame> draw_forecast_pair(plot::Canvas& c, plot::Rect r,
                                                               const ForecastSnapshot& left, const ForecastSnapshot& right,
                                                               const std::string& left_title,
                                                               const std::string& right_title, bool legend = true);
// Every series of a snapshot as small multiples in a grid (the legend in the first only).
void draw_forecast_grid(plot::Canvas& c, plot::Rect r, const ForecastSnapshot& snap, const std::string& title);
// The (lower, upper) level index pairs of the nested bands, outermost first.
std::vector<std::pair<size_t, size_t>> band_pairs(std::span<const double> levels);

// ---- evaluation windows (eval_forecasts.jsonl) --------------------------------------------------
// The configurations ("dataset/frequency/term") of a forecasts file, in its order, and the
// indices of one's windows.
std::vector<std::string> forecast_configurations(const EvalForecasts& f);
std::vector<size_t> configuration_windows(const EvalForecasts& f, const std::string& configuration);
// The model drawn by default (the first forecaster that is neither a baseline nor a variant such as
// NAME/regression), and the baseline beside it (ETS where scored).
std::string default_eval_model(const EvalForecasts& f);
std::string default_eval_baseline(const EvalForecasts& f);
// Windows first..first+count of a configuration as small multiples: a row per window, the model's
// fan beside the baseline's on the same context and actual values, each titled with its MASE and
// CRPS on that window.
void draw_eval_windows(plot::Canvas& c, plot::Rect r, const EvalForecasts& f, const std::string& configuration,
                       const std::string& model, const std::string& baseline, size_t first = 0, size_t count = 8);

// ---- learning-rate transfer ----------------------------------------------------------------
struct SweepPoint {
  double log2_lr = 0;
  double loss = kNaN;        // mean over the finished, finite runs at this rate
  std::vector<double> losses;
  std::vector<uint64_t> seeds;  // the seed of each of `losses`
  int running = 0, diverged = 0;
};
struct SweepCurve {
  int64_t width = 0, depth = 0;
  std::vector<SweepPoint> points;  // by log2_lr
  double best_log2_lr = kNaN, fitted_log2_lr = kNaN, best_loss = kNaN;
  std::map<uint64_t, double> seed_optima;  // each seed's own fitted optimum
};
// How far the optimum moves from the panel's first curve to its last (by width, or by depth when
// the width is the same throughout): from the mean curves and from each seed's own fits.
struct SweepShift {
  bool along_depth = false;
  int64_t from = 0, to = 0;
  double octaves = kNaN, seeds_lo = kNaN, seeds_hi = kNaN;
};
struct SweepPanel {
  std::string param, optimizer;
  std::vector<SweepCurve> curves;  // by width, then depth
  SweepShift shift;
};
// Groups runs by (parametrisation with its options, optimizer) and by (width, depth) (groups with
// a single learning rate are dropped when others span several), averaging the final loss of runs
// at the same learning rate (seeds). A running run counts with its latest loss until it ends.
// The optimum of a curve is its best mean, refined by the vertex of a parabola through the
// points within an octave of it (as scripts/lr_transfer.lua does); each seed is fitted alone too.
std::vector<SweepPanel> group_sweep(std::span<const std::shared_ptr<const Run>> runs);
// Whether a panel spans learning rates: some width has runs at two or more.
bool is_sweep(const SweepPanel& panel);
double parabola_vertex(std::span<const double> x, std::span<const double> y, double fallback);
// The best (x, y) of a loss curve (finite points only) and the parabola's refinement of it.
struct CurveOptimum { double best_x = kNaN, best_y = kNaN, fitted = kNaN; };
CurveOptimum curve_optimum(std::span<const double> x, std::span<const double> y);
// Final loss against log2 lr, one curve per width, one panel per parametrisation (each with its
// own x range), sharing the y axis; the optimum of each width marked. Returns the panels' frames.
std::vector<plot::PlotFrame> draw_lr_transfer(plot::Canvas& c, plot::Rect r, std::span<const SweepPanel> panels);

// ---- diagnostics ---------------------------------------------------------------------------
// Activation RMS against width for every layer at step t, one panel per parametrisation.
std::vector<plot::PlotFrame> draw_coord_check(plot::Canvas& c, plot::Rect r, const CoordCheck& cc, int64_t t);
// Update RMS per optimizer group (top) and the gradient norm (bottom) of the runs.
std::vector<plot::PlotFrame> draw_optimizer_view(plot::Canvas& c, plot::Rect r, std::span<const StyledRun> runs,
                                                 bool log_y = true);

// ---- evaluation (eval.json) ----------------------------------------------------------------
enum class EvalMetric { crps, mase };
struct EvalViewOptions {
  EvalMetric metric = EvalMetric::crps;
};
// A model of the merged table and how it is drawn.
struct EvalModel {
  std::string label;  // its name, or "run: name" when two runs have a model of that name
  std::string run, name;
  bool baseline = false;  // one of `orrery eval`'s classical baselines
  plot::Color color;      // by name: the same wherever the model appears
  plot::Marker marker = plot::Marker::circle;  // tells apart runs that share a model name
  EvalModelSummary summary;  // geometric means of its ratios
};
struct EvalTableRow {
  std::string label;              // dataset/frequency/term
  std::vector<EvalScores> cells;  // one per model; NaN where the model has no result
};
// Every model of every run's evaluation against the union of their configurations.
struct EvalTable {
  std::string title;              // "GIFT-Eval, short term"
  std::vector<EvalModel> models;  // Orrery models first, then baselines
  std::vector<EvalTableRow> rows; // configurations in the order first seen
};
// Runs (in their order) without an evaluation are skipped.
EvalTable merge_evaluations(std::span<const std::shared_ptr<const Run>> runs);
bool is_eval_baseline(const std::string& model);
// Baselines get muted colours, Orrery models strong ones; `probe` > 0 picks the next strong
// colour when another model of the table already has this one.
plot::Color eval_model_color(const std::string& model, bool baseline, size_t probe = 0);
double eval_ratio(const EvalScores& s, EvalMetric m);
double eval_raw(const EvalScores& s, EvalMetric m);
// The data y of model k's dot in row `row` (rows.size() = the geometric-mean row): rows go down
// the plot, the models of a row a little apart so equal ratios stay visible.
double eval_dot_y(const EvalTable& t, size_t row, size_t model);
// The height the view needs with `pitch` pixels a row (for scrolling and for SVG pages).
float eval_view_height(const plot::Canvas& c, const EvalTable& t, float pitch);
// The pixel of a model's dot in a row (an outlier on the axis' edge); none without a ratio.
std::optional<plot::Vec2> eval_dot(const EvalTable& t, const plot::PlotFrame& f, size_t row, size_t model, EvalMetric m);
// The dot under the mouse (within a few pixels), if any.
struct EvalHit {
  size_t row = 0, model = 0;  // row == rows.size(): the geometric mean
};
std::optional<EvalHit> eval_hit(const EvalTable& t, const plot::PlotFrame& f, plot::Vec2 mouse, EvalMetric m);
// The rows ordered by `model`'s metric over `baseline`'s, worst (highest) first, so the data sets
// where the model trails most are at the top; rows without both keep their order at the end.
void sort_eval_rows(EvalTable& t, size_t model, size_t baseline, EvalMetric m);
// One row per configuration and a final geometric-mean row set apart, a dot per model at its
// ratio to seasonal naive on a log x axis, a dashed rule at 1, a legend with each model's
// geometric mean beside the plot. Rows are at most a comfortable height; the rest of `r` stays
// empty. Frames: {the plot}.
std::vector<plot::PlotFrame> draw_eval_view(plot::Canvas& c, plot::Rect r, const EvalTable& t,
                                            const EvalViewOptions& o);

// ---- hyper-parameter search (study.json) ----------------------------------------------------
// Where a trial is drawn: a complete trial's value, a pruned or running one's last report; NaN
// for a failed trial or one that reported nothing.
double study_trial_y(const StudyTrial& t);
// The best complete value up to each trial (NaN before the first).
std::vector<double> best_so_far(const SearchStudy& s);
// Top: the objective by trial (pruned trials crosses, running ones rings, the best large) with
// the best so far, and each dimension's main-effect importance as bars; below: the objective
// against every dimension (a simplex's components each), sharing the y axis. Frames: {by trial,
// importance, one per dimension}.
std::vector<plot::PlotFrame> draw_search_view(plot::Canvas& c, plot::Rect r, const SearchStudy& s);

// ---- scaling (scaling.json) ------------------------------------------------------------------
// Left: held-out loss against parameters (log-log), each size's full budget large (the held-out
// largest a ring), its shorter budgets faint, the L(N) fit with its 90% bootstrap band and the fit
// without the largest size dashed; right: every budget against compute 6ND, coloured by size, with
// the joint law along each size's budgets. Frames: {by parameters, by compute}.
std::vector<plot::PlotFrame> draw_scaling_view(plot::Canvas& c, plot::Rect r, const ScalingStudy& s);

// Splits r into n columns (or rows) with a gap.
std::vector<plot::Rect> split_columns(plot::Rect r, size_t n, float gap = 12);
std::vector<plot::Rect> split_rows(plot::Rect r, std::span<const float> weights, float gap = 8);

}  // namespace orrery::ui
