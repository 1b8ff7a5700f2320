// The "ets" baseline: statsforecast's AutoETS with normal intervals around its point forecast.
#include <algorithm>
#include <cmath>

#include "common.h"
#include "ets_model.h"

namespace orrery::baselines {
namespace {

class Ets : public Baseline {
 public:
  explicit Ets(const Interrupt* interrupt) : interrupt_(interrupt) {}
  std::string name() const override { return "ets"; }
  std::vector<std::vector<double>> forecast(const std::vector<double>& history, int64_t season,
                                            int64_t horizon,
                                            const std::vector<double>& levels) const override {
    check_request("ets", horizon, levels);
    const std::vector<double> y = fill_missing(history, "ets");
    // A constant series is its own forecast with no spread (statsforecast fits ANN to it).
    if (is_constant(y))
      return normal_quantiles(std::vector<double>(horizon, y.front()), std::vector<double>(horizon, 0.0), levels);
    const std::optional<EtsFit> fit = auto_ets(y, usable_season(season, y.size()), interrupt_);
    // Too short to fit anything: GIFT-Eval's StatsForecastPredictor falls back to SeasonalNaive.
    if (!fit) return make_seasonal_naive()->forecast(y, season, horizon, levels);
    const std::vector<double> point = ets_point(fit->form, fit->params, fit->last, horizon);
    std::vector<double> sigma = ets_variance(fit->form, fit->params, fit->last, fit->sigma2, point);
    for (double& s : sigma) s = std::sqrt(std::max(s, 0.0));
    return normal_quantiles(point, sigma, levels);
  }

 private:
  const Interrupt* interrupt_;
};

}  // namespace

std::unique_ptr<Baseline> make_ets(const Interrupt* interrupt) { return std::make_unique<Ets>(interrupt); }

}  // namespace orrery::baselines
