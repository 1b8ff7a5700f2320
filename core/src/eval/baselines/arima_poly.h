#pragma once
// Autoregressive polynomials in partial-autocorrelation coordinates (Jones 1980, as R's arima
// keeps its AR estimates stationary): each PACF value is tanh of a free number, and the
// Durbin-Levinson recursion turns PACF values into AR coefficients and back.
#include <vector>

namespace orrery::baselines {

// AR coefficients from free numbers: pacf_k = tanh(raw_k), then Durbin-Levinson.
std::vector<double> from_pacf(const std::vector<double>& raw);
// The inverse: free numbers for stationary AR coefficients; empty when they are not stationary.
std::vector<double> to_pacf(const std::vector<double>& ar);
// Whether x_t = sum_i ar_i x_{t-i} + e_t is stationary (every reflection coefficient in (-1, 1)).
bool is_stationary(const std::vector<double>& ar);

}  // namespace orrery::baselines
