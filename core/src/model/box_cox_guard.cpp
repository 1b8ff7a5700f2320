// Box-Cox, guarded per series against a transform that blows a trending series up: kept for a
// target row only where it forecast the row's own last horizons better than no transform did
// (ForecastOptions::box_cox_check), averaged with the untransformed forecast
// (ForecastOptions::box_cox_average), or both: the check then scores the average it would keep.
// The check is the validation split of one series, rolled back over `check_origins` horizons:
// each is held out in turn, both forecasts are made from the steps before it and scored by the
// pinball loss over the levels, and the losses are summed over the origins the row can be
// checked at (at least a patch before it, something observed before it and within it).
#include <ATen/ATen.h>

#include <limits>
#include <utility>

#include "orrery/host/model.h"

namespace orrery {

namespace {

// (B, V) the mean pinball loss over levels and observed steps of `f` against `actual` (B, V, H);
// +inf where no step is observed.
at::Tensor pinball(const Forecast& f, const at::Tensor& actual, const at::Tensor& seen) {
  const at::Tensor q = f.quantiles.to(at::kDouble);  // (Q, B, V, H)
  const at::Tensor levels = at::tensor(f.levels, at::kDouble).view({-1, 1, 1, 1});
  const at::Tensor y = at::where(seen, actual, 0.0).unsqueeze(0);
  const at::Tensor err = y - q;
  at::Tensor loss = at::maximum(levels * err, (levels - 1) * err) * seen.unsqueeze(0).to(at::kDouble);
  const at::Tensor steps = seen.to(at::kDouble).sum(-1) * static_cast<double>(f.levels.size());
  return at::where(steps > 0, loss.sum({0, 3}) / steps.clamp_min(1), std::numeric_limits<double>::infinity());
}

// Level by level, the mean of two forecasts of the same rows (both with a mean or neither):
// sorted where both are.
Forecast averaged(Forecast a, const Forecast& b) {
  a.quantiles = (a.quantiles + b.quantiles) / 2;
  a.median = (a.median + b.median) / 2;
  if (a.mean.defined()) a.mean = (a.mean + b.mean) / 2;
  return a;
}

}  // namespace

Forecast Model::guarded_box_cox_forecast(const at::Tensor& values_in, const at::Tensor& observed_in,
                                         const at::Tensor& series_ids, int64_t horizon,
                                         const std::vector<double>& levels, const ForecastOptions& o) {
  ForecastOptions transformed = o, plain = o;
  transformed.box_cox_check = false;
  plain.box_cox_check = false;
  plain.box_cox.reset();
  transformed.levels = plain.levels = levels;
  transformed.box_cox_average = plain.box_cox_average = false;
  Forecast without = forecast(values_in, observed_in, series_ids, horizon, plain);
  Forecast with = forecast(values_in, observed_in, series_ids, horizon, transformed);
  if (o.box_cox_average) with = averaged(std::move(with), without);
  if (!o.box_cox_check) return with;

  const int64_t B = values_in.size(0), V = values_in.size(1), T = values_in.size(2);
  const at::Tensor values = values_in.to(at::kDouble);
  const at::Tensor seen = observed_in.to(at::kBool) & values.isfinite();
  ForecastOptions t = transformed, p = plain;
  t.mean = p.mean = false;
  at::Tensor loss_with = at::zeros({B, V}, at::kDouble), loss_without = at::zeros({B, V}, at::kDouble);
  at::Tensor checked = at::zeros({B, V}, at::kBool);
  for (int64_t origin = 1; origin <= o.check_origins && T - origin * horizon >= patch_size(); ++origin) {
    const int64_t cut = T - origin * horizon;
    at::Tensor head = values.narrow(2, 0, cut).clone(), head_seen = seen.narrow(2, 0, cut).clone();
    const at::Tensor actual = values.narrow(2, cut, horizon), actual_seen = seen.narrow(2, cut, horizon);
    // A row with nothing observed before the origin cannot be checked there: it is shown one
    // observed 1 at the end so the others can be.
    const at::Tensor blank = ~head_seen.any(-1);
    head.select(2, cut - 1).masked_fill_(blank, 1.0);
    head_seen.select(2, cut - 1).logical_or_(blank);
    // Known-future covariates are known over the held-out steps: their values there.
    if (o.future.defined()) t.future = p.future = values_in.narrow(2, cut, horizon).to(o.future.options());
    const Forecast fp = forecast(head, head_seen, series_ids, horizon, p);
    Forecast fw = forecast(head, head_seen, series_ids, horizon, t);
    if (o.box_cox_average) fw = averaged(std::move(fw), fp);
    const at::Tensor lw = pinball(fw, actual, actual_seen), lp = pinball(fp, actual, actual_seen);
    at::Tensor counts = ~blank & lw.isfinite() & lp.isfinite();
    // A series whose known-future covariates are not known over the held-out steps is not
    // checked there: its forecast would read their gaps as values.
    if (o.future.defined() && o.roles.defined()) {
      const at::Tensor future_rows = o.roles.to(at::kCPU) == static_cast<int64_t>(VariateRole::future);
      const at::Tensor gap = (~actual_seen).any(-1) & future_rows;
      counts &= ~gap.any(-1, true);
    }
    loss_with += at::where(counts, lw, 0.0), loss_without += at::where(counts, lp, 0.0);
    checked |= counts;
  }
  at::Tensor keep = checked & (loss_with < loss_without);
  if (o.roles.defined()) keep &= o.roles.to(at::kCPU) == static_cast<int64_t>(VariateRole::target);
  const at::Tensor k = keep.to(with.quantiles.device());
  Forecast out = without;
  out.quantiles = at::where(k.view({1, B, V, 1}), with.quantiles, without.quantiles);
  out.median = at::where(k.view({B, V, 1}), with.median, without.median);
  if (with.mean.defined() && without.mean.defined()) out.mean = at::where(k.view({B, V, 1}), with.mean, without.mean);
  return out;
}

}  // namespace orrery
