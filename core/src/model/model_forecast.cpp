// Forecasting with a model: one pass over the context and the masked horizon patches, block
// decoding with a KV cache, sign averaging, context ensembles and Box-Cox, each in data units (model.h).
// Front ends reach it through the one forecast request (forecast_request.h).
#include "orrery/host/model.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>

#include "orrery/options.h"
#include "orrery/error.h"
#include "orrery/host/combination.h"
#include "orrery/host/box_cox.h"
#include "orrery/host/covariate_lags.h"
#include "orrery/host/graphed_call.h"
#include "orrery/ops.h"
#include "orrery/host/patching.h"
#include "orrery/host/registry.h"
#include "orrery/host/series.h"
#include "prepared.h"

namespace orrery {

namespace {

// As the reference: the last context patch counts as observed, because training never leaves
// the end of the context unobserved. Its missing steps first take the last observed value
// before them (or the series' first observed value when none precedes), so no flag marks a
// placeholder zero as data. Series with no observation at all are left as they are.
std::pair<at::Tensor, at::Tensor> observe_last_patch(const at::Tensor& values,
                                                     const at::Tensor& observed, int64_t P) {
  const int64_t T = values.size(-1), tail = std::min(P, T);
  at::Tensor t = at::arange(T, values.options().dtype(at::kLong)).expand_as(values);
  at::Tensor last = std::get<0>(at::where(observed, t, -1).cummax(-1));
  at::Tensor first = observed.to(at::kInt).argmax(-1, /*keepdim=*/true);
  at::Tensor filled = at::where(last >= 0, values.gather(-1, last.clamp_min(0)), values.gather(-1, first));
  at::Tensor in_tail = (t >= T - tail) & observed.any(-1, /*keepdim=*/true);
  return {at::where(in_tail & observed.logical_not(), filled, values), observed | in_tail};
}

// As the reference: +-inf (a huge scale times a large quantile) becomes the largest/smallest
// finite value along the last axis, so a committed median never poisons later blocks.
at::Tensor clamp_nonfinite(const at::Tensor& x) {
  const double inf = std::numeric_limits<double>::infinity();
  at::Tensor finite = x.isfinite();
  at::Tensor hi = at::where(finite, x, at::full({}, -inf, x.options())).amax(-1, true);
  at::Tensor lo = at::where(finite, x, at::full({}, inf, x.options())).amin(-1, true);
  return at::where(x == inf, hi, at::where(x == -inf, lo, x));
}

}  // namespace

namespace {

// Rows of the batch forecast in one pass: bounds the memory of a forecast of many series and
// lets Ctrl-C land between passes. Rows are independent, so chunking changes no result.
constexpr int64_t kTokensPerPass = 1 << 16;
// Far beyond any horizon a patched model forecasts meaningfully; it keeps sizes from overflowing.
constexpr int64_t kMaxHorizon = 1 << 20;

// Every (series, variate) needs at least one observation: a forecast of nothing is no forecast.
void check_observed(const at::Tensor& observed) {
  const at::Tensor none = observed.any(-1).logical_not().nonzero().cpu();  // (k, 2): b, v
  if (none.size(0) == 0) return;
  const int64_t b = none[0][0].item<int64_t>(), v = none[0][1].item<int64_t>();
  std::string where = "series " + std::to_string(b + 1);
  if (observed.size(1) > 1) where += ", variate " + std::to_string(v + 1);
  throw Error("cannot forecast " + where + ": it has no observed value in its context" +
              (none.size(0) > 1 ? " (nor do " + std::to_string(none.size(0) - 1) + " others)" : ""));
}

// Roles of one shape with the values, each one a VariateRole, a target in every series, and the
// known-future rows' values finite over the whole horizon.
void check_covariates(const ForecastOptions& o, int64_t B, int64_t V, int64_t horizon) {
  const at::Tensor roles = o.roles.to(at::kCPU);
  if (roles.dim() != 2 || roles.size(0) != B || roles.size(1) != V || roles.scalar_type() != at::kLong)
    throw Error("forecast roles must be int64 of shape (series, variates) = (" + std::to_string(B) + ", " +
                std::to_string(V) + "), got " + c10::str(roles.sizes()));
  if (((roles < 0) | (roles >= kVariateRoles)).any().item<bool>())
    throw Error("forecast roles must be 0 (target), 1 (past-only covariate) or 2 (known-future covariate)");
  const at::Tensor no_target = (roles == static_cast<int64_t>(VariateRole::target)).any(1).logical_not().nonzero();
  if (no_target.size(0) > 0)
    throw Error("series " + std::to_string(no_target[0][0].item<int64_t>() + 1) +
                " has covariates but no target to forecast");
  const at::Tensor lead = roles == static_cast<int64_t>(VariateRole::future);
  if (!lead.any().item<bool>()) return;
  if (!o.future.defined() || o.future.dim() != 3 || o.future.size(0) != B || o.future.size(1) != V)
    throw Error("forecast has known-future covariates but no future values of shape (series, variates, horizon) = (" +
                std::to_string(B) + ", " + std::to_string(V) + ", " + std::to_string(horizon) + ")");
  if (o.future.size(2) < horizon)
    throw Error("known-future covariates have " + std::to_string(o.future.size(2)) + " future steps, the horizon is " +
                std::to_string(horizon));
  const at::Tensor ahead = o.future.to(at::kCPU, at::kDouble).narrow(2, 0, horizon);
  auto where = [](const at::Tensor& at) {
    return "known-future covariate (series " + std::to_string(at[0].item<int64_t>() + 1) + ", variate " +
           std::to_string(at[1].item<int64_t>() + 1) + ")";
  };
  const at::Tensor gaps = (lead.unsqueeze(-1) & ahead.isfinite().logical_not()).nonzero();
  if (gaps.size(0) > 0)
    throw Error(where(gaps[0]) + " has no value at horizon step " + std::to_string(gaps[0][2].item<int64_t>() + 1) +
                ": a known-future covariate must be known there");
  const at::Tensor huge = (lead.unsqueeze(-1) & (ahead.abs() > kMaxForecastMagnitude)).nonzero();
  if (huge.size(0) > 0) {
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", ahead[huge[0][0]][huge[0][1]][huge[0][2]].item<double>());
    throw Error(where(huge[0]) + ": the value " + text + " at horizon step " + std::to_string(huge[0][2].item<int64_t>() + 1) +
                " is beyond +-1e150, where the forecast's float64 scaling overflows; rescale the covariate");
  }
}

}  // namespace

namespace {

// The levels a forecast's mean integrates the quantile function over: the midpoints of 32 equal
// slices of (0, 1).
std::vector<double> mean_levels() {
  constexpr int kMeanLevels = 32;
  std::vector<double> grid;
  for (int i = 0; i < kMeanLevels; ++i) grid.push_back((i + 0.5) / kMeanLevels);
  return grid;
}

}  // namespace

void Model::check_horizon(int64_t horizon) {
  if (horizon < 1) throw Error("forecast horizon must be at least 1, got " + std::to_string(horizon));
  if (horizon > kMaxHorizon)
    throw Error("forecast horizon " + std::to_string(horizon) + " is beyond " + std::to_string(kMaxHorizon) +
                " steps; forecast in parts with decode_block_size, or at a coarser frequency");
}

Forecast Model::forecast(const at::Tensor& values_in, const at::Tensor& observed_in,
                         const at::Tensor& series_ids, int64_t horizon, const ForecastOptions& o) {
  const int64_t P = spec_.patch_size;
  if (head_->predicts_raw_values())
    throw Error("head plugin '" + spec_.head.name + "' predicts classes (token ids), not quantiles of values: a "
                "quantile forecast means nothing for it; draw samples instead (model:generate)");
  check_horizon(horizon);
  if (o.decode_block_size < 0 || o.decode_block_size % P != 0)
    throw Error("decode_block_size must be 0 (one pass) or a positive multiple of the patch size " +
                std::to_string(P) + ", got " + std::to_string(o.decode_block_size));
  if (values_in.dim() != 3 || observed_in.sizes() != values_in.sizes() || values_in.size(0) < 1 ||
      values_in.size(1) < 1 || values_in.size(2) < 1)
    throw Error("forecast needs values and observed of one non-empty shape (series, variates, steps), got " +
                c10::str(values_in.sizes()) + " and " + c10::str(observed_in.sizes()));
  std::vector<double> levels = o.levels.empty() ? head_->default_levels() : o.levels;
  std::sort(levels.begin(), levels.end());
  for (double l : levels)
    if (!(l > 0 && l < 1)) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", l);
      throw Error(std::string("forecast levels must lie strictly between 0 and 1, got ") + text);
    }
  if (o.roles.defined()) check_covariates(o, values_in.size(0), values_in.size(1), horizon);
  static_input(o.statics, values_in);  // before any pass: the model's set, of the values' shape
  if (o.sign_average && (o.roles.defined() || o.statics.defined()))
    throw Error("sign_average does not apply to forecasts with covariates: a target's relation to its covariates "
                "need not be odd");
  for (size_t i = 0; i < o.contexts.size(); ++i) {
    if (o.contexts[i] < 1)
      throw Error("forecast contexts must be at least 1 step each, got " + std::to_string(o.contexts[i]));
    if (std::find(o.contexts.begin(), o.contexts.begin() + static_cast<std::ptrdiff_t>(i), o.contexts[i]) !=
        o.contexts.begin() + static_cast<std::ptrdiff_t>(i))
      throw Error("forecast contexts name " + std::to_string(o.contexts[i]) + " steps twice");
  }
  check_origins_count(o.check_origins, "forecast check_origins");
  if (o.box_cox) {
    if (!std::isnan(*o.box_cox) && !(*o.box_cox >= 0 && *o.box_cox <= 1)) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", *o.box_cox);
      throw Error(std::string("box_cox's exponent must lie in [0, 1] (0: log, 1: none), got ") + text);
    }
    if (o.season < 1) throw Error("forecast season must be at least 1 step (1: none), got " + std::to_string(o.season));
    if (o.box_cox_check || o.box_cox_average)
      return guarded_box_cox_forecast(values_in, observed_in, series_ids, horizon, levels, o);
    return box_cox_forecast(values_in, observed_in, series_ids, horizon, levels, o);
  }
  if (o.sign_average) return sign_averaged_forecast(values_in, observed_in, series_ids, horizon, levels, o);
  if (!o.contexts.empty()) return context_ensemble(values_in, observed_in, series_ids, horizon, levels, o);
  // Values stay float64 up to the scaler, which works in float64: a series of values beyond
  // float32's range (1e39) is scaled, not overflowed to infinity and dropped.
  const at::Tensor values = values_in.to(at::kDouble);
  const at::Tensor observed = observed_in.to(at::kBool) & values.isfinite();
  check_observed(observed);

  const int64_t B = values.size(0), V = values.size(1);
  const int64_t patches = (values.size(2) + P - 1) / P + (horizon + P - 1) / P;
  const int64_t rows = std::max<int64_t>(1, kTokensPerPass / std::max<int64_t>(1, V * patches));
  std::vector<Forecast> parts;
  for (int64_t b = 0; b < B; b += rows) {
    check_interrupt(o.interrupt);
    const int64_t n = std::min(rows, B - b);
    ForecastOptions part = o;
    if (o.roles.defined()) part.roles = o.roles.narrow(0, b, n);
    if (o.future.defined()) part.future = o.future.narrow(0, b, n);
    if (o.statics.defined()) part.statics = o.statics.narrow(0, b, n);
    parts.push_back(forecast_rows(values.narrow(0, b, n), observed.narrow(0, b, n),
                                  series_ids.narrow(0, b, n), horizon, levels, part));
  }
  if (parts.size() == 1) return std::move(parts.front());
  Forecast f{levels, {}, {}, {}};
  auto cat = [&](at::Tensor Forecast::*field, int64_t dim) {
    std::vector<at::Tensor> pieces;
    for (auto& part : parts) pieces.push_back(part.*field);
    return at::cat(pieces, dim);
  };
  f.quantiles = cat(&Forecast::quantiles, 1);
  f.median = cat(&Forecast::median, 0);
  if (o.mean) f.mean = cat(&Forecast::mean, 0);
  return f;
}

