#include "orrery/host/forecast_csv.h"

#include "orrery/precision.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <sstream>

#include "orrery/atomic_file.h"
#include "orrery/host/covariate_regression.h"
#include "orrery/host/csv.h"
#include "orrery/error.h"
#include "orrery/batch.h"
#include "orrery/host/load_model.h"
#include "orrery/host/series.h"

namespace orrery {
namespace {

// The step of an evenly spaced time column: the average step from its first to its last row.
// Each step must be within half of the typical (median) step, and each row within a quarter
// step of the line through the first and last rows: printed times are rounded (decimal years
// to two places), but a column with gaps or jitter is refused, since extrapolating it would
// label the forecast with times that mean nothing.
double regular_step(const std::vector<double>& time, const std::string& path) {
  for (size_t r = 0; r < time.size(); ++r)
    if (!std::isfinite(time[r]))
      throw Error(path + ": the time column has no value in data row " + std::to_string(r + 1) +
                  "; give every row a time, or drop the column");
  auto text = [](double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  };
  const size_t n = time.size();
  const double dt = (time[n - 1] - time[0]) / static_cast<double>(n - 1);
  std::vector<double> steps;
  for (size_t r = 1; r < n; ++r) steps.push_back(time[r] - time[r - 1]);
  std::nth_element(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(steps.size() / 2), steps.end());
  const double typical = steps[steps.size() / 2];
  const std::string advice = "; forecasts need evenly spaced rows (leave missing values empty, or drop the column)";
  for (size_t r = 1; r < n; ++r) {
    const double step = time[r] - time[r - 1];
    if (!(step > 0))
      throw Error(path + ": the time column must increase, but data rows " + std::to_string(r) + " and " +
                  std::to_string(r + 1) + " hold " + text(time[r - 1]) + " and " + text(time[r]));
    if (std::fabs(step - typical) > 0.5 * typical)
      throw Error(path + ": the time column is irregular: data rows " + std::to_string(r) + " and " +
                  std::to_string(r + 1) + " are " + text(step) + " apart, but most rows are " + text(typical) +
                  " apart" + advice);
  }
  for (size_t r = 1; r < n; ++r) {
    const double expected = time[0] + dt * static_cast<double>(r);
    if (std::fabs(time[r] - expected) > 0.25 * dt)
      throw Error(path + ": the time column is irregular: data row " + std::to_string(r + 1) + " holds " +
                  text(time[r]) + " where evenly spaced rows put " + text(expected) + advice);
  }
  return dt;
}

// The index of a column named by a flag; the time column and unknown names are errors.
size_t column_index(const CsvTable& table, const std::string& path, const std::string& name, const std::string& flag) {
  const auto at = std::find(table.names.begin(), table.names.end(), name);
  if (name == "time" || at == table.names.end()) {
    std::string names;
    for (const auto& n : table.names)
      if (n != "time") names += (names.empty() ? "" : ", ") + n;
    throw Error(path + ": " + (name == "time" ? "the time column cannot be a series (" + flag + ")"
                                               : "no column " + quote_input(name) + " (named by " + flag + ")") +
                "; its series columns are " + names);
  }
  return static_cast<size_t>(at - table.names.begin());
}

// The known-future covariates' values over the horizon, (1, V, H) with NaN in every other row:
// the first H rows of `o.future`, each column complete, its time (if any) continuing the input's.
at::Tensor future_values(const ForecastCsvOptions& o, int64_t V, int64_t first_row, int64_t horizon, double t_last,
                         double dt) {
  const CsvTable table = read_csv(o.future);
  const int64_t rows = table.columns.empty() ? 0 : static_cast<int64_t>(table.columns.front().size());
  if (rows < horizon)
    throw Error(o.future + ": " + std::to_string(rows) + " data rows, the horizon is " + std::to_string(horizon) +
                ": known-future covariates need a value at every horizon step");
  if (table.has("time") && std::isfinite(dt)) {
    const auto& time = table.column("time");
    for (int64_t h = 0; h < horizon; ++h) {
      const double expected = t_last + dt * static_cast<double>(h + 1);
      if (!(std::fabs(time[h] - expected) <= 0.25 * std::fabs(dt))) {
        std::ostringstream text;
        text << o.future << ": data row " << h + 1 << " holds time " << time[h] << ", but horizon step " << h + 1
             << " is at " << expected << " (" << o.input << "'s last time plus its step): the rows must be the horizon's";
        throw Error(text.str());
      }
    }
  }
  at::Tensor out = at::full({1, V, horizon}, std::numeric_limits<double>::quiet_NaN(), at::kDouble);
  for (size_t i = 0; i < o.future_covariates.size(); ++i) {
    const std::string& name = o.future_covariates[i];
    const auto& col = table.columns[column_index(table, o.future, name, "--future-covariates")];
    for (int64_t h = 0; h < horizon; ++h) {
      if (!std::isfinite(col[h]))
        throw Error(o.future + ": column " + quote_input(name) + " has no value in data row " + std::to_string(h + 1) +
                    "; a known-future covariate must be known at every horizon step");
      if (std::fabs(col[h]) > kMaxForecastMagnitude)
        throw Error(o.future + ": column " + quote_input(name) + " is beyond +-1e150 in data row " +
                    std::to_string(h + 1) + ", where the forecast's float64 scaling overflows; rescale it");
      out[0][first_row + static_cast<int64_t>(i)][h] = col[h];
    }
  }
  return out;
}

}  // namespace

void forecast_csv(const ForecastCsvOptions& o, const Registry& registry) {
  if (!o.horizon) throw Error("forecast: --horizon is required");
  if (*o.horizon < 1) throw Error("forecast: --horizon must be at least 1 step, got " + std::to_string(*o.horizon));
  if (o.context < 1) throw Error("forecast: --context must be at least 1 step, got " + std::to_string(o.context));
  if (!o.future_covariates.empty() && o.future.empty())
    throw Error("forecast: --future-covariates needs --future FILE with their values over the horizon");
  if (o.future_covariates.empty() && !o.future.empty())
    throw Error("forecast: --future " + o.future + " holds known-future covariates, but --future-covariates names none");
  const int64_t horizon = *o.horizon;
  const bool covariates = !o.past_covariates.empty() || !o.future_covariates.empty();
  CsvTable table = read_csv(o.input);
  // The rows in order: targets, past-only covariates, known-future covariates; each column once.
  std::vector<std::pair<std::string, VariateRole>> named;
  for (const auto& c : o.targets) named.emplace_back(c, VariateRole::target);
  for (const auto& c : o.past_covariates) named.emplace_back(c, VariateRole::past);
  for (const auto& c : o.future_covariates) named.emplace_back(c, VariateRole::future);
  const char* flags[] = {"--target", "--past-covariates", "--future-covariates"};
  std::vector<size_t> picked;
  for (const auto& [name, role] : named) {
    const size_t i = column_index(table, o.input, name, flags[static_cast<int>(role)]);
    if (std::find(picked.begin(), picked.end(), i) != picked.end())
      throw Error("forecast: column " + quote_input(name) + " is named twice (--target, --past-covariates, "
                  "--future-covariates)");
    picked.push_back(i);
  }
  int time_col = -1;
  std::vector<size_t> targets;  // column indices
  for (size_t i = 0; i < table.names.size(); ++i) {
    if (table.names[i] == "time") time_col = static_cast<int>(i);
    else if (o.targets.empty() && std::find(picked.begin(), picked.end(), i) == picked.end()) targets.push_back(i);
  }
  if (!o.targets.empty()) targets.assign(picked.begin(), picked.begin() + static_cast<std::ptrdiff_t>(o.targets.size()));
  if (targets.empty())
    throw Error(o.input + (covariates ? ": every series column is a covariate; name the targets with --target"
                                      : ": no series columns (every column but \"time\" is one)"));
  std::vector<size_t> rows = targets;
  rows.insert(rows.end(), picked.begin() + static_cast<std::ptrdiff_t>(o.targets.size()), picked.end());
  std::vector<std::vector<double>> series;
  std::vector<std::string> names, labels;
  for (size_t i : rows) {
    series.push_back(table.columns[i]);
    names.push_back(table.names[i]);
    labels.push_back(o.input + ": column " + quote_input(table.names[i]));
  }
  const size_t steps = series.front().size();
  if (steps == 0) throw Error(o.input + ": no data rows below the header");
  const double dt = time_col >= 0 && steps >= 2 ? regular_step(table.columns[time_col], o.input) : NAN;
  const double t_last = std::isfinite(dt) ? table.columns[time_col].back() : NAN;
  const int64_t S = static_cast<int64_t>(targets.size());
  int64_t V = static_cast<int64_t>(rows.size());

  // --regression: each target becomes its residual on the known-future covariates, which the
  // model then never sees; the fits over the horizon are added back below.
  std::vector<CovariateRegression> fits;
  std::vector<std::vector<double>> regressors;  // each known-future covariate, history then horizon
  if (o.regression) {
    if (o.future_covariates.empty())
      throw Error("forecast: --regression fits the targets on --future-covariates; name them (and --future)");
    if (!o.past_covariates.empty())
      throw Error("forecast: --regression reads known-future covariates only; --past-covariates have no values over "
                  "the horizon to regress on");
    const int64_t first = V - static_cast<int64_t>(o.future_covariates.size());
    const at::Tensor ahead = future_values(o, V, first, horizon, t_last, dt);
    for (int64_t k = first; k < V; ++k) {
      std::vector<double> x = series[static_cast<size_t>(k)];
      for (int64_t h = 0; h < horizon; ++h) x.push_back(ahead[0][k][h].item<double>());
      regressors.push_back(std::move(x));
    }
    for (int64_t s = 0; s < S; ++s) {
      fits.push_back(CovariateRegression::fit(series[static_cast<size_t>(s)], regressors));
      series[static_cast<size_t>(s)] = fits.back().residual(series[static_cast<size_t>(s)], regressors);
    }
    series.resize(static_cast<size_t>(S)), labels.resize(static_cast<size_t>(S));
    V = S;
  }
  const bool rows_of_one_series = covariates && !o.regression;
  SeriesBatch batch = series_batch(series, labels, o.context);

  ForecastOptions fo;
  fo.decode_block_size = o.decode_block_size;
  fo.precision = parse_precision(o.precision, "forecast: --precision");
  fo.interrupt = o.interrupt;
  fo.sign_average = o.sign_average;
  if (rows_of_one_series) {  // one series whose rows are the targets and covariates
    batch.values = batch.values.permute({1, 0, 2}), batch.observed = batch.observed.permute({1, 0, 2});
    std::vector<int64_t> roles(static_cast<size_t>(S), static_cast<int64_t>(VariateRole::target));
    roles.insert(roles.end(), o.past_covariates.size(), static_cast<int64_t>(VariateRole::past));
    roles.insert(roles.end(), o.future_covariates.size(), static_cast<int64_t>(VariateRole::future));
    fo.roles = at::tensor(roles, at::kLong).unsqueeze(0);
    if (!o.future_covariates.empty())
      fo.future = future_values(o, V, V - static_cast<int64_t>(o.future_covariates.size()), horizon, t_last, dt);
  }
  auto model = load_model(o.model, registry, o.device);
  Forecast f = model->forecast(batch.values, batch.observed,
                               at::zeros({batch.values.size(0), batch.values.size(1)}, at::kLong), horizon, fo);
  at::Tensor q = (rows_of_one_series ? f.quantiles.select(1, 0).narrow(1, 0, S).unsqueeze(2)
                                     : f.quantiles).contiguous();
  auto qa = q.accessor<double, 4>();  // (Q, S, 1, H): the targets
  for (int64_t s = 0; s < static_cast<int64_t>(fits.size()); ++s)
    for (int64_t h = 0; h < horizon; ++h) {
      const double shift = fits[static_cast<size_t>(s)].at(regressors, steps + static_cast<size_t>(h));
      for (size_t l = 0; l < f.levels.size(); ++l) qa[static_cast<int64_t>(l)][s][0][h] += shift;
    }
  names.resize(static_cast<size_t>(S));

  std::ostringstream out;
  out.precision(10);
  out << "step";
  if (std::isfinite(dt)) out << ",time";
  for (const auto& name : names)
    for (double l : f.levels) out << "," << name << "_q" << l;
  out << "\n";
  for (int64_t h = 0; h < horizon; ++h) {
    out << h + 1;
    if (std::isfinite(dt)) out << "," << t_last + dt * static_cast<double>(h + 1);
    for (int64_t s = 0; s < S; ++s)
      for (size_t l = 0; l < f.levels.size(); ++l) out << "," << qa[l][s][0][h];
    out << "\n";
  }
  if (o.output.empty()) {
    std::cout << out.str();
    return;
  }
  write_file_atomically(o.output, [&](std::ostream& file) { file << out.str(); });
}

}  // namespace orrery
