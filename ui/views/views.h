#pragma once
// The dashboard's views as functions of run data onto a Canvas. The live dashboard and the SVG
// report call the same functions; the dashboard adds hover read-outs from the returned frames.
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "../plot/plot.h"
#include "../runs/run.h"

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
// loss over steps, with the learning rate in a strip beneath. Frames: {loss, lr}.
std::vector<plot::PlotFrame> draw_loss_view(plot::Canvas& c, plot::Rect r, std::span<const StyledRun> runs,
                                            const LossViewOptions& o);
// The debiased EMA of y with weight w.
std::vector<double> smooth(std::span<const double> y, double w);
// The x a run's point at `step` is drawn at (step or elapsed seconds).
double run_x(const Run& run, double step, bool time_axis);

// ---- quantile fans -------------------------------------------------------------------------
// One series of a snapshot: the context, nested central bands (10-90, 20-80, 30-70, 40-60 for
// nine levels; whatever symmetric pairs the levels hold), the median and the actual values.
plot::PlotFrame draw_forecast(plot::Canvas& c, plot::Rect r, const ForecastSnapshot& snap, size_t series,
                              const std::string& title, bool legend = true);
// Every series of a snapshot as small multiples in a grid (the legend in the first only).
void draw_forecast_grid(plot::Canvas& c, plot::Rect r, const ForecastSnapshot& snap, const std::string& title);
// The (lower, upper) level index pairs of the nested bands, outermost first.
std::vector<std::pair<size_t, size_t>> band_pairs(std::span<const double> levels);

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

// Splits r into n columns (or rows) with a gap.
std::vector<plot::Rect> split_columns(plot::Rect r, size_t n, float gap = 12);
std::vector<plot::Rect> split_rows(plot::Rect r, std::span<const float> weights, float gap = 8);

}  // namespace orrery::ui
