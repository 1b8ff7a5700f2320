#pragma once
// Pieces every baseline shares: the missing-value rule, the season rule, the normal quantiles
// and the factories that registry.cpp puts behind names. Internal to liborrery_core.
#include <cstdint>
#include <memory>
#include <vector>

#include "orrery/host/baselines.h"

namespace orrery::baselines {

// Forward-fills NaN/inf values with the last finite one; leading missing values are dropped,
// since nothing precedes them. Throws orrery::Error naming `who` when no value is finite.
std::vector<double> fill_missing(const std::vector<double>& history, const char* who);

// The seasonality actually used: m < 1, or m longer than the history, means no season.
int64_t usable_season(int64_t season, size_t length);

bool is_constant(const std::vector<double>& y);

// sum (v_i - mean)^2: the sample and population variances' numerator.
double squared_deviations(const std::vector<double>& v);

// quantiles[q][h] = point[h] + normal_quantile(levels[q]) * sigma[h]: statsforecast's normal
// intervals, read at level = 200 |q - 0.5| on the side of q. Rejects levels outside (0, 1).
std::vector<std::vector<double>> normal_quantiles(const std::vector<double>& point,
                                                  const std::vector<double>& sigma,
                                                  const std::vector<double>& levels);

// Throws orrery::Error for a negative horizon or a level outside (0, 1).
void check_request(const char* who, int64_t horizon, const std::vector<double>& levels);

std::unique_ptr<Baseline> make_naive();
std::unique_ptr<Baseline> make_seasonal_naive();
std::unique_ptr<Baseline> make_theta();
std::unique_ptr<Baseline> make_ets(const Interrupt* interrupt = nullptr);
std::unique_ptr<Baseline> make_arima(const Interrupt* interrupt = nullptr);

}  // namespace orrery::baselines
