#pragma once
// A box-bounded Nelder-Mead minimiser with the conventions statsforecast fits Theta and ETS
// with, so that our fits stop where its fits stop (its ETS fits usually run out of iterations
// rather than converge, so the stopping point shows in the forecasts):
//   - adaptive coefficients for dimension d (Gao and Han 2012): reflection 1, expansion
//     1 + 2/d, contraction 0.75 - 1/(2d), shrink 1 - 1/d;
//   - the start simplex is x0 and, for each coordinate i, x0 with x_i scaled by 1.05
//     (1e-4 when x_i = 0); every trial point is clamped into [lower, upper];
//   - stop when the population standard deviation of the simplex's values drops below
//     `tol_std`, or after `max_iter` iterations;
//   - a shrink moves vertices 1..d towards the best one, leaving vertex 0 in place;
//   - the simplex is ordered at the start of every iteration, before the stopping test, and the
//     answer is the vertex that was best at the last ordering (so after max_iter iterations it
//     ignores the last move, as statsforecast's does).
#include <functional>
#include <vector>

namespace orrery::baselines {

struct Minimum {
  std::vector<double> x;
  double value;
  int iterations;
};

Minimum nelder_mead(const std::function<double(const std::vector<double>&)>& f,
                    std::vector<double> x0, const std::vector<double>& lower,
                    const std::vector<double>& upper, double tol_std = 1e-4, int max_iter = 1000);

}  // namespace orrery::baselines