// f(x) and -f(-x) at mirrored levels: the level set is closed under q -> 1-q, so level q of the
// average pairs q of the one forecast with 1-q of the other. Each is sorted along Q and the
// mirrored one reverses its order as it is negated, so the average stays sorted.
Forecast Model::sign_averaged_forecast(const at::Tensor& values, const at::Tensor& observed,
                                       const at::Tensor& series_ids, int64_t horizon,
                                       const std::vector<double>& levels, const ForecastOptions& o) {
  constexpr double kSame = 1e-12;  // 1 - 0.7 is 0.3 to within a rounding
  auto near = [&](double l) {
    return std::any_of(levels.begin(), levels.end(), [&](double k) { return std::abs(k - l) < kSame; });
  };
  // The levels asked for, and the mirror of each that is not one of them (asked levels are kept
  // as given, so the passes forecast exactly them).
  std::vector<double> both = levels;
  for (double l : levels)
    if (!near(1 - l)) both.push_back(1 - l);
  std::sort(both.begin(), both.end());
  ForecastOptions each = o;
  each.sign_average = false;
  each.levels = both;
  const Forecast plus = forecast(values, observed, series_ids, horizon, each);
  const Forecast minus = forecast(values.neg(), observed, series_ids, horizon, each);
  auto index_of = [&](double l) {
    const auto it = std::lower_bound(both.begin(), both.end(), l - kSame);
    return static_cast<int64_t>(it - both.begin());
  };
  std::vector<int64_t> own, mirrored;
  for (double l : levels) own.push_back(index_of(l)), mirrored.push_back(index_of(1 - l));
  const at::Tensor own_rows = at::tensor(own, at::kLong), mirrored_rows = at::tensor(mirrored, at::kLong);
  Forecast f{levels, {}, {}, {}};
  f.quantiles = (plus.quantiles.index_select(0, own_rows) - minus.quantiles.index_select(0, mirrored_rows)) / 2;
  f.median = (plus.median - minus.median) / 2;
  if (o.mean) f.mean = (plus.mean - minus.mean) / 2;
  return f;
}

