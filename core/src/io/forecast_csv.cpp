#include "orrery/host/forecast_csv.h"

#include "orrery/precision.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include "orrery/atomic_file.h"
#include "orrery/host/csv.h"
#include "orrery/error.h"
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

}  // namespace

void forecast_csv(const ForecastCsvOptions& o, const Registry& registry) {
  if (!o.horizon) throw Error("forecast: --horizon is required");
  if (*o.horizon < 1) throw Error("forecast: --horizon must be at least 1 step, got " + std::to_string(*o.horizon));
  if (o.context < 1) throw Error("forecast: --context must be at least 1 step, got " + std::to_string(o.context));
  const int64_t horizon = *o.horizon;
  CsvTable table = read_csv(o.input);
  std::vector<std::vector<double>> series;
  std::vector<std::string> names, labels;
  int time_col = -1;
  for (size_t i = 0; i < table.names.size(); ++i) {
    if (table.names[i] == "time") {
      time_col = static_cast<int>(i);
      continue;
    }
    series.push_back(table.columns[i]);
    names.push_back(table.names[i]);
    labels.push_back(o.input + ": column " + quote_input(table.names[i]));
  }
  if (series.empty()) throw Error(o.input + ": no series columns (every column but \"time\" is one)");
  const size_t rows = series.front().size();
  if (rows == 0) throw Error(o.input + ": no data rows below the header");
  const double dt = time_col >= 0 && rows >= 2 ? regular_step(table.columns[time_col], o.input) : NAN;
  const SeriesBatch batch = series_batch(series, labels, o.context);

  auto model = load_model(o.model, registry, o.device);
  const int64_t S = static_cast<int64_t>(series.size());
  ForecastOptions fo;
  fo.decode_block_size = o.decode_block_size;
  fo.precision = parse_precision(o.precision, "forecast: --precision");
  fo.interrupt = o.interrupt;
  fo.sign_average = o.sign_average;
  Forecast f = model->forecast(batch.values, batch.observed, at::zeros({S, 1}, at::kLong), horizon, fo);
  const at::Tensor q = f.quantiles.contiguous();
  auto qa = q.accessor<double, 4>();  // (Q, S, 1, H)

  std::ostringstream out;
  out.precision(10);
  out << "step";
  if (std::isfinite(dt)) out << ",time";
  for (const auto& name : names)
    for (double l : f.levels) out << "," << name << "_q" << l;
  out << "\n";
  const double t_last = std::isfinite(dt) ? table.columns[time_col].back() : NAN;
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
