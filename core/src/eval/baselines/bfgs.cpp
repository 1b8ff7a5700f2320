// BFGS with an Armijo backtracking line search; see bfgs.h.
#include "bfgs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace orrery::baselines {
namespace {

double finite_or_huge(double v) { return std::isfinite(v) ? v : std::numeric_limits<double>::max(); }

std::vector<double> gradient(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x,
                             double fx) {
  std::vector<double> g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double xi = x[i], h = 1.4901161193847656e-8 * std::max(1.0, std::fabs(xi));
    x[i] = xi + h;
    g[i] = (finite_or_huge(f(x)) - fx) / h;
    x[i] = xi;
  }
  return g;
}

}  // namespace

BfgsResult bfgs(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x, int max_iter,
                double gtol) {
  const size_t n = x.size();
  double fx = finite_or_huge(f(x));
  if (n == 0) return {x, fx, 0, false};
  std::vector<double> H(n * n, 0.0);  // inverse Hessian estimate, row-major
  for (size_t i = 0; i < n; ++i) H[i * n + i] = 1;
  std::vector<double> g = gradient(f, x, fx);
  for (int it = 0; it < max_iter; ++it) {
    double gmax = 0;
    for (double v : g) gmax = std::max(gmax, std::fabs(v));
    if (!std::isfinite(gmax) || gmax < gtol) return {x, fx, it, false};
    std::vector<double> dir(n, 0.0);
    double slope = 0;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) dir[i] -= H[i * n + j] * g[j];
      slope += dir[i] * g[i];
    }
    if (slope >= 0) {  // not a descent direction: restart from steepest descent
      std::fill(H.begin(), H.end(), 0.0);
      for (size_t i = 0; i < n; ++i) H[i * n + i] = 1, dir[i] = -g[i];
      slope = 0;
      for (size_t i = 0; i < n; ++i) slope -= g[i] * g[i];
    }
    double step = 1, f_new = fx;
    std::vector<double> x_new(n);
    bool lowered = false;
    for (int tries = 0; tries < 60; ++tries, step *= 0.5) {
      for (size_t i = 0; i < n; ++i) x_new[i] = x[i] + step * dir[i];
      f_new = finite_or_huge(f(x_new));
      if (f_new <= fx + 1e-4 * step * slope) {
        lowered = f_new < fx;
        break;
      }
    }
    if (!lowered) return {x, fx, it, false};
    const std::vector<double> g_new = gradient(f, x_new, f_new);
    std::vector<double> s(n), y(n), Hy(n, 0.0);
    double sy = 0;
    for (size_t i = 0; i < n; ++i) s[i] = x_new[i] - x[i], y[i] = g_new[i] - g[i], sy += s[i] * y[i];
    if (sy > 1e-12) {  // the curvature condition: only then is the update positive definite
      for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j) Hy[i] += H[i * n + j] * y[j];
      double yHy = 0;
      for (size_t i = 0; i < n; ++i) yHy += y[i] * Hy[i];
      for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j)
          H[i * n + j] += ((sy + yHy) * s[i] * s[j]) / (sy * sy) - (Hy[i] * s[j] + s[i] * Hy[j]) / sy;
    }
    x = x_new, fx = f_new, g = g_new;
  }
  return {x, fx, max_iter, true};
}

}  // namespace orrery::baselines
