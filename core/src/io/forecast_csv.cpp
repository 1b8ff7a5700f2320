#include "orrery/host/forecast_csv.h"

#include "orrery/precision.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

#include "orrery/atomic_file.h"
#include "orrery/host/covariate_regression.h"
#include "orrery/host/csv.h"
#include "orrery/error.h"
#include "orrery/batch.h"
#include "orrery/host/forecast_request.h"
#include "orrery/host/load_model.h"
#include "orrery/one_hot.h"
#include "orrery/options.h"
#include "orrery/host/series.h"
#include "orrery/static_values.h"

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

// `o.future`, checked: at least H data rows, and a time column (if any) that continues the
// input's. Its categorical columns are kept as text.
CsvTable read_future(const ForecastCsvOptions& o, int64_t horizon, double t_last, double dt) {
  CsvTable table = read_csv(o.future, o.categorical);
  const int64_t rows = static_cast<int64_t>(table.rows());
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
  return table;
}

// A row of the one series after its targets: a covariate column, or one category of a
// categorical one (docs/covariates.md).
struct CovariateRow {
  std::string label;            // for errors: a.csv: column "c", or column "c" = "cat"
  VariateRole role;
  std::vector<double> history;  // the input's steps
  std::vector<double> ahead;    // known-future: the horizon's values, each known
};

// The covariates named by `names` (all of one role) as rows, in order; a categorical column
// becomes one row per category seen in its history (and, known-future, over the horizon).
// `future` is the checked --future file for known-future covariates, else null.
void add_covariate_rows(const ForecastCsvOptions& o, const CsvTable& input, const CsvTable* future,
                        const std::vector<std::string>& names, VariateRole role, int64_t horizon,
                        std::vector<CovariateRow>& out) {
  const std::string flag = role == VariateRole::past ? o.names.past : "--future-covariates";
  auto categorical = [&](const std::string& n) {
    return std::find(o.categorical.begin(), o.categorical.end(), n) != o.categorical.end();
  };
  auto gap = [&](const std::string& name, int64_t h) {
    return Error(o.future + ": column " + quote_input(name) + " has no value in data row " + std::to_string(h + 1) +
                 "; a known-future covariate must be known at every horizon step");
  };
  for (const auto& name : names) {
    const size_t i = column_index(input, o.input, name, flag);
    const std::string label = o.input + ": column " + quote_input(name);
    if (!categorical(name)) {
      CovariateRow row{label, role, input.columns[i], {}};
      if (future) {
        const auto& col = future->columns[column_index(*future, o.future, name, flag)];
        for (int64_t h = 0; h < horizon; ++h) {
          if (!std::isfinite(col[h])) throw gap(name, h);
          if (std::fabs(col[h]) > kMaxForecastMagnitude)
            throw Error(o.future + ": column " + quote_input(name) + " is beyond +-1e150 in data row " +
                        std::to_string(h + 1) + ", where the forecast's float64 scaling overflows; rescale it");
          row.ahead.push_back(col[h]);
        }
      }
      out.push_back(std::move(row));
      continue;
    }
    std::vector<std::string> cells = input.text[i];
    const size_t T = cells.size();
    if (future) {
      const auto& col = future->text[column_index(*future, o.future, name, flag)];
      cells.insert(cells.end(), col.begin(), col.begin() + horizon);
    }
    OneHot categories = one_hot(cells, label + (future ? " with " + o.future + "'s" : ""));
    for (size_t k = 0; k < categories.categories.size(); ++k) {
      std::vector<double>& values = categories.rows[k];
      CovariateRow row{label + " = " + quote_input(categories.categories[k]), role,
                       std::vector<double>(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(T)),
                       std::vector<double>(values.begin() + static_cast<std::ptrdiff_t>(T), values.end())};
      for (int64_t h = 0; h < static_cast<int64_t>(row.ahead.size()); ++h)
        if (!std::isfinite(row.ahead[static_cast<size_t>(h)])) throw gap(name, h);
      out.push_back(std::move(row));
    }
  }
}

}  // namespace