// Each forecast reads the last n = min(c, T) steps (the values are right-aligned: the forecast
// starts where each row ends); the known-future covariates over the horizon serve them all.
// Contexts that reach the same n are one forecast, weighed by their count. A series with a
// variate unobserved over the last n steps reads its whole history for that context: a short
// context hedges the long one, it does not refuse a series with a recent gap.
Forecast Model::context_ensemble(const at::Tensor& values, const at::Tensor& observed, const at::Tensor& series_ids,
                                 int64_t horizon, const std::vector<double>& levels, const ForecastOptions& o) {
  ForecastOptions each = o;
  each.contexts.clear();
  each.levels = levels;
  const int64_t T = values.size(2);
  std::map<int64_t, int64_t> weight;  // steps read -> the contexts that read that many
  for (int64_t c : o.contexts) ++weight[std::min(c, T)];
  const at::Tensor seen = observed.to(at::kBool) & values.isfinite();  // as forecast() reads them
  std::optional<Forecast> whole;  // the whole history's, for the series a short context leaves blind
  Forecast sum{levels, {}, {}, {}};
  for (const auto& [n, w] : weight) {
    const at::Tensor blind = seen.narrow(2, T - n, n).any(-1).logical_not().any(-1);  // (B)
    Forecast f;
    if (!blind.any().item<bool>()) {
      f = forecast(values.narrow(2, T - n, n), observed.narrow(2, T - n, n), series_ids, horizon, each);
    } else {
      if (!whole) whole = forecast(values, observed, series_ids, horizon, each);
      f = *whole;
      const at::Tensor rows = blind.logical_not().nonzero().squeeze(1);
      if (rows.numel() > 0) {
        auto pick = [&](const at::Tensor& t) { return t.defined() ? t.index_select(0, rows) : t; };
        ForecastOptions part = each;
        part.roles = pick(o.roles), part.future = pick(o.future), part.statics = pick(o.statics);
        const Forecast g = forecast(pick(values).narrow(2, T - n, n), pick(observed).narrow(2, T - n, n),
                                    pick(series_ids), horizon, part);
        f.quantiles = whole->quantiles.index_copy(1, rows, g.quantiles);
        f.median = whole->median.index_copy(0, rows, g.median);
        if (o.mean) f.mean = whole->mean.index_copy(0, rows, g.mean);
      }
    }
    // Out of place: the forecasts are inference tensors, which refuse in-place updates outside
    // inference mode.
    const double share = static_cast<double>(w) / static_cast<double>(o.contexts.size());
    const bool first = !sum.quantiles.defined();
    sum.quantiles = first ? f.quantiles * share : sum.quantiles + f.quantiles * share;
    sum.median = first ? f.median * share : sum.median + f.median * share;
    if (o.mean) sum.mean = first ? f.mean * share : sum.mean + f.mean * share;
  }
  return sum;
}

