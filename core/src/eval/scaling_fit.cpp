#include "orrery/host/scaling_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "baselines/nelder_mead.h"
#include "orrery/error.h"
#include "orrery/host/bootstrap.h"
#include "orrery/host/search/parzen_estimator.h"

namespace orrery::scaling {
namespace {

// Non-negative least squares for y ~ X c with few columns (2 or 3): the best unconstrained fit
// over every subset of columns whose solution is non-negative (exact: the optimum of a convex
// problem is the unconstrained optimum on its support).
std::vector<double> nnls(const std::vector<std::vector<double>>& X, const std::vector<double>& y, double* rss_out) {
  const size_t k = X.front().size(), n = y.size();
  std::vector<double> best(k, 0.0);
  double best_rss = 0;
  for (double v : y) best_rss += v * v;  // the empty support
  // The full support first: when its solution is non-negative it is the answer (the usual case).
  const unsigned full = (1u << k) - 1;
  for (unsigned step = 0; step < (1u << k); ++step) {
    const unsigned mask = step == 0 ? full : step;
    if (step == full) continue;  // done first
    std::vector<size_t> cols;
    for (size_t j = 0; j < k; ++j)
      if (mask & (1u << j)) cols.push_back(j);
    const size_t m = cols.size();
    // Normal equations (m <= 3), solved by Gaussian elimination with partial pivoting.
    std::vector<std::vector<double>> a(m, std::vector<double>(m + 1, 0.0));
    for (size_t i = 0; i < n; ++i)
      for (size_t r = 0; r < m; ++r) {
        for (size_t c = 0; c < m; ++c) a[r][c] += X[i][cols[r]] * X[i][cols[c]];
        a[r][m] += X[i][cols[r]] * y[i];
      }
    bool singular = false;
    for (size_t c = 0; c < m && !singular; ++c) {
      size_t p = c;
      for (size_t r = c + 1; r < m; ++r)
        if (std::abs(a[r][c]) > std::abs(a[p][c])) p = r;
      std::swap(a[c], a[p]);
      if (std::abs(a[c][c]) < 1e-300) singular = true;
      for (size_t r = 0; r < m && !singular; ++r) {
        if (r == c) continue;
        const double f = a[r][c] / a[c][c];
        for (size_t q = c; q <= m; ++q) a[r][q] -= f * a[c][q];
      }
    }
    if (singular) continue;
    std::vector<double> coef(k, 0.0);
    bool feasible = true;
    for (size_t r = 0; r < m; ++r) {
      coef[cols[r]] = a[r][m] / a[r][r];
      feasible = feasible && coef[cols[r]] >= 0;
    }
    if (!feasible) continue;
    double rss = 0;
    for (size_t i = 0; i < n; ++i) {
      double f = 0;
      for (size_t j = 0; j < k; ++j) f += X[i][j] * coef[j];
      rss += (y[i] - f) * (y[i] - f);
    }
    if (rss < best_rss) best_rss = rss, best = coef;
    if (mask == full) break;  // non-negative on the full support: nothing smaller can fit better
  }
  *rss_out = best_rss;
  return best;
}

// The best linear coefficients (E, A[, B]) and their residual sum of squares at fixed exponents.
Law project(const std::vector<Point>& pts, bool joint, double alpha, double beta) {
  std::vector<std::vector<double>> X;
  std::vector<double> y;
  for (const Point& p : pts) {
    std::vector<double> row = {1.0, std::exp(-alpha * std::log(p.params))};
    if (joint) row.push_back(std::exp(-beta * std::log(p.tokens)));
    X.push_back(row);
    y.push_back(p.loss);
  }
  Law law;
  law.joint = joint, law.alpha = alpha, law.beta = joint ? beta : 0;
  const auto c = nnls(X, y, &law.rss);
  law.E = c[0], law.A = c[1], law.B = joint ? c[2] : 0;
  return law;
}

void check_points(const std::vector<Point>& pts, bool joint) {
  std::set<double> sizes, budgets;
  for (const Point& p : pts) {
    if (!(p.params > 0) || !std::isfinite(p.params)) throw Error("a scaling point needs params > 0, got " + std::to_string(p.params));
    if (joint && (!(p.tokens > 0) || !std::isfinite(p.tokens)))
      throw Error("a joint fit needs tokens > 0 at every point, got " + std::to_string(p.tokens));
    if (!std::isfinite(p.loss)) throw Error("a scaling point's loss must be a finite number");
    if (!(p.loss > 0)) {
      std::ostringstream text;
      text << "a power law in loss needs losses above 0, but the point at params " << p.params << " has loss "
           << p.loss << " (fit a loss, such as cross-entropy or CRPS, not a gain or a difference)";
      throw Error(text.str());
    }
    sizes.insert(p.params), budgets.insert(p.tokens);
  }
  if (sizes.size() < 3) throw Error("a scaling law needs at least 3 model sizes, got " + std::to_string(sizes.size()));
  if (joint && budgets.size() < 3)
    throw Error("a joint law needs at least 3 data budgets, got " + std::to_string(budgets.size()));
  if (pts.size() < (joint ? 5u : 3u)) throw Error("too few points for the law's parameters");
}

std::string number_text(double v) {
  std::ostringstream text;
  text << v;
  return text.str();
}

}  // namespace

double Law::predict(double params, double tokens) const {
  return E + A * std::pow(params, -alpha) + (joint ? B * std::pow(tokens, -beta) : 0.0);
}

Law fit(const std::vector<Point>& pts, bool joint) {
  check_points(pts, joint);
  // A grid of exponents in (0, 2], then Nelder-Mead from its best cell.
  Law best;
  best.rss = std::numeric_limits<double>::infinity();
  const double step = joint ? 0.05 : 0.01;
  for (double a = step; a <= 2.0 + 1e-9; a += step)
    for (double b = joint ? step : 0; b <= (joint ? 2.0 + 1e-9 : 0); b += joint ? step : 1) {
      Law l = project(pts, joint, a, b);
      if (l.rss < best.rss) best = l;
    }
  auto rss = [&](const std::vector<double>& x) { return project(pts, joint, x[0], joint ? x[1] : 0).rss; };
  std::vector<double> x0 = {best.alpha}, lo = {1e-4}, hi = {4.0};
  if (joint) x0.push_back(best.beta), lo.push_back(1e-4), hi.push_back(4.0);
  const auto m = baselines::nelder_mead(rss, x0, lo, hi, 1e-10 * std::max(best.rss, 1e-300), 400);
  Law refined = project(pts, joint, m.x[0], joint ? m.x[1] : 0);
  return refined.rss <= best.rss ? refined : best;
}

FitReport fit_with_intervals(const std::vector<Point>& pts, bool joint, size_t bootstrap, uint64_t seed,
                             bool hold_out_largest, const Interrupt* interrupt) {
  FitReport report;
  report.law = fit(pts, joint);
  if (report.law.A == 0 && (!joint || report.law.B == 0))
    report.warning = "the loss does not fall with size over these points (the best law is flat: E = " +
                     number_text(report.law.E) + " at every size), so the law predicts nothing";
  else if (report.law.A == 0)
    report.warning = "the loss does not fall with model size over these points (A = 0): the law's size term "
                     "predicts nothing";
  else if (joint && report.law.B == 0)
    report.warning = "the loss does not fall with data over these points (B = 0): the law's data term predicts "
                     "nothing";
  // Runs: a run's points travel together through the resampling.
  std::map<std::string, std::vector<size_t>> runs;
  for (size_t i = 0; i < pts.size(); ++i) {
    std::string key = pts[i].run;
    if (key.empty()) key.append("#").append(std::to_string(i));  // appended: GCC 12 warns falsely on "#" + s
    runs[key].push_back(i);
  }
  std::vector<std::vector<size_t>> groups;
  for (auto& [name, idx] : runs) groups.push_back(idx);
  search::Rng rng(seed);
  std::map<std::string, std::vector<double>> draws;
  for (size_t b = 0; b < bootstrap; ++b) {
    check_interrupt(interrupt);  // a fit takes about a millisecond; a million of them, minutes
    std::vector<Point> sample;
    for (size_t g = 0; g < groups.size(); ++g) {
      const auto& pick = groups[static_cast<size_t>(rng.uniform() * static_cast<double>(groups.size())) % groups.size()];
      for (size_t i : pick) sample.push_back(pts[i]);
    }
    try {
      const Law l = fit(sample, joint);
      draws["E"].push_back(l.E), draws["A"].push_back(l.A), draws["alpha"].push_back(l.alpha);
      if (joint) draws["B"].push_back(l.B), draws["beta"].push_back(l.beta);
      ++report.bootstrap_fits;
      report.bootstrap_laws.push_back(l);
    } catch (const Error&) {
      // a resample with too few sizes says nothing about the law: skipped, and counted
    }
  }
  for (auto& [name, v] : draws) {
    std::sort(v.begin(), v.end());
    report.intervals[name] = {orrery::bootstrap::quantile(v, 0.05), orrery::bootstrap::quantile(v, 0.95)};
  }
  if (hold_out_largest) {
    double largest = 0;
    for (const Point& p : pts) largest = std::max(largest, p.params);
    std::vector<Point> rest, held;
    for (const Point& p : pts) (p.params == largest ? held : rest).push_back(p);
    try {
      const Law l = fit(rest, joint);
      double err = 0;
      for (const Point& p : held) err += std::abs(l.predict(p.params, p.tokens) - p.loss) / std::abs(p.loss);
      report.holdout_error = err / static_cast<double>(held.size());
      report.holdout_law = l;
    } catch (const Error&) {
      // too few sizes without the largest: no extrapolation check
    }
  }
  return report;
}

}  // namespace orrery::scaling
