#pragma once
// Classical forecasters that every model is measured against, behind one interface: given a
// series' history (NaN = missing), its seasonality and a horizon, quantile forecasts at the
// requested levels. They follow statsforecast (the library GIFT-Eval's baselines come from):
// missing values are forward-filled first, as GIFT-Eval's LastValueImputation does, except that
// leading missing values are dropped (GIFT-Eval back-fills them with the first observed value);
// quantiles come from the model's normal prediction intervals, level = round(200 * (max(q, 1-q)
// - 0.5)). A season below 1 or longer than the history means none; a history too short for a
// model falls back as statsforecast and GIFT-Eval do (seasonal forms need enough seasons; ETS
// below 7 points and Theta below 4 use SeasonalNaive). Sources: core/src/eval/baselines/.
// Pure C++: no tensors, cheap to call per window (an ETS fit on a few hundred points takes tens of milliseconds).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "orrery/interrupt.h"

namespace orrery {

class Baseline {
 public:
  virtual ~Baseline() = default;
  virtual std::string name() const = 0;
  // quantiles[q][h] at `levels` (each in (0, 1)) for h = 1..horizon. Throws orrery::Error on a
  // history without a finite value, a level outside (0, 1) or a negative horizon.
  virtual std::vector<std::vector<double>> forecast(const std::vector<double>& history,
                                                    int64_t season, int64_t horizon,
                                                    const std::vector<double>& levels) const = 0;
  // Whether forecast_with() uses known-future covariates (as regressors); those that do not
  // forecast from the history alone.
  virtual bool reads_covariates() const { return false; }
  // forecast() given known-future covariates: each column holds history.size() + horizon values
  // (NaN = missing). A covariate missing somewhere in the horizon cannot be used and is left out.
  virtual std::vector<std::vector<double>> forecast_with(const std::vector<double>& history,
                                                         const std::vector<std::vector<double>>& covariates,
                                                         int64_t season, int64_t horizon,
                                                         const std::vector<double>& levels) const {
    (void)covariates;
    return forecast(history, season, horizon, levels);
  }
};

// "naive", "seasonal_naive", "theta" (statsforecast AutoTheta), "ets" (AutoETS), "arima"
// (AutoARIMA; with covariates, a regression with ARIMA errors). An unknown
// name is an error that lists these. The searches (AutoETS, AutoARIMA) check `interrupt` between
// candidate fits, since one long window's search can take minutes on a slow machine; a stop
// throws orrery::Interrupted.
std::unique_ptr<Baseline> make_baseline(const std::string& name, const Interrupt* interrupt = nullptr);
const std::vector<std::string>& baseline_names();

}  // namespace orrery