// Each target row's transform is forecast and every quantile mapped back: the map is
// increasing, so level q of the one is level q of the other, exactly. The mean is no quantile:
// it is the integral of the mapped quantile function, over the levels forecast_rows averages.
Forecast Model::box_cox_forecast(const at::Tensor& values_in, const at::Tensor& observed_in,
                                 const at::Tensor& series_ids, int64_t horizon, const std::vector<double>& levels,
                                 const ForecastOptions& o) {
  const at::Tensor values = values_in.to(at::kDouble).contiguous();
  const at::Tensor seen = (observed_in.to(at::kBool) & values.isfinite()).contiguous();
  const int64_t B = values.size(0), V = values.size(1), T = values.size(2);
  const at::Tensor roles =
      o.roles.defined() ? o.roles.to(at::kCPU, at::kLong).contiguous() : at::full({B, V}, static_cast<int64_t>(VariateRole::target), at::kLong);
  auto role = roles.accessor<int64_t, 2>();
  // Each row's exponent; NaN: the row is forecast as it is (a covariate, or a value <= 0). And its
  // unit: (y^l - 1) / l keeps y's variation only while y^l is not lost against the 1 (1e-40 with
  // l = 1 is), so a row whose mean lies far from 1 is transformed in units of a power of two near
  // its mean, y / u, and mapped back times u; Guerrero's exponent does not depend on the unit.
  std::vector<double> lambda(static_cast<size_t>(B * V), std::numeric_limits<double>::quiet_NaN());
  std::vector<double> unit(static_cast<size_t>(B * V), 1.0);
  at::Tensor moved = values.clone();
  auto v = values.accessor<double, 3>();
  auto s = seen.accessor<bool, 3>();
  auto m = moved.accessor<double, 3>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t r = 0; r < V; ++r) {
      if (role[b][r] != static_cast<int64_t>(VariateRole::target)) continue;
      std::vector<double> row(static_cast<size_t>(T), std::numeric_limits<double>::quiet_NaN());
      bool positive = true;
      for (int64_t t = 0; t < T; ++t)
        if (s[b][r][t]) row[static_cast<size_t>(t)] = v[b][r][t], positive = positive && v[b][r][t] > 0;
      if (!positive) continue;
      const double l = std::isnan(*o.box_cox) ? guerrero_lambda(row, o.season) : *o.box_cox;
      lambda[static_cast<size_t>(b * V + r)] = l;
      double mean = 0, n = 0;
      for (double y : row)
        if (!std::isnan(y)) n += 1, mean += (y - mean) / n;  // a running mean: finite for 1e308s too
      const double octave = std::round(std::log2(mean));
      const double u = n > 0 && (octave < -20 || octave > 40) ? std::exp2(octave) : 1.0;
      unit[static_cast<size_t>(b * V + r)] = u;
      for (int64_t t = 0; t < T; ++t)
        if (s[b][r][t]) m[b][r][t] = box_cox(v[b][r][t] / u, l);
    }
  std::vector<double> asked = levels;
  if (o.mean) {
    const std::vector<double> grid = mean_levels();
    asked.insert(asked.end(), grid.begin(), grid.end());
    std::sort(asked.begin(), asked.end());
    asked.erase(std::unique(asked.begin(), asked.end()), asked.end());
  }
  ForecastOptions each = o;
  each.box_cox.reset();
  each.levels = asked;
  each.mean = false;
  Forecast f = forecast(moved, observed_in, series_ids, horizon, each);
  at::Tensor quantiles = f.quantiles.to(at::kDouble).contiguous(), median = f.median.to(at::kDouble).contiguous();
  auto q = quantiles.accessor<double, 4>();
  auto md = median.accessor<double, 3>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t r = 0; r < V; ++r) {
      const double l = lambda[static_cast<size_t>(b * V + r)], u = unit[static_cast<size_t>(b * V + r)];
      if (std::isnan(l)) continue;
      for (int64_t h = 0; h < horizon; ++h) {
        for (int64_t k = 0; k < quantiles.size(0); ++k) q[k][b][r][h] = u * inverse_box_cox(q[k][b][r][h], l);
        md[b][r][h] = u * inverse_box_cox(md[b][r][h], l);
      }
    }
  auto rows_of = [&](const std::vector<double>& wanted) {
    std::vector<int64_t> rows;
    for (double l : wanted) rows.push_back(std::lower_bound(asked.begin(), asked.end(), l) - asked.begin());
    return at::tensor(rows, at::kLong);
  };
  Forecast out{levels, quantiles.index_select(0, rows_of(levels)), median, {}};
  if (o.mean) out.mean = quantiles.index_select(0, rows_of(mean_levels())).mean(0);
  return out;
}