CsvForecast forecast_csv_table(const ForecastCsvOptions& o, const std::function<Model&()>& open_model) {
  if (!o.horizon) throw Error("forecast: " + o.names.horizon + " is required");
  if (*o.horizon < 1) throw Error("forecast: " + o.names.horizon + " must be at least 1 step, got " + std::to_string(*o.horizon));
  Model::check_horizon(*o.horizon);  // before covariate rows are sized by it
  check_contexts(o.contexts, "forecast: " + o.names.context);
  if (!o.future_covariates.empty() && o.future.empty())
    throw Error("forecast: --future-covariates needs --future FILE with their values over the horizon");
  if (o.future_covariates.empty() && !o.future.empty())
    throw Error("forecast: --future " + o.future + " holds known-future covariates, but --future-covariates names none");
  const int64_t horizon = *o.horizon;
  const bool covariates = !o.past_covariates.empty() || !o.future_covariates.empty();
  for (const auto& c : o.categorical)
    if (std::find(o.past_covariates.begin(), o.past_covariates.end(), c) == o.past_covariates.end() &&
        std::find(o.future_covariates.begin(), o.future_covariates.end(), c) == o.future_covariates.end() &&
        std::find(o.static_covariates.begin(), o.static_covariates.end(), c) == o.static_covariates.end())
      throw Error("forecast: --categorical names " + quote_input(c) + ", which --past-covariates, "
                  "--future-covariates and --static-covariates do not: only a covariate can be categorical");
  CsvTable table = read_csv(o.input, o.categorical);
  // The columns in order: targets, past-only covariates, known-future covariates; each once.
  std::vector<std::pair<std::string, VariateRole>> named;
  for (const auto& c : o.targets) named.emplace_back(c, VariateRole::target);
  for (const auto& c : o.past_covariates) named.emplace_back(c, VariateRole::past);
  for (const auto& c : o.future_covariates) named.emplace_back(c, VariateRole::future);
  const std::string flags[] = {o.names.target, o.names.past, "--future-covariates"};
  std::vector<size_t> picked;
  for (const auto& [name, role] : named) {
    const size_t i = column_index(table, o.input, name, flags[static_cast<int>(role)]);
    if (std::find(picked.begin(), picked.end(), i) != picked.end())
      throw Error("forecast: column " + quote_input(name) + " is named twice (" + o.names.target + ", " + o.names.past +
                  ", --future-covariates)");
    picked.push_back(i);
  }
  // Static covariates: one value (a categorical one's: one category) each, wherever the column is
  // given; not series of their own.
  std::vector<GivenStatic> statics;
  for (const auto& name : o.static_covariates) {
    const size_t i = column_index(table, o.input, name, "--static-covariates");
    if (std::find(picked.begin(), picked.end(), i) != picked.end())
      throw Error("forecast: column " + quote_input(name) + " is named twice (--target, --past-covariates, "
                  "--future-covariates, --static-covariates)");
    picked.push_back(i);
    const bool category = std::find(o.categorical.begin(), o.categorical.end(), name) != o.categorical.end();
    auto given = [&](size_t row) { return category ? !table.text[i][row].empty() : std::isfinite(table.columns[i][row]); };
    auto text = [&](size_t row) {
      std::ostringstream t;
      if (category) t << quote_input(table.text[i][row]);
      else t << table.columns[i][row];
      return t.str();
    };
    std::optional<size_t> first;
    for (size_t row = 0; row < table.rows(); ++row) {
      if (!given(row)) continue;
      if (!first) first = row;
      else if (category ? table.text[i][row] != table.text[i][*first] : table.columns[i][row] != table.columns[i][*first])
        throw Error(o.input + ": column " + quote_input(name) + " is a static covariate (one " +
                    (category ? "category" : "value") + " per series), but it is " + text(*first) + " on line " +
                    std::to_string(*first + 2) + " and " + text(row) + " on line " + std::to_string(row + 2));
    }
    if (!first) throw Error(o.input + ": static covariate column " + quote_input(name) + " has no value on any line");
    if (category) statics.push_back({name, std::nullopt, table.text[i][*first]});
    else statics.push_back({name, table.columns[i][*first], ""});
  }
  int time_col = -1;
  std::vector<size_t> targets;  // column indices
  for (size_t i = 0; i < table.names.size(); ++i) {
    if (table.names[i] == "time") time_col = static_cast<int>(i);
    else if (o.targets.empty() && std::find(picked.begin(), picked.end(), i) == picked.end()) targets.push_back(i);
  }
  if (!o.targets.empty()) targets.assign(picked.begin(), picked.begin() + static_cast<std::ptrdiff_t>(o.targets.size()));
  if (targets.empty())
    throw Error(o.input + (covariates ? ": every series column is a covariate; name the targets with " + o.names.target
                                      : ": no series columns (every column but \"time\" is one)"));
  std::vector<std::vector<double>> series;
  std::vector<std::string> names, labels;
  for (size_t i : targets) {
    series.push_back(table.columns[i]);
    names.push_back(table.names[i]);
    labels.push_back(o.input + ": column " + quote_input(table.names[i]));
  }
  const size_t steps = series.front().size();
  if (steps == 0) throw Error(o.input + ": no data rows below the header");
  const double dt = time_col >= 0 && steps >= 2 ? regular_step(table.columns[time_col], o.input) : NAN;
  const double t_last = std::isfinite(dt) ? table.columns[time_col].back() : NAN;
  const int64_t S = static_cast<int64_t>(targets.size());

  if (o.regression && o.future_covariates.empty())
    throw Error("forecast: --regression fits the targets on --future-covariates; name them (and --future)");
  check_regression_lags(o.regression_lags, "forecast: --regression-lags");
  if (o.regression_lags > 0 && !o.regression) throw Error("forecast: --regression-lags needs --regression");
  // The fit leaves out the first K steps (their lags are unknown) and tests a covariate on at least
  // three pairs of consecutive steps after them: fewer rows would fit nothing, without a word.
  if (o.regression_lags > 0 && o.regression_lags + 4 > static_cast<int64_t>(steps))
    throw Error("forecast: --regression-lags " + std::to_string(o.regression_lags) + " needs at least " +
                std::to_string(o.regression_lags + 4) + " rows, and " + o.input + " has " + std::to_string(steps) +
                ": the fit leaves out the first K steps; give at most " +
                std::to_string(std::max<int64_t>(static_cast<int64_t>(steps) - 4, 0)) + " lags");
  if (o.regression && !o.past_covariates.empty())
    throw Error("forecast: --regression reads known-future covariates only; --past-covariates have no values over "
                "the horizon to regress on");
  std::vector<CovariateRow> rows;  // past-only ones, then known-future ones
  add_covariate_rows(o, table, nullptr, o.past_covariates, VariateRole::past, horizon, rows);
  if (!o.future_covariates.empty()) {
    const CsvTable future = read_future(o, horizon, t_last, dt);
    add_covariate_rows(o, table, &future, o.future_covariates, VariateRole::future, horizon, rows);
  }

  Model& model = open_model();
  // The static covariates in the model's order; the model reads exactly these.
  const std::vector<std::string> read = model.static_covariates();
  if (!read.empty() && statics.empty())
    throw Error("forecast: the model reads static covariates (" + join_names(read) + "); name their columns with "
                "--static-covariates (and --categorical for those that hold categories)");
  const std::vector<double> static_values_ =
      statics.empty() ? std::vector<double>{} : static_values(read, statics, "forecast: --static-covariates");

  // One request (forecast_request.h): with covariates as rows, the targets are the rows of one
  // series; otherwise (or through --regression, each target fitted on the known-future ones) each
  // target is a series of its own.
  ForecastRequest request;
  request.horizon = horizon;
  request.contexts = o.contexts;
  request.regression = o.regression;
  request.regression_lags = o.regression_lags;
  request.options.decode_block_size = o.decode_block_size;
  request.options.precision = parse_precision(o.precision, "forecast: --precision");
  request.options.interrupt = o.interrupt;
  request.options.sign_average = o.sign_average;
  request.combine = o.combine, request.combine_rule = o.combine_rule, request.combine_season = o.season;
  request.combine_check = o.combine_check;
  if (o.box_cox) request.options.box_cox = std::numeric_limits<double>::quiet_NaN(), request.options.season = o.season;
  request.options.box_cox_check = o.box_cox && o.box_cox_check;
  request.options.box_cox_average = o.box_cox && o.box_cox_average;
  request.options.check_origins = o.check_origins;
  std::vector<RequestSeries::Covariate> covariate_rows;
  for (const auto& row : rows) {
    std::vector<double> values = row.history;
    values.insert(values.end(), row.ahead.begin(), row.ahead.end());
    covariate_rows.push_back({row.label, row.role, std::move(values)});
  }
  if (covariates && !o.regression) {
    request.series.push_back({series, labels, covariate_rows, static_values_});
  } else {
    for (int64_t s = 0; s < S; ++s)
      request.series.push_back({{series[static_cast<size_t>(s)]}, {labels[static_cast<size_t>(s)]},
                                o.regression ? covariate_rows : std::vector<RequestSeries::Covariate>{}, static_values_});
  }
  const ForecastAnswer a = answer(model, request);
  CsvForecast out;
  out.names = names;
  out.histories = series;
  out.levels = a.levels;
  for (const auto& each : a.series)
    for (const auto& t : each) out.quantiles.push_back(t.quantiles);

  for (const auto& row : rows)
    out.covariates.push_back({row.label.substr(row.label.find(": column ") + 9), row.role == VariateRole::future,
                              row.history, row.ahead});
  out.t_last = t_last, out.dt = dt;
  return out;
}

