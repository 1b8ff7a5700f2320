#pragma once
// The Box-Cox transform of a positive series (Box and Cox 1964), with its exponent chosen by
// Guerrero's method (Guerrero 1993, as R's forecast::BoxCox.lambda does by default): forecast the
// transformed series, then map every quantile back. The map is increasing, so a quantile of the
// transformed forecast maps to the same quantile of the series' forecast, exactly. What it is
// for: a series whose swings grow with its level (a multiplicative season, a growth rate) becomes
// one whose swings are steady, the shape an additive forecaster reads.
#include <cstdint>
#include <vector>

namespace orrery {

// (y^lambda - 1) / lambda, and log y at lambda = 0; y > 0. NaN stays NaN.
double box_cox(double y, double lambda);
// Its inverse: (lambda z + 1)^(1/lambda), exp z at lambda = 0; 0 where lambda z + 1 <= 0 (below
// the transform's range: the series' own floor).
double inverse_box_cox(double z, double lambda);

// Guerrero's exponent in [0, 1] (log to none): the lambda that makes the spread of each block of
// `period` steps (the season; 2 without one) most nearly proportional to its mean^(1 - lambda),
// i.e. minimises the coefficient of variation of sd_i / mean_i^(1 - lambda) over the blocks,
// counted back from the last step. 1 (no transform) when a finite value is <= 0 or fewer than
// three blocks hold two finite values each (the relation needs that many). NaN marks a gap.
double guerrero_lambda(const std::vector<double>& y, int64_t period);

}  // namespace orrery
