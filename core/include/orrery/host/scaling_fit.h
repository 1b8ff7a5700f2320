#pragma once
// Scaling laws fitted to measured losses: L(N) = E + A N^-alpha over model sizes, and
// Chinchilla's approach 3, L(N, D) = E + A N^-alpha + B D^-beta, over sizes and data. Both by
// variable projection (the law is linear in E, A, B once the exponents are fixed: non-negative
// least squares for those inside a search over the exponents, a grid then Nelder-Mead), which
// has none of the local minima a five-parameter fit hunts through. Intervals come from a
// bootstrap over runs (a run's points, e.g. the branched decays of one WSD run, are resampled
// together), and the law can be checked by fitting without the largest size and predicting it.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orrery/interrupt.h"

namespace orrery::scaling {

struct Point {
  double params = 0;  // N
  double tokens = 0;  // D (0 when fitting L(N) alone)
  double loss = 0;
  std::string run;    // points of one run are resampled together; empty: each point its own run
};

struct Law {
  bool joint = false;  // L(N, D) rather than L(N)
  double E = 0, A = 0, alpha = 0, B = 0, beta = 0;
  double rss = 0;      // residual sum of squares of the fit
  double predict(double params, double tokens = 0) const;
};

// Throws orrery::Error when the points cannot determine the law (too few, non-positive N or D,
// non-finite or non-positive losses, a single size).
Law fit(const std::vector<Point>& points, bool joint);

struct Interval {
  double lo = 0, hi = 0;
};

struct FitReport {
  Law law;
  std::map<std::string, Interval> intervals;  // 90% bootstrap interval of E, A, alpha (B, beta)
  size_t bootstrap_fits = 0;                  // resamples that could be fitted
  std::vector<Law> bootstrap_laws;            // their laws (a plot's interval band)
  // Fitted without the largest size, the largest size's points predicted (mean relative error).
  std::optional<double> holdout_error;
  std::optional<Law> holdout_law;
  // Set when the fit says nothing: a loss that does not fall with size (flat, or rising) leaves A
  // (and B) at 0, the law a constant.
  std::string warning;
};

// `interrupt` is checked before every resample.
FitReport fit_with_intervals(const std::vector<Point>& points, bool joint, size_t bootstrap = 1000,
                             uint64_t seed = 0, bool hold_out_largest = true, const Interrupt* interrupt = nullptr);

}  // namespace orrery::scaling
