#pragma once
// What the dashboard reads of the two section-4 experiments: a hyper-parameter study
// (study.json, which orrery.search rewrites after every change to its journal) and a scaling
// study (scaling.json, written by scripts/scaling.lua). Plain values only.
#include <cstdint>
#include <string>
#include <vector>

#include "run.h"

namespace orrery::ui {

// One dimension of a study's space as plotted: a number (log-scaled or not) or a choice.
// A simplex shows as one numeric dimension per component ("mix.gp").
struct StudyDimension {
  std::string name;
  bool categorical = false, log = false;
  double low = kNaN, high = kNaN;
  std::vector<std::string> choices;  // a categorical's choices, as text
};

struct StudyTrial {
  int64_t number = 0;
  std::string state;  // running, complete, pruned, failed
  double value = kNaN;
  bool lost = false;  // failed because its worker died
  std::vector<double> values;             // per StudyDimension: the number, the choice's index, or NaN
  std::vector<std::string> texts;         // per StudyDimension: the value as text ("" when inactive)
  std::vector<std::pair<double, double>> intermediate;  // (step, value)
};

struct SearchStudy {
  std::string name;     // the study folder, relative to the watched folder
  std::string title;    // the study's own name
  double written = 0;   // study.json's modification time
  bool maximize = false;
  std::vector<StudyDimension> dims;
  std::vector<StudyTrial> trials;  // by number
  int64_t best = -1;               // the best complete trial's number, -1 when none is complete
};
// Throws (for the watcher to skip the file) when `j` is not a study.json.
SearchStudy parse_study(const Json& j, std::string name);

// The share of the objective's variance each dimension explains alone, over the complete trials:
// a first-order (main-effect) importance, the term fANOVA estimates first, here from bins of the
// dimension (its choices, or up to five quantile bins of a number) rather than from a forest:
// sum over bins of n_b (mean_b - mean)^2 / sum of (y - mean)^2. 0 for a dimension that never
// varies; NaN with fewer than 4 complete trials. One value per StudyDimension.
std::vector<double> main_effect_importance(const SearchStudy& s);

// scaling.json: the runs' points and both fitted laws with their bootstrap fits.
struct ScalingPoint {
  double params = kNaN, tokens = kNaN, loss = kNaN;
  int64_t budget = 0;  // steps
  std::string run;     // the size (shape label) whose run it came from
};
struct ScalingLaw {
  std::string law;  // "size" or "joint"
  double E = kNaN, A = kNaN, alpha = kNaN, B = kNaN, beta = kNaN;
  double alpha_lo = kNaN, alpha_hi = kNaN, beta_lo = kNaN, beta_hi = kNaN;
  struct Fit { double E, A, alpha, B, beta; };
  std::vector<Fit> bootstrap;  // for the interval band
  double holdout_error = kNaN;
  std::vector<Fit> holdout;    // the law fitted without the largest size (one fit), if any
  double predict(double n, double d) const { return predict(Fit{E, A, alpha, B, beta}, n, d); }
  static double predict(const Fit& f, double n, double d);
};
struct ScalingStudy {
  std::string name;  // the folder, relative to the watched folder
  double written = 0;
  std::vector<ScalingPoint> points;
  std::vector<std::string> sizes;  // the shape labels, smallest first; the last is held out
  ScalingLaw size, joint;
  double points_per_param = kNaN;
};
ScalingStudy parse_scaling(const Json& j, std::string name);

}  // namespace orrery::ui