Forecast Model::forecast_rows(const at::Tensor& values_in, const at::Tensor& observed_in,
                              const at::Tensor& series_ids, int64_t horizon,
                              const std::vector<double>& levels, const ForecastOptions& o) {
  const int64_t P = spec_.patch_size;
  // Everything the head is asked for, once: the levels, the median, and the mean's grid.
  const std::vector<double> mean_grid = o.mean ? mean_levels() : std::vector<double>{};
  std::vector<double> asked = levels;
  asked.push_back(0.5);
  asked.insert(asked.end(), mean_grid.begin(), mean_grid.end());
  std::sort(asked.begin(), asked.end());
  asked.erase(std::unique(asked.begin(), asked.end()), asked.end());
  auto rows_of = [&](const std::vector<double>& wanted) {
    std::vector<int64_t> rows;
    for (double l : wanted) rows.push_back(std::lower_bound(asked.begin(), asked.end(), l) - asked.begin());
    return at::tensor(rows, at::kLong);
  };
  const int64_t median_row = rows_of({0.5})[0].item<int64_t>();

  const int64_t B = values_in.size(0), V = values_in.size(1), T = values_in.size(2);
  const int64_t K = (horizon + P - 1) / P;
  const int64_t pad = (P - T % P) % P;
  const int64_t n_ctx = (T + pad) / P;
  const int64_t block = o.decode_block_size ? std::min(o.decode_block_size / P, K) : K;

  c10::InferenceMode guard;
  ForwardContext ctx;
  ctx.precision = o.precision;
  // Data units in float64, as the scaler computes them (float32 on MPS, which has no float64).
  auto dopts = at::TensorOptions().dtype(device_.is_mps() ? at::kFloat : at::kDouble).device(device_);
  auto bopts = dopts.dtype(at::kBool);
  at::Tensor observed = observed_in.to(device_);
  at::Tensor values = at::where(observed, values_in.to(dopts), at::zeros({}, dopts));
  // The scaler's floor (min_scale 1e-6) is absolute: a series of values 1e-30 in size would be
  // flattened to its level and forecast like a constant. Such a series (every value below 2^-10
  // in size) is forecast scaled up by a power of two, and its quantiles scaled back: exact in
  // floating point, and nothing changes for any other series.
  const at::Tensor size = values.abs().amax(-1, /*keepdim=*/true);
  const at::Tensor small = (size > 0) & (size < std::ldexp(1.0, -10));
  const double most = device_.is_mps() ? 120 : 1000;  // powers of two the scaler's dtype holds
  const at::Tensor gain =
      at::where(small, at::exp2((-at::floor(at::log2(at::where(small, size, 1.0)))).clamp_max(most)), 1.0);
  values = values * gain;
  std::tie(values, observed) = observe_last_patch(values, observed, P);
  // Left padding stays "missing" and is hidden from attention.
  values = at::cat({at::zeros({B, V, pad}, dopts), values}, -1);
  observed = at::cat({at::zeros({B, V, pad}, bopts), observed}, -1);
  const at::Tensor ids = series_ids.to(device_);

  // Covariates: known-future rows are observed through the horizon (their values, scaled as their
  // history), past-only rows are hidden from the forecast's start on, as targets are until their
  // medians are committed.
  const at::Tensor roles = o.roles.defined() ? o.roles.to(device_) : at::Tensor();
  at::Tensor target_rows = at::ones({B, V, 1}, bopts), lead_rows = at::zeros({B, V, 1}, bopts);
  at::Tensor future, future_seen;  // (B, V, K P): known-future rows' horizon values, with covariates only
  if (roles.defined()) {
    target_rows = rows_of_role(roles, VariateRole::target);
    lead_rows = rows_of_role(roles, VariateRole::future);
    future = at::zeros({B, V, K * P}, dopts), future_seen = at::zeros({B, V, K * P}, bopts);
    if (o.future.defined()) {
      const at::Tensor given = o.future.narrow(2, 0, horizon).to(dopts);
      future_seen.narrow(2, 0, horizon).copy_(lead_rows & given.isfinite());
      future.narrow(2, 0, horizon).copy_(at::where(future_seen.narrow(2, 0, horizon), given, 0.0) * gain);
    }
  }

  // Each block appends n masked patches (as in training: masked, not missing, so they keep their
  // place in attention) and reads them off the outputs one patch earlier, with the statistics
  // there, which masked patches carry over from the last observation. Between blocks the
  // medians become observed data and the scaler runs again over the whole series.
  std::unique_ptr<DecodeCache> cache = block < K && o.kv_cache ? arch_->new_cache(n_ctx + K) : nullptr;
  std::vector<at::Tensor> blocks;  // (A, B, V, n*P) in data units, at the `asked` levels
  std::optional<Prepared> first;  // the first block's: its lags and matches, from the history alone, serve every block
  for (int64_t done = 0; done < K;) {
    check_interrupt(o.interrupt);
    const int64_t n = std::min(block, K - done), known = n_ctx + done;
    at::Tensor keep = at::cat({at::ones({B, V, n_ctx}, bopts), target_rows.expand({B, V, done}) | lead_rows,
                               lead_rows.expand({B, V, n})}, -1);
    const at::Tensor next_future = future.defined() ? future.narrow(2, done * P, n * P) : at::zeros({B, V, n * P}, dopts);
    const at::Tensor next_seen = future.defined() ? future_seen.narrow(2, done * P, n * P) : at::zeros({B, V, n * P}, bopts);
    Prepared p = prepare(at::cat({values, at::where(lead_rows, next_future, 0.0)}, -1),
                         at::cat({observed, next_seen}, -1), ids, keep, roles, o.statics, first ? &*first : nullptr);
    if (!first) first = p;
    at::Tensor out;  // the head's output for the n patches
    {
      AutocastGuard autocast(device_.type(), o.precision);
      if (cache) {  // feed only what the cache has not seen; commit the known patches
        const int64_t from = cache->length, count = known + n - from;
        PatchInput part{p.in.tokens.narrow(2, from, count), p.in.series_ids,
                        p.in.patch_valid.narrow(2, from, count), p.in.roles, p.in.statics,
                        p.in.covariate_match.defined() ? p.in.covariate_match.narrow(2, from, count) : at::Tensor()};
        at::Tensor h = arch_->forward_cached(part, *cache, known - from, ctx).narrow(2, known - 1 - from, n);
        out = head_->forward(h, ctx);
      } else if (o.graph) {
        out = graphed_head_output(p.in, known - 1, n, ctx);
      } else {
        out = head_->forward(arch_->forward(p.in, ctx).narrow(2, known - 1, n), ctx);
      }
    }
    at::Tensor q = head_->quantiles(out.to(at::kFloat), asked);  // (A, B, V, n, P), float32 or wider
    at::Tensor loc = p.loc.narrow(2, known - 1, n).unsqueeze(-1);
    at::Tensor scale = p.scale.narrow(2, known - 1, n).unsqueeze(-1);
    // Back to data units in the scaler's precision; sinh(80) stays finite.
    at::Tensor real = at::sinh(q.clamp(-80.0, 80.0).to(loc.scalar_type())) * scale + loc;
    real = std::get<0>(clamp_nonfinite(real.flatten(-2)).sort(0));
    blocks.push_back(real);
    done += n;
    if (done < K) {  // targets commit their medians, known-future rows their values
      const at::Tensor median = real[median_row].to(dopts.dtype());
      values = at::cat({values, at::where(target_rows, median, at::where(lead_rows, next_future, 0.0))}, -1);
      observed = at::cat({observed, target_rows.expand({B, V, n * P}) | next_seen}, -1);
    }
  }
  at::Tensor all = (at::cat(blocks, -1).narrow(-1, 0, horizon) / gain).to(at::kCPU, at::kDouble);
  // Finite inputs and finite weights give finite quantiles (the clamps above): NaN means the
  // weights give none, as a diverged run's finite but huge weights do. Never written out.
  const at::Tensor targets = target_rows.to(at::kCPU);
  if (!(all.isfinite() | targets.logical_not()).all().item<bool>())
    throw Error("the model's forecast is not finite (NaN): its weights give no finite output for these series, as "
                "a diverged training run's do; retrain it (a lower learning rate) or load an earlier checkpoint");
  if (roles.defined()) all = at::where(targets, all, std::numeric_limits<double>::quiet_NaN());  // covariates: none
  Forecast f{levels, all.index_select(0, rows_of(levels)), all[median_row], {}};
  if (o.mean) f.mean = all.index_select(0, rows_of(mean_grid)).mean(0);
  return f;
}

