#pragma once
// Classical seasonal decomposition and the seasonality test, as statsforecast calls them
// (statsmodels' seasonal_decompose and acf). Shared by Theta (deseasonalising) and ETS (initial
// seasonal states).
#include <cstdint>
#include <vector>

namespace orrery::baselines {

// The seasonal component s_t of y (length n >= 2m): a centred moving average of order m
// (2 x m for even m) is the trend; each phase's mean of y / trend (multiplicative) or y - trend
// (additive), over the steps where the trend exists, is normalised to mean 1 (0) across phases.
std::vector<double> seasonal_component(const std::vector<double>& y, int64_t m, bool multiplicative);

// The Theta method's 90% test for seasonality: |r_m| > 1.645 sqrt((1 + 2 sum_{k<m} r_k^2) / n)
// with r_k the sample autocorrelation. Needs m >= 4 and n >= 2m, else false.
bool seasonality_test(const std::vector<double>& y, int64_t m);

}  // namespace orrery::baselines
