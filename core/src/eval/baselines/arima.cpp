// The "arima" baseline: statsforecast's AutoARIMA with normal intervals, and with known-future
// covariates the same search for a regression on them with ARIMA errors.
#include <cmath>

#include "arima_model.h"
#include "common.h"

namespace orrery::baselines {
namespace {

// A covariate's history, gaps filled forward (leading ones back from the first value) as the
// target's are, and its horizon; false when it cannot be used (a gap in the horizon, no value).
bool usable_covariate(const std::vector<double>& c, size_t n, int64_t horizon, std::vector<double>& past,
                      std::vector<double>& future) {
  if (c.size() < n + static_cast<size_t>(horizon)) return false;
  future.assign(c.begin() + static_cast<std::ptrdiff_t>(n), c.begin() + static_cast<std::ptrdiff_t>(n + horizon));
  for (double v : future)
    if (!std::isfinite(v)) return false;
  past.assign(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(n));
  double last = std::nan("");
  for (double v : past)
    if (std::isfinite(v)) {
      last = v;
      break;
    }
  if (std::isnan(last)) return false;
  for (double& v : past) std::isfinite(v) ? void(last = v) : void(v = last);
  return true;
}

class Arima : public Baseline {
 public:
  explicit Arima(const Interrupt* interrupt) : interrupt_(interrupt) {}
  std::string name() const override { return "arima"; }
  bool reads_covariates() const override { return true; }

  std::vector<std::vector<double>> forecast(const std::vector<double>& history, int64_t season, int64_t horizon,
                                            const std::vector<double>& levels) const override {
    return forecast_with(history, {}, season, horizon, levels);
  }

  std::vector<std::vector<double>> forecast_with(const std::vector<double>& history,
                                                 const std::vector<std::vector<double>>& covariates, int64_t season,
                                                 int64_t horizon, const std::vector<double>& levels) const override {
    check_request("arima", horizon, levels);
    const std::vector<double> y = fill_missing(history, "arima");
    if (is_constant(y))  // statsforecast's forecast of a constant series: itself, no spread
      return normal_quantiles(std::vector<double>(horizon, y.front()), std::vector<double>(horizon, 0.0), levels);
    Regressors past, future;
    for (const auto& c : covariates) {
      std::vector<double> p, f;
      if (usable_covariate(c, y.size(), horizon, p, f)) past.push_back(std::move(p)), future.push_back(std::move(f));
    }
    const int64_t m = usable_season(season, y.size());
    ArimaFit fit = auto_arima(y, past, m, interrupt_);
    if (!fit.usable && !past.empty()) fit = auto_arima(y, {}, m, interrupt_);  // collinear covariates: without them
    // No model fits (too short a history): GIFT-Eval's StatsForecastPredictor falls back to SeasonalNaive.
    if (!fit.usable) return make_seasonal_naive()->forecast(history, season, horizon, levels);
    const ArimaForecast f = forecast_arima(fit, future, horizon);
    return normal_quantiles(f.mean, f.sd, levels);
  }

 private:
  const Interrupt* interrupt_;
};

}  // namespace

std::unique_ptr<Baseline> make_arima(const Interrupt* interrupt) { return std::make_unique<Arima>(interrupt); }

}  // namespace orrery::baselines
