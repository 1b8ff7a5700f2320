// eval_forecasts.jsonl (core/include/orrery/host/eval_forecasts.h) as plain values, for the Evaluation
// tab's drill-down and `orrery plot EVAL_DIR`. Unlike eval.json, which the dashboard polls while
// another process may still be writing it, this file is opened on request and written whole
// (atomically), so a line that is not what it should be is an error naming the file and line.
#include <fstream>

#include "orrery/error.h"
#include "orrery/host/eval_forecasts.h"
#include "run.h"

namespace orrery::ui {

namespace {

constexpr size_t kMaxLevels = 1000;  // quantile heads forecast tens; a file with more is damaged

std::vector<double> numbers(const Json& j) {  // null (a missing value) as NaN
  std::vector<double> out;
  if (!j.is_array()) throw std::runtime_error("expected a list of numbers");
  for (const auto& v : j) out.push_back(v.is_number() ? v.get<double>() : kNaN);
  return out;
}

EvalWindow window(const Json& j, size_t levels) {
  EvalWindow w;
  w.dataset = j.at("dataset").get<std::string>(), w.frequency = j.at("frequency").get<std::string>();
  w.term = j.at("term").get<std::string>(), w.series = j.at("series").get<std::string>();
  w.start = j.at("start").get<int64_t>(), w.season = j.at("season").get<int64_t>();
  w.history = numbers(j.at("history")), w.actual = numbers(j.at("actual"));
  for (const auto& [name, quantiles] : j.at("forecasts").items()) {
    auto& rows = w.forecasts[name];
    for (const auto& level : quantiles) rows.push_back(numbers(level));
    // Drawn against the header's levels and the actual values: a mismatch would draw a wrong fan.
    if (rows.size() != levels)
      throw std::runtime_error("\"" + name + "\" has " + std::to_string(rows.size()) + " quantile rows for the header's " +
                               std::to_string(levels) + " levels");
    for (const auto& row : rows)
      if (row.size() != w.actual.size())
        throw std::runtime_error("\"" + name + "\" forecasts " + std::to_string(row.size()) + " steps for " +
                                 std::to_string(w.actual.size()) + " actual values");
  }
  for (const auto& [name, pair] : j.at("scores").items()) {
    const auto v = numbers(pair);
    if (v.size() != 2) throw std::runtime_error("a score is [MASE, CRPS]");
    w.scores[name] = {v[0], v[1]};
  }
  return w;
}

}  // namespace

EvalForecasts read_eval_forecasts(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path + " (orrery eval writes it beside eval.json; --no-forecasts leaves it out)");
  EvalForecasts f;
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = path + ":" + std::to_string(number);
    Json j;
    try {
      j = Json::parse(line);
    } catch (const std::exception& e) {
      throw Error(where + ": not JSON (" + e.what() + ")");
    }
    if (number == 1) {
      if (!j.is_object() || !j.contains("orrery_eval_forecasts"))
        throw Error(where + ": not a forecasts file of orrery eval (no \"orrery_eval_forecasts\" header)");
      const Json& v = j["orrery_eval_forecasts"];
      if (!v.is_number_integer() || v.get<int64_t>() != kEvalForecastsVersion)
        throw Error(path + " is a forecasts file of version " + v.dump() + ", this orrery reads version " +
                    std::to_string(kEvalForecastsVersion) + ": run orrery eval again to write it anew");
      try {
        f.split = j.at("split").get<std::string>();
        f.levels = numbers(j.at("levels"));
        f.forecasters = j.at("forecasters").get<std::vector<std::string>>();
      } catch (const std::exception& e) {
        throw Error(where + ": the header is not a forecasts file's (" + std::string(e.what()) + ")");
      }
      if (f.levels.empty() || f.levels.size() > kMaxLevels)
        throw Error(where + ": the header names " + std::to_string(f.levels.size()) + " levels; a forecasts file holds 1 to " +
                    std::to_string(kMaxLevels));
      for (double l : f.levels)
        if (!(l > 0 && l < 1)) throw Error(where + ": the header's levels must lie between 0 and 1");
      continue;
    }
    try {
      f.windows.push_back(window(j, f.levels.size()));
    } catch (const std::exception& e) {
      throw Error(where + ": not a window of forecasts (" + std::string(e.what()) + ")");
    }
  }
  if (number == 0) throw Error(path + " is empty: not a forecasts file of orrery eval");
  return f;
}

ForecastSnapshot window_snapshot(const EvalForecasts& f, const EvalWindow& w, const std::string& forecaster) {
  ForecastSnapshot s;
  s.label = w.configuration();
  s.levels = f.levels;
  ForecastSeries one;
  one.name = w.series;
  one.history = w.history, one.target = w.actual;
  if (const auto it = w.forecasts.find(forecaster); it != w.forecasts.end()) one.quantiles = it->second;
  s.series.push_back(std::move(one));
  return s;
}

}  // namespace orrery::ui
