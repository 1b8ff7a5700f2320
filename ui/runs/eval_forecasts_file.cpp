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

std::vector<double> numbers(const Json& j) {  // null (a missing value) as NaN
  std::vector<double> out;
  if (!j.is_array()) throw std::runtime_error("expected a list of numbers");
  for (const auto& v : j) out.push_back(v.is_number() ? v.get<double>() : kNaN);
  return out;
}

EvalWindow window(const Json& j) {
  EvalWindow w;
  w.dataset = j.at("dataset").get<std::string>(), w.frequency = j.at("frequency").get<std::string>();
  w.term = j.at("term").get<std::string>(), w.series = j.at("series").get<std::string>();
  w.start = j.at("start").get<int64_t>(), w.season = j.at("season").get<int64_t>();
  w.history = numbers(j.at("history")), w.actual = numbers(j.at("actual"));
  for (const auto& [name, levels] : j.at("forecasts").items()) {
    auto& rows = w.forecasts[name];
    for (const auto& level : levels) rows.push_back(numbers(level));
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
      continue;
    }
    try {
      f.windows.push_back(window(j));
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
