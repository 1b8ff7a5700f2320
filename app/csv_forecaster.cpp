// The dashboard's CSV forecast through `orrery forecast`'s own path (forecast_csv_table), so the
// window shows the numbers the command prints, and a baseline fitted on the same column.
#include "csv_forecaster.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <sstream>

#include "orrery/error.h"
#include "orrery/host/baselines.h"
#include "orrery/host/csv.h"
#include "orrery/host/forecast_csv.h"
#include "orrery/host/load_model.h"

namespace orrery {
namespace {

// The context drawn before the forecast: this many horizons (as the Evaluation tab's windows).
constexpr size_t kShownHorizons = 4;
// The longest horizon the window draws (a fan of 10,000 steps already fills a screen many times).
constexpr int64_t kLongestDrawn = 10000;

// The model of the last forecast, kept while its file is unchanged: loading is the slow part, and
// a user trying settings forecasts with one model many times.
struct ModelCache {
  std::string key;
  std::unique_ptr<Model> model;
};

std::string model_key(const std::string& path) {
  std::error_code ec;
  std::ostringstream key;
  key << path;
  for (const auto& p : {std::filesystem::path(path), std::filesystem::path(path) / "model.safetensors"}) {
    const auto t = std::filesystem::last_write_time(p, ec);
    if (!ec) key << '|' << t.time_since_epoch().count();
  }
  return key.str();
}

std::vector<double> tail(const std::vector<double>& v, size_t n) {
  return {v.end() - static_cast<std::ptrdiff_t>(std::min(n, v.size())), v.end()};
}

void forecast_column(const ui::CsvForecastSettings& s, const Registry& registry, ModelCache& cache,
                      const Interrupt& interrupt, ui::CsvForecastResult& r);

// The file's columns, then the forecast of one of them.
ui::CsvForecastResult forecast(const ui::CsvForecastSettings& s, const Registry& registry, ModelCache& cache,
                               const Interrupt& interrupt) {
  ui::CsvForecastResult r;
  if (s.model.empty()) throw Error("name a model: a run folder, Orrery weights or a released checkpoint folder");
  if (s.input.empty()) throw Error("name a CSV file to forecast");
  const CsvTable table = read_csv(s.input);
  for (const auto& n : table.names)
    if (n != "time") r.columns.push_back(n);
  try {  // the columns stay, for the picker, whatever else is wrong
    forecast_column(s, registry, cache, interrupt, r);
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

void forecast_column(const ui::CsvForecastSettings& s, const Registry& registry, ModelCache& cache,
                      const Interrupt& interrupt, ui::CsvForecastResult& r) {
  // Drawn whole: longer horizons are orrery forecast's to write.
  if (s.horizon > kLongestDrawn)
    throw Error("the dashboard draws horizons up to " + std::to_string(kLongestDrawn) + " steps, got " +
                std::to_string(s.horizon) + "; orrery forecast --horizon " + std::to_string(s.horizon) + " writes it as CSV");
  if (s.season < 1) throw Error("--season must be at least 1 step (1: none), got " + std::to_string(s.season));
  ForecastCsvOptions o;
  o.names = {"--column", "--covariates", "--horizon", "--context"};
  o.model = s.model;
  o.input = s.input;
  o.past_covariates = s.covariates;
  o.horizon = s.horizon;
  o.interrupt = &interrupt;
  o.contexts = s.contexts;
  o.box_cox = s.box_cox;
  o.box_cox_check = s.box_cox_check;
  o.box_cox_average = s.box_cox_average;
  o.season = s.season;
  std::string column = s.column;
  for (const auto& n : r.columns)
    if (column.empty() && std::find(s.covariates.begin(), s.covariates.end(), n) == s.covariates.end()) column = n;
  if (column.empty()) throw Error(s.input + ": every series column is a covariate; leave one to forecast");
  o.targets = {column};
  const CsvForecast f = forecast_csv_table(o, [&]() -> Model& {
    const std::string key = model_key(s.model);
    if (!cache.model || cache.key != key) {
      cache.model.reset();
      cache.model = load_model(s.model, registry);
      cache.key = key;
    }
    return *cache.model;
  });
  r.csv = csv_forecast_text(f);
  // The model by its folder: a run's name, or a checkpoint's ("model.safetensors" names nothing).
  std::filesystem::path named = std::filesystem::path(s.model).lexically_normal();
  if (named.filename().empty() || named.filename() == "model.safetensors") named = named.parent_path();
  r.model_name = named.filename().string();

  const size_t shown = kShownHorizons * static_cast<size_t>(s.horizon);
  ui::ForecastSeries series{column, tail(f.histories[0], shown), {}, f.quantiles[0], {}, {}};
  for (const auto& c : f.covariates) series.covariates.push_back({c.known_future, tail(c.history, shown), c.ahead});
  r.model = {r.model_name, -1, f.levels, {series}};
  if (!s.baseline.empty()) {
    interrupt.check();
    series.quantiles = make_baseline(s.baseline, &interrupt)->forecast(f.histories[0], s.season, s.horizon, f.levels);
    r.baseline = {s.baseline, -1, f.levels, {series}};
  }
}

}  // namespace

ui::CsvForecaster make_csv_forecaster(const Registry& registry) {
  auto cache = std::make_shared<ModelCache>();
  return {[&registry, cache](const ui::CsvForecastSettings& s, const Interrupt& interrupt) {
            return forecast(s, registry, *cache, interrupt);
          },
          baseline_names()};
}

}  // namespace orrery
