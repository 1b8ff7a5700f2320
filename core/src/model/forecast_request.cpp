#include "orrery/host/forecast_request.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "orrery/error.h"
#include "orrery/host/backtest.h"
#include "orrery/host/baselines.h"
#include "orrery/host/covariate_regression.h"
#include "orrery/host/series.h"

namespace orrery {
namespace {

using Rows = std::vector<std::vector<double>>;

// A series' covariates against its history of T steps and the horizon: a past-only one covers the
// history step for step; a known-future one the history and the horizon, known (and within the
// float64 scaling's range) at every horizon step.
void check_covariates(const RequestSeries& s, size_t T, int64_t horizon) {
  for (const auto& c : s.covariates) {
    if (c.role == VariateRole::past) {
      if (c.values.size() != T)
        throw Error(c.label + " has " + std::to_string(c.values.size()) + " values, the series " + std::to_string(T) +
                    ": a past-only covariate covers the series' history, step for step");
      continue;
    }
    if (c.role != VariateRole::future) throw Error(c.label + ": a covariate is past-only or known-future");
    if (c.values.size() != T + static_cast<size_t>(horizon))
      throw Error(c.label + " has " + std::to_string(c.values.size()) + " values; a known-future covariate covers the "
                  "series' history and the horizon, " + std::to_string(T) + " + " + std::to_string(horizon));
    for (size_t h = T; h < c.values.size(); ++h) {
      const std::string step = "horizon step " + std::to_string(h - T + 1);
      if (!std::isfinite(c.values[h]))
        throw Error(c.label + " has no value at " + step + ": a known-future covariate must be known there");
      if (std::fabs(c.values[h]) > kMaxForecastMagnitude) {
        std::ostringstream text;
        text << c.label << ": the value " << c.values[h] << " at " << step
             << " is beyond +-1e150, where the forecast's float64 scaling overflows; rescale the covariate";
        throw Error(text.str());
      }
    }
  }
}

// The known-future covariates of a series, each over its history and the horizon: what the
// regression fits on and extrapolates with.
Rows regressors(const RequestSeries& s) {
  Rows x;
  for (const auto& c : s.covariates)
    if (c.role == VariateRole::future) x.push_back(c.values);
  return x;
}

// What a batch of series shares: one row layout (target rows, past-only and known-future rows)
// and static covariates or none.
struct Layout {
  size_t targets, past, future, statics;
  bool operator==(const Layout&) const = default;
};
Layout layout_of(const RequestSeries& s, bool rows) {
  Layout l{s.targets.size(), 0, 0, s.statics.size()};
  if (rows)
    for (const auto& c : s.covariates) (c.role == VariateRole::past ? l.past : l.future) += 1;
  return l;
}

// A target row's forecast pooled with the request's baselines, each fitted on the row's history:
// its quantiles level by level, and its median and mean with the baselines' medians (their
// intervals are symmetric, so their mean is their median).
void pool(TargetForecast& t, const ForecastRequest& r, const std::vector<double>& history,
          const std::vector<double>& levels) {
  std::vector<std::vector<std::vector<double>>> quantiles{t.quantiles}, medians{{t.median}}, means{{t.mean}};
  const auto half = std::find(levels.begin(), levels.end(), 0.5);
  for (const auto& name : r.combine) {
    check_interrupt(r.options.interrupt);
    const auto baseline = make_baseline(name, r.options.interrupt);
    quantiles.push_back(baseline->forecast(history, r.combine_season, r.horizon, levels));
    medians.push_back(half != levels.end() ? std::vector<std::vector<double>>{quantiles.back()[half - levels.begin()]}
                                           : baseline->forecast(history, r.combine_season, r.horizon, {0.5}));
    means.push_back(medians.back());
  }
  t.quantiles = combine_quantiles(quantiles, r.combine_rule);
  t.median = combine_quantiles(medians, r.combine_rule)[0];
  if (!t.mean.empty()) t.mean = combine_quantiles(means, r.combine_rule)[0];
}

// The combination's check at one origin, `back` steps before each series' end: the horizon before
// it is held out (its covariates' with it), forecast by the model alone from the steps before,
// and pooled there with the baselines fitted on those steps; each target row's pinball losses
// are added to `pooled` and `alone` and the row marked `checked`. A series is checked at an
// origin only if every target row can be and its known-future covariates are known over the
// held-out steps. Returns whether any series reaches back that far, so a later origin may too.
struct CheckLosses {
  std::vector<std::vector<double>> pooled, alone;
  std::vector<std::vector<bool>> checked;
};
bool check_origin(Model& model, const ForecastRequest& r, const std::vector<double>& levels, size_t back, CheckLosses& l) {
  const auto H = static_cast<size_t>(r.horizon);
  ForecastRequest head = r;
  head.series.clear(), head.combine.clear(), head.combine_check = false;
  head.options.levels = levels, head.options.mean = false;
  std::vector<size_t> checked;  // the series the held-out request holds
  std::vector<RequestSeries> upto;  // each series as it was `back` steps before its end
  bool reaches = false;
  for (size_t i = 0; i < r.series.size(); ++i) {
    const auto& targets = r.series[i].targets;
    if (std::any_of(targets.begin(), targets.end(), [&](const std::vector<double>& y) { return y.size() < back + 2 * H; }))
      continue;
    reaches = true;
    RequestSeries s = r.series[i];
    for (auto& y : s.targets) y.resize(y.size() - back);
    for (auto& c : s.covariates) c.values.resize(c.values.size() - back);
    bool can = std::all_of(s.targets.begin(), s.targets.end(),
                           [&](const std::vector<double>& y) { return combination_checkable(y, r.horizon); });
    for (const auto& c : s.covariates)
      if (c.role == VariateRole::future)
        can = can && std::all_of(c.values.end() - 2 * static_cast<std::ptrdiff_t>(H), c.values.end() - static_cast<std::ptrdiff_t>(H),
                                 [](double v) { return std::isfinite(v) && std::fabs(v) <= kMaxForecastMagnitude; });
    if (!can) continue;
    RequestSeries cut = s;
    for (auto& y : cut.targets) y.resize(y.size() - H);
    for (auto& c : cut.covariates) c.values.resize(c.values.size() - H);  // past: T - H steps; future: T - H + H
    head.series.push_back(std::move(cut));
    upto.push_back(std::move(s));
    checked.push_back(i);
  }
  if (checked.empty()) return reaches;
  // The regression of a head without known-future covariates fits nothing: as it is, without it.
  head.regression = head.regression && std::any_of(head.series.begin(), head.series.end(), [](const RequestSeries& s) {
    return std::any_of(s.covariates.begin(), s.covariates.end(),
                       [](const RequestSeries::Covariate& c) { return c.role == VariateRole::future; });
  });
  const ForecastAnswer alone = answer(model, head);
  for (size_t j = 0; j < checked.size(); ++j) {
    const RequestSeries& s = upto[j];
    for (size_t k = 0; k < s.targets.size(); ++k) {
      const std::vector<double>& y = s.targets[k];
      const std::vector<double> before(y.begin(), y.end() - static_cast<std::ptrdiff_t>(H)), actual(y.end() - static_cast<std::ptrdiff_t>(H), y.end());
      TargetForecast pooled = alone.series[j][k];
      pool(pooled, r, before, alone.levels);
      const double with = pinball_loss(pooled.quantiles, alone.levels, actual);
      const double without = pinball_loss(alone.series[j][k].quantiles, alone.levels, actual);
      if (!std::isfinite(with) || !std::isfinite(without)) continue;  // as Box-Cox's check: no score here
      l.pooled[checked[j]][k] += with, l.alone[checked[j]][k] += without;
      l.checked[checked[j]][k] = true;
    }
  }
  return true;
}

// Which target rows keep the combination (ForecastRequest::combine_check, combination.h): those
// whose pooled forecasts had the lower pinball loss, summed over the last check_origins horizons
// each row could be checked at.
std::vector<std::vector<bool>> checked_pools(Model& model, const ForecastRequest& r, const std::vector<double>& levels) {
  CheckLosses l;
  for (const RequestSeries& s : r.series) {
    l.pooled.emplace_back(s.targets.size(), 0.0), l.alone.emplace_back(s.targets.size(), 0.0);
    l.checked.emplace_back(s.targets.size(), false);
  }
  for (int64_t origin = 0; origin < r.options.check_origins; ++origin)
    if (!check_origin(model, r, levels, static_cast<size_t>(origin * r.horizon), l)) break;  // no series reaches further
  std::vector<std::vector<bool>> keep = l.checked;
  for (size_t i = 0; i < keep.size(); ++i)
    for (size_t k = 0; k < keep[i].size(); ++k) keep[i][k] = l.checked[i][k] && l.pooled[i][k] < l.alone[i][k];
  return keep;
}

}  // namespace

void check_contexts(const std::vector<int64_t>& contexts, const std::string& what) {
  for (size_t i = 0; i < contexts.size(); ++i) {
    if (contexts[i] < 1) throw Error(what + ": context must be at least 1 step, got " + std::to_string(contexts[i]));
    for (size_t k = 0; k < i; ++k)
      if (contexts[k] == contexts[i]) throw Error(what + ": context " + std::to_string(contexts[i]) + " given twice");
  }
}

ForecastAnswer answer(Model& model, const ForecastRequest& r) {
  Model::check_horizon(r.horizon);
  if (r.combine_check && r.combine.empty()) throw Error("forecast: the combination's check needs baselines to combine with");
  check_origins_count(r.options.check_origins, "forecast: check_origins");
  check_contexts(r.contexts, "forecast");
  if (r.batch_size < 1) throw Error("forecast: batch size must be at least 1, got " + std::to_string(r.batch_size));
  check_regression_lags(r.regression_lags, "forecast: regression_lags");
  if (r.regression_lags > 0 && !r.regression) throw Error("forecast: regression_lags needs the regression");
  const int64_t H = r.horizon;

  // A series without known-future covariates is forecast as it is (its fit is 0); a request with
  // none at all asked for nothing.
  if (r.regression && std::none_of(r.series.begin(), r.series.end(), [](const RequestSeries& s) {
        return std::any_of(s.covariates.begin(), s.covariates.end(),
                           [](const RequestSeries::Covariate& c) { return c.role == VariateRole::future; });
      }))
    throw Error("forecast: the regression fits each target on known-future covariates; give some");
  // The series as the model reads them: with the regression, each target row's residual on its
  // series' known-future covariates (which are then no rows of the model's); the fits kept.
  std::vector<RequestSeries> series = r.series;
  std::vector<std::vector<CovariateRegression>> fits(series.size());
  std::vector<Rows> xs(series.size());
  for (size_t i = 0; i < series.size(); ++i) {
    RequestSeries& s = series[i];
    if (s.targets.empty()) throw Error("forecast: a series without a target row");
    if (s.labels.size() != s.targets.size()) throw Error("forecast: one label a target row");
    const size_t T = s.targets.front().size();
    if (!s.covariates.empty())
      for (size_t k = 1; k < s.targets.size(); ++k)
        if (s.targets[k].size() != T)
          throw Error(s.labels[k] + " has " + std::to_string(s.targets[k].size()) + " steps, " + s.labels[0] + " " +
                      std::to_string(T) + ": the rows of one series with covariates cover the same steps");
    check_covariates(s, T, H);
    if (!r.regression) continue;
    xs[i] = regressors(s);
    if (xs[i].size() != s.covariates.size())
      throw Error("forecast: the regression reads known-future covariates only; past-only ones have no values over "
                  "the horizon to regress on");
    for (auto& y : s.targets) {
      fits[i].push_back(CovariateRegression::fit(y, xs[i], static_cast<size_t>(r.regression_lags)));
      y = fits[i].back().residual(y, xs[i]);
    }
    s.covariates.clear();
  }

  const int64_t longest = r.contexts.empty() ? std::numeric_limits<int64_t>::max()
                                             : *std::max_element(r.contexts.begin(), r.contexts.end());
  ForecastAnswer out;
  out.series.resize(series.size());
  for (size_t start = 0; start < series.size();) {
    // The next batch: consecutive series of one layout, at most batch_size of them.
    const Layout layout = layout_of(series[start], true);
    size_t end = start + 1;
    while (end < series.size() && end - start < static_cast<size_t>(r.batch_size) && layout_of(series[end], true) == layout)
      ++end;
    const int64_t n = static_cast<int64_t>(end - start);
    const int64_t V = static_cast<int64_t>(layout.targets + layout.past + layout.future);
    const bool covariates = layout.past + layout.future > 0;
    Rows rows;
    std::vector<std::string> labels;
    std::vector<int64_t> roles;
    at::Tensor ahead = covariates ? at::full({n, V, H}, std::numeric_limits<double>::quiet_NaN(), at::kDouble) : at::Tensor();
    for (size_t i = start; i < end; ++i) {
      const RequestSeries& s = series[i];
      const size_t T = s.targets.front().size();
      for (size_t k = 0; k < s.targets.size(); ++k)
        rows.push_back(s.targets[k]), labels.push_back(s.labels[k]), roles.push_back(static_cast<int64_t>(VariateRole::target));
      int64_t row = static_cast<int64_t>(s.targets.size());
      for (VariateRole role : {VariateRole::past, VariateRole::future})
        for (const auto& c : s.covariates) {
          if (c.role != role) continue;
          rows.emplace_back(c.values.begin(), c.values.begin() + static_cast<std::ptrdiff_t>(T));
          labels.push_back(c.label), roles.push_back(static_cast<int64_t>(role));
          if (role == VariateRole::future)
            for (int64_t h = 0; h < H; ++h) ahead[static_cast<int64_t>(i - start)][row][h] = c.values[T + h];
          ++row;
        }
    }
    const SeriesBatch b = series_batch(rows, labels, longest);
    const int64_t T = b.values.size(2);
    ForecastOptions o = r.options;
    if (r.contexts.size() > 1) o.contexts = r.contexts;  // one context: the histories cut to it above
    if (covariates) {
      o.roles = at::tensor(roles, at::kLong).view({n, V});
      if (layout.future > 0) o.future = ahead;
    }
    if (layout.statics > 0) {
      std::vector<at::Tensor> each;
      for (size_t i = start; i < end; ++i)
        each.push_back(at::tensor(series[i].statics, at::kDouble).to(at::kFloat).view({1, 1, -1}).expand({1, V, -1}));
      o.statics = at::cat(each, 0).contiguous();
    }
    const Forecast f = model.forecast(b.values.view({n, V, T}), b.observed.view({n, V, T}), at::zeros({n, V}, at::kLong), H, o);
    out.levels = f.levels;
    for (int64_t i = 0; i < n; ++i) {
      const size_t at_series = start + static_cast<size_t>(i);
      const RequestSeries& s = series[at_series];
      for (size_t k = 0; k < s.targets.size(); ++k) {
        const int64_t row = static_cast<int64_t>(k);
        TargetForecast t;
        t.quantiles = quantile_rows(f.quantiles.select(1, i).select(1, row));
        t.median = quantile_rows(f.median.select(0, i).select(0, row).unsqueeze(0))[0];
        if (f.mean.defined()) t.mean = quantile_rows(f.mean.select(0, i).select(0, row).unsqueeze(0))[0];
        if (r.regression) {  // the fit over the horizon, added to every level, the median and the mean
          const CovariateRegression& fit = fits[at_series][k];
          const size_t history = r.series[at_series].targets[k].size();
          for (int64_t h = 0; h < H; ++h) {
            const double shift = fit.at(xs[at_series], history + static_cast<size_t>(h));
            for (auto& level : t.quantiles) level[static_cast<size_t>(h)] += shift;
            t.median[static_cast<size_t>(h)] += shift;
            if (!t.mean.empty()) t.mean[static_cast<size_t>(h)] += shift;
          }
        }
        out.series[at_series].push_back(std::move(t));
      }
    }
    start = end;
  }
  if (!r.combine.empty()) {
    const auto keep = r.combine_check ? checked_pools(model, r, out.levels) : std::vector<std::vector<bool>>{};
    for (size_t i = 0; i < out.series.size(); ++i)
      for (size_t k = 0; k < out.series[i].size(); ++k)
        if (!r.combine_check || keep[i][k]) pool(out.series[i][k], r, r.series[i].targets[k], out.levels);
  }
  return out;
}

}  // namespace orrery
