#pragma once
// STL, seasonal-trend decomposition by loess (Cleveland, Cleveland, McRae and Terpenning 1990),
// X, the way
// statsforecast's mstl() calls it for one season: seasonal window 11, seasonal degree 0, trend
// window the smallest odd number >= 1.5 m / (1 - 1.5 / 11), low-pass window the smallest odd
// number > m, both of degree 1. AutoARIMA's seasonal-difference test reads its strength.
#include <cstdint>
#include <vector>

namespace orrery::baselines {

struct StlParts {
  std::vector<double> seasonal, trend, remainder;
};

// y must be finite and at least 2m long, m >= 2.
StlParts stl(const std::vector<double>& y, int64_t m);

}  // namespace orrery::baselines