std::string csv_forecast_text(const CsvForecast& f) {
  const bool timed = std::isfinite(f.dt);
  const size_t horizon = f.quantiles.empty() || f.quantiles[0].empty() ? 0 : f.quantiles[0][0].size();
  std::ostringstream out;
  out.precision(10);
  out << "step";
  if (timed) out << ",time";
  for (const auto& name : f.names)
    for (double l : f.levels) out << "," << name << "_q" << l;
  out << "\n";
  for (size_t h = 0; h < horizon; ++h) {
    out << h + 1;
    if (timed) out << "," << f.t_last + f.dt * static_cast<double>(h + 1);
    for (const auto& target : f.quantiles)
      for (const auto& level : target) out << "," << level[h];
    out << "\n";
  }
  return out.str();
}

void forecast_csv(const ForecastCsvOptions& o, const Registry& registry) {
  std::unique_ptr<Model> model;
  const std::string text = csv_forecast_text(forecast_csv_table(o, [&]() -> Model& {
    model = load_model(o.model, registry, o.device);
    return *model;
  }));
  if (o.output.empty()) {
    std::cout << text << std::flush;
    if (!std::cout) throw Error("forecast: cannot write standard output (a full disk, or a closed pipe?); give --out FILE");
    return;
  }
  write_file_atomically(o.output, [&](std::ostream& file) { file << text; });
}

}  // namespace orrery
