#include "nelder_mead.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common.h"

namespace orrery::baselines {
namespace {

using Point = std::vector<double>;

Point clamp_into(Point x, const Point& lower, const Point& upper) {
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::min(std::max(x[i], lower[i]), upper[i]);
  return x;
}

// x_o + t (x - x_o), the line through the centroid that every move lies on.
Point along(const Point& x_o, const Point& x, double t) {
  Point p(x.size());
  for (size_t i = 0; i < x.size(); ++i) p[i] = x_o[i] + t * (x[i] - x_o[i]);
  return p;
}

double population_sd(const std::vector<double>& v) {
  return std::sqrt(squared_deviations(v) / static_cast<double>(v.size()));
}

}  // namespace

Minimum nelder_mead(const std::function<double(const std::vector<double>&)>& f, Point x0,
                    const Point& lower, const Point& upper, double tol_std, int max_iter) {
  const size_t d = x0.size();
  // A NaN objective is treated as the worst possible value, so such a point is never kept.
  auto value = [&](const Point& x) {
    const double v = f(x);
    return std::isnan(v) ? std::numeric_limits<double>::infinity() : v;
  };
  const double dd = static_cast<double>(d);
  const double expand = 1 + 2 / dd, contract = 0.75 - 1 / (2 * dd), shrink = 1 - 1 / dd;

  std::vector<Point> simplex(d + 1, clamp_into(std::move(x0), lower, upper));
  for (size_t i = 0; i < d; ++i) {
    double& v = simplex[i][i];
    v = v == 0 ? 1e-4 : v * 1.05;
    v = std::min(std::max(v, lower[i]), upper[i]);
  }
  std::vector<double> fs(d + 1);
  for (size_t i = 0; i <= d; ++i) fs[i] = value(simplex[i]);

  std::vector<size_t> order(d + 1);
  size_t best = 0;  // as of the last ordering: after running out of iterations, one move stale
  int it = 0;
  for (; it < max_iter; ++it) {
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return fs[a] < fs[b]; });
    best = order[0];
    if (population_sd(fs) < tol_std) break;
    const size_t worst = order[d], second = order[d - 1];

    // Centroid of all vertices but the worst (summed over all, the worst taken out).
    Point x_o(d, 0.0);
    for (const Point& p : simplex)
      for (size_t i = 0; i < d; ++i) x_o[i] += p[i];
    for (size_t i = 0; i < d; ++i) x_o[i] = (x_o[i] - simplex[worst][i]) / dd;

    auto replace_worst = [&](Point p, double v) { simplex[worst] = std::move(p), fs[worst] = v; };
    const Point x_r = clamp_into(along(x_o, simplex[worst], -1.0), lower, upper);
    const double f_r = value(x_r);
    if (fs[best] <= f_r && f_r < fs[second]) {
      replace_worst(x_r, f_r);
      continue;
    }
    if (f_r < fs[best]) {  // the reflection is the best so far: try going further
      Point x_e = clamp_into(along(x_o, x_r, expand), lower, upper);
      const double f_e = value(x_e);
      if (f_e < f_r) replace_worst(std::move(x_e), f_e);
      else replace_worst(x_r, f_r);
      continue;
    }
    if (fs[second] <= f_r && f_r < fs[worst]) {  // outside contraction
      Point x_c = clamp_into(along(x_o, x_r, contract), lower, upper);
      const double f_c = value(x_c);
      if (f_c <= f_r) {
        replace_worst(std::move(x_c), f_c);
        continue;
      }
    } else {  // inside contraction
      Point x_c = clamp_into(along(x_o, x_r, -contract), lower, upper);
      const double f_c = value(x_c);
      if (f_c < fs[worst]) {
        replace_worst(std::move(x_c), f_c);
        continue;
      }
    }
    const Point anchor = simplex[best];
    for (size_t j = 1; j <= d; ++j) {
      simplex[j] = clamp_into(along(anchor, simplex[j], shrink), lower, upper);
      fs[j] = value(simplex[j]);
    }
  }
  return {simplex[best], fs[best], it + 1};
}

}  // namespace orrery::baselines
