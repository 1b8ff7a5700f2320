#include "orrery/host/backtest.h"
#include "orrery/host/forecast_request.h"

#include <ATen/ATen.h>

#include <cmath>

#include "orrery/error.h"
#include "orrery/host/model.h"
#include "orrery/host/scoring.h"
#include "orrery/host/series.h"

namespace orrery {
std::vector<std::vector<double>> quantile_rows(const at::Tensor& q) {
  at::Tensor c = q.to(at::kDouble).contiguous();
  std::vector<std::vector<double>> out(c.size(0));
  for (int64_t i = 0; i < c.size(0); ++i)
    out[i].assign(c[i].data_ptr<double>(), c[i].data_ptr<double>() + c.size(1));
  return out;
}

Json backtest(Model& model, const std::vector<SeriesInput>& series, const BacktestConfig& cfg,
              const Interrupt* interrupt) {
  if (cfg.horizon < 1 || cfg.windows < 1 || cfg.context < 1)
    throw Error("backtest: horizon, windows and context must be positive");
  if (cfg.horizon > (1 << 20) || cfg.windows > (1 << 20))
    throw Error("backtest: horizon and windows must be at most 2^20");
  std::vector<double> levels;
  Json out = {{"horizon", cfg.horizon}, {"windows", cfg.windows}};
  Json rows = Json::array(), snapshots = Json::array();
  std::optional<ScoreAccumulator> all_model, all_naive;

  for (const auto& s : series) {
    const int64_t n = static_cast<int64_t>(s.values.size());
    const int64_t first_cut = n - cfg.windows * cfg.horizon;
    if (first_cut < 2)
      throw Error("backtest: series '" + s.name + "' has " + std::to_string(n) +
                  " points, too few for " + std::to_string(cfg.windows) + " windows of " +
                  std::to_string(cfg.horizon));
    // Every window of a series through the one forecast path, each window a series of its own.
    ForecastRequest request;
    request.horizon = cfg.horizon;
    request.contexts = {cfg.context};
    request.batch_size = cfg.windows;
    request.options.interrupt = interrupt;
    const bool statics = !s.statics.empty() && !model.static_covariates().empty();
    for (int64_t w = 0; w < cfg.windows; ++w) {
      const int64_t cut = first_cut + w * cfg.horizon;
      request.series.push_back({{std::vector<double>(s.values.begin() + std::max<int64_t>(0, cut - cfg.context),
                                                     s.values.begin() + cut)},
                                {"backtest: series '" + s.name + "' before window " + std::to_string(w + 1)},
                                {},
                                statics ? s.statics : std::vector<double>{}});
    }
    const ForecastAnswer f = answer(model, request);
    if (levels.empty()) {
      levels = f.levels;
      all_model.emplace(levels);
      all_naive.emplace(levels);
    }
    ScoreAccumulator m(levels), nv(levels);
    for (int64_t w = 0; w < cfg.windows; ++w) {
      const int64_t cut = first_cut + w * cfg.horizon;
      std::vector<double> history(s.values.begin(), s.values.begin() + cut);
      std::vector<double> target(s.values.begin() + cut, s.values.begin() + cut + cfg.horizon);
      const auto& q_model = f.series[static_cast<size_t>(w)][0].quantiles;
      auto q_naive = seasonal_naive_quantiles(history, s.season, cfg.horizon, levels);
      for (auto* acc : {&m, &*all_model}) acc->add(history, s.season, target, q_model);
      for (auto* acc : {&nv, &*all_naive}) acc->add(history, s.season, target, q_naive);
      if (w == cfg.windows - 1) {
        const int64_t shown = std::min<int64_t>(cut, 4 * cfg.horizon);
        snapshots.push_back({{"name", s.name},
                             {"history", std::vector<double>(history.end() - shown, history.end())},
                             {"target", target}, {"quantiles", q_model}, {"naive", q_naive}});
      }
    }
    rows.push_back({{"name", s.name}, {"season", s.season}, {"windows", cfg.windows},
                    {"mase", m.mase()}, {"crps", m.crps()},
                    {"naive_mase", nv.mase()}, {"naive_crps", nv.crps()}});
  }
  out["levels"] = levels;
  out["series"] = rows;
  if (all_model)
    out["overall"] = {{"mase", all_model->mase()}, {"crps", all_model->crps()},
                      {"naive_mase", all_naive->mase()}, {"naive_crps", all_naive->crps()}};
  out["forecasts"] = snapshots;
  return out;
}

}  // namespace orrery