at::Tensor Model::graphed_head_output(const PatchInput& in, int64_t from, int64_t n, const ForwardContext& ctx) {
  const std::string key = c10::str(in.tokens.sizes(), in.series_ids.sizes(), in.roles.defined() ? "roles" : "",
                                   in.statics.defined() ? "statics" : "", in.covariate_match.defined() ? "match" : "", from,
                                   "+", n, precision_name(ctx.precision));
  static_assert(kMaxForwardGraphs > 0);
  uint64_t newest = 0;
  for (const auto& [k, g] : forward_graphs_) newest = std::max(newest, g->last_used);
  auto it = forward_graphs_.find(key);
  if (it == forward_graphs_.end()) {
    if (forward_graphs_.size() == kMaxForwardGraphs)  // the least recently used goes
      forward_graphs_.erase(std::min_element(forward_graphs_.begin(), forward_graphs_.end(), [](const auto& a, const auto& b) {
        return a.second->last_used < b.second->last_used;
      }));
    auto g = std::make_unique<ForwardGraph>();
    const auto copy = [](const at::Tensor& t) { return t.defined() ? t.clone() : at::Tensor(); };
    g->in = PatchInput{in.tokens.clone(), in.series_ids.clone(), in.patch_valid.clone(), copy(in.roles),
                       copy(in.statics), copy(in.covariate_match)};
    g->call = make_graphed_call(device_);
    ForwardContext recorded = ctx;
    recorded.host_sync = false, recorded.probe = nullptr;
    ForwardGraph* graph = g.get();
    g->call->capture([this, graph, recorded, from, n] {
      AutocastGuard autocast(device_.type(), recorded.precision);
      graph->out = head_->forward(arch_->forward(graph->in, recorded).narrow(2, from, n), recorded);
    });
    it = forward_graphs_.emplace(key, std::move(g)).first;
  }
  ForwardGraph& g = *it->second;
  g.last_used = newest + 1;
  g.in.tokens.copy_(in.tokens), g.in.series_ids.copy_(in.series_ids), g.in.patch_valid.copy_(in.patch_valid);
  if (in.roles.defined()) g.in.roles.copy_(in.roles);
  if (in.statics.defined()) g.in.statics.copy_(in.statics);
  if (in.covariate_match.defined()) g.in.covariate_match.copy_(in.covariate_match);
  g.call->replay();
  return g.out.clone();  // the next replay writes over `out`
}

}  // namespace orrery
