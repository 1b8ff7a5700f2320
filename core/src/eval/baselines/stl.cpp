// See stl.h. The loess pieces follow the published algorithm (stlest, stless, stlss, stlfts of the
// original Fortran), 1-based positions as there.
#include "stl.h"

#include <algorithm>
#include <cmath>

namespace orrery::baselines {
namespace {

// The loess estimate at position xs (1-based) from y[nleft..nright] (1-based, inclusive) with
// span len and degree 0 or 1; false when every weight is zero.
bool estimate(const std::vector<double>& y, int64_t n, int64_t len, int degree, double xs, double& ys,
              int64_t nleft, int64_t nright) {
  const double range = static_cast<double>(n) - 1;
  double h = std::max(xs - static_cast<double>(nleft), static_cast<double>(nright) - xs);
  if (len > n) h += static_cast<double>((len - n) / 2);
  const double h9 = 0.999 * h, h1 = 0.001 * h;
  std::vector<double> w(static_cast<size_t>(nright - nleft + 1), 0.0);
  double a = 0;
  for (int64_t j = nleft; j <= nright; ++j) {
    const double r = std::fabs(static_cast<double>(j) - xs);
    double& wj = w[static_cast<size_t>(j - nleft)];
    if (r <= h9) wj = r <= h1 ? 1.0 : std::pow(1 - std::pow(r / h, 3), 3);
    a += wj;
  }
  if (a <= 0) return false;
  for (double& wj : w) wj /= a;
  if (h > 0 && degree > 0) {
    double mean = 0, c = 0;
    for (int64_t j = nleft; j <= nright; ++j) mean += w[static_cast<size_t>(j - nleft)] * static_cast<double>(j);
    for (int64_t j = nleft; j <= nright; ++j)
      c += w[static_cast<size_t>(j - nleft)] * std::pow(static_cast<double>(j) - mean, 2);
    if (std::sqrt(c) > 0.001 * range) {
      const double b = (xs - mean) / c;
      for (int64_t j = nleft; j <= nright; ++j) w[static_cast<size_t>(j - nleft)] *= b * (static_cast<double>(j) - mean) + 1;
    }
  }
  ys = 0;
  for (int64_t j = nleft; j <= nright; ++j) ys += w[static_cast<size_t>(j - nleft)] * y[static_cast<size_t>(j - 1)];
  return true;
}

// Loess smoothing of the whole series at every position, the window sliding with it.
std::vector<double> smooth(const std::vector<double>& y, int64_t len, int degree) {
  const int64_t n = static_cast<int64_t>(y.size());
  std::vector<double> out(y.size());
  if (n < 2) return y;
  int64_t nleft = 1, nright = std::min(len, n);
  const int64_t half = (len + 1) / 2;
  for (int64_t i = 1; i <= n; ++i) {
    if (len < n && i > half && nright != n) ++nleft, ++nright;
    double v;
    out[static_cast<size_t>(i - 1)] = estimate(y, n, len, degree, static_cast<double>(i), v, nleft, nright) ? v : y[static_cast<size_t>(i - 1)];
  }
  return out;
}

std::vector<double> moving_average(const std::vector<double>& x, size_t len) {
  std::vector<double> out;
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sum += x[i];
    if (i >= len) sum -= x[i - len];
    if (i + 1 >= len) out.push_back(sum / static_cast<double>(len));
  }
  return out;
}

int64_t odd_at_least(double v) {
  int64_t k = static_cast<int64_t>(std::ceil(v));
  return k % 2 ? k : k + 1;
}

}  // namespace

StlParts stl(const std::vector<double>& y, int64_t m) {
  const int64_t n = static_cast<int64_t>(y.size()), ns = 11, degree_s = 0;
  const int64_t nt = odd_at_least(1.5 * static_cast<double>(m) / (1 - 1.5 / static_cast<double>(ns)));
  const int64_t nl = odd_at_least(static_cast<double>(m) + 1);
  StlParts p{std::vector<double>(y.size(), 0.0), std::vector<double>(y.size(), 0.0), {}};
  for (int pass = 0; pass < 5; ++pass) {
    // Cycle-subseries: each phase's values, detrended, smoothed and extended a step each way.
    std::vector<double> cycle(static_cast<size_t>(n + 2 * m), 0.0);
    for (int64_t j = 0; j < m; ++j) {
      std::vector<double> sub;
      for (int64_t t = j; t < n; t += m) sub.push_back(y[static_cast<size_t>(t)] - p.trend[static_cast<size_t>(t)]);
      const int64_t k = static_cast<int64_t>(sub.size());
      std::vector<double> s(static_cast<size_t>(k + 2));
      const std::vector<double> inner = smooth(sub, ns, degree_s);
      std::copy(inner.begin(), inner.end(), s.begin() + 1);
      double v;
      s[0] = estimate(sub, k, ns, degree_s, 0.0, v, 1, std::min(ns, k)) ? v : s[1];
      s[static_cast<size_t>(k + 1)] =
          estimate(sub, k, ns, degree_s, static_cast<double>(k + 1), v, std::max<int64_t>(1, k - ns + 1), k) ? v : s[static_cast<size_t>(k)];
      for (int64_t i = 0; i < k + 2; ++i) cycle[static_cast<size_t>(i * m + j)] = s[static_cast<size_t>(i)];
    }
    // Low-pass: moving averages of m, m and 3, then loess; what is left is the season.
    const std::vector<double> low = smooth(moving_average(moving_average(moving_average(cycle, static_cast<size_t>(m)),
                                                                         static_cast<size_t>(m)), 3), nl, 1);
    std::vector<double> deseasoned(y.size());
    for (size_t t = 0; t < y.size(); ++t) {
      p.seasonal[t] = cycle[t + static_cast<size_t>(m)] - low[t];
      deseasoned[t] = y[t] - p.seasonal[t];
    }
    p.trend = smooth(deseasoned, nt, 1);
  }
  p.remainder.resize(y.size());
  for (size_t t = 0; t < y.size(); ++t) p.remainder[t] = y[t] - p.seasonal[t] - p.trend[t];
  return p;
}

}  // namespace orrery::baselines
