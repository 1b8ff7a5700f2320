#pragma once
// Quasi-Newton minimisation with forward-difference gradients, for the smooth objectives of the
// ARIMA fits (R's arima and statsforecast use BFGS on them, 100 iterations at most). Stops when
// the gradient is below `gtol` in every coordinate, when a line search cannot lower the value,
// or after `max_iter` iterations; non-finite values count as worse than any finite one.
#include <functional>
#include <vector>

namespace orrery::baselines {

struct BfgsResult {
  std::vector<double> x;
  double value;
  int iterations;
  bool hit_limit;  // stopped by max_iter, not by convergence
};

BfgsResult bfgs(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0,
                int max_iter = 100, double gtol = 1e-8);

}  // namespace orrery::baselines
