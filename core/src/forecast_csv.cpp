#include "orrery/forecast_csv.h"

#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "orrery/atomic_file.h"
#include "orrery/checkpoint.h"
#include "orrery/csv.h"
#include "orrery/error.h"
#include "orrery/model.h"

namespace fs = std::filesystem;

namespace orrery {

void forecast_csv(const ForecastCsvOptions& o, const Registry& registry) {
  if (o.horizon < 1) throw Error("forecast: --horizon must be a positive number of steps");
  if (o.context < 1) throw Error("forecast: --context must be positive");
  auto model = load_model(o.model, registry, o.device);

  CsvTable table = read_csv(o.input);
  std::vector<size_t> series;
  int time_col = -1;
  for (size_t i = 0; i < table.names.size(); ++i) {
    if (table.names[i] == "time") time_col = static_cast<int>(i);
    else series.push_back(i);
  }
  if (series.empty()) throw Error(o.input + ": no series columns (every column but \"time\" is one)");
  const int64_t rows = static_cast<int64_t>(table.columns[series[0]].size());
  if (rows == 0) throw Error(o.input + ": no rows");

  // All series in one batch: (S, 1, T), the most recent `context` steps.
  const int64_t T = std::min(rows, o.context), S = static_cast<int64_t>(series.size());
  at::Tensor values = at::zeros({S, 1, T}, at::kFloat);
  at::Tensor observed = at::zeros({S, 1, T}, at::kBool);
  auto v = values.accessor<float, 3>();
  auto m = observed.accessor<bool, 3>();
  for (int64_t s = 0; s < S; ++s)
    for (int64_t t = 0; t < T; ++t) {
      const double x = table.columns[series[s]][rows - T + t];
      v[s][0][t] = std::isfinite(x) ? static_cast<float>(x) : 0.f;
      m[s][0][t] = std::isfinite(x);
    }
  ForecastOptions fo;
  fo.decode_block_size = o.decode_block_size;
  Forecast f = model->forecast(values, observed, at::zeros({S, 1}, at::kLong), o.horizon, fo);
  at::Tensor q = f.quantiles.to(at::kDouble).contiguous();
  auto qa = q.accessor<double, 4>();  // (Q, S, 1, H)

  double t_last = NAN, dt = NAN;
  if (time_col >= 0 && rows >= 2) {
    const auto& tc = table.columns[time_col];
    t_last = tc[rows - 1], dt = tc[rows - 1] - tc[rows - 2];
  }
  std::ostringstream out;
  out.precision(10);
  out << "step";
  if (std::isfinite(dt)) out << ",time";
  for (size_t s : series)
    for (double l : f.levels) out << "," << table.names[s] << "_q" << l;
  out << "\n";
  for (int64_t h = 0; h < o.horizon; ++h) {
    out << h + 1;
    if (std::isfinite(dt)) out << "," << t_last + dt * (h + 1);
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
