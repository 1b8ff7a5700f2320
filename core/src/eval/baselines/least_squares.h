#pragma once
// Ordinary least squares for the baselines' small regressions (ETS's initial states, ARIMA's
// regression start and the residuals its order tests run on): the normal equations with the
// columns scaled to unit length, solved by Gaussian elimination with partial pivoting.
#include <vector>

namespace orrery::baselines {

// The coefficients of y on the columns of x over the rows where y and every column are finite.
// Empty when a column is zero there or the columns are collinear.
std::vector<double> least_squares(const std::vector<double>& y, const std::vector<std::vector<double>>& x);

}  // namespace orrery::baselines
