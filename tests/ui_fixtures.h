#pragma once
// Run folders with known content, written the way RunStore writes them, for the plot and
// dashboard tests.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "orrery/host/file_tree.h"
#include "orrery/json.h"
#include "temp_dir.h"

namespace test {

namespace fs = std::filesystem;
using orrery::Json;

inline fs::path fresh_dir(const std::string& name) { return temp_dir("ui-" + name); }

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_text(const fs::path& p, const std::string& s, bool append = false) {
  fs::create_directories(p.parent_path());
  std::ofstream f(p, append ? std::ios::app : std::ios::trunc);
  f << s;
}

inline Json run_config(const std::string& param, int width, double lr, const std::string& optimizer = "adamw",
                       int steps = 1000) {
  return {{"model", {{"arch", {{"name", "toto2"}, {"options", {{"d_model", width}}}}}, {"d_model", width},
                     {"head", {{"name", "quantile"}, {"options", Json::object()}}},
                     {"param", {{"name", param}, {"options", Json::object()}}}}},
          {"optimizer", {{"name", optimizer}, {"options", {{"lr", lr}}}}},
          {"train", {{"steps", steps}, {"seed", 0}}}};
}

// A run whose train loss follows loss(step) at every `every` steps, with a constant lr.
template <class F>
void write_run(const fs::path& dir, const Json& config, int steps, int every, F loss, bool finished = true) {
  write_text(dir / "config.json", config.dump(2));
  std::string lines;
  double last = NAN;
  for (int s = every; s <= steps; s += every) {
    last = loss(s);
    lines += Json{{"event", "train"}, {"step", s}, {"loss", last}, {"lr", 1e-3}, {"grad_norm", 1.0},
                  {"series_per_s", 100.0}, {"elapsed_s", s * 0.01}, {"eta_s", (steps - s) * 0.01},
                  {"update_rms", {{"adamw:all", 1e-3}}}}.dump() + "\n";
  }
  write_text(dir / "metrics.jsonl", lines);
  if (finished) write_text(dir / "summary.json", Json{{"final_loss", last}, {"steps", steps}}.dump());
}

// Nine levels 0.1..0.9 whose quantiles are constant over the horizon: level i at value i - 4.
inline Json flat_fan_event(int step, int horizon, int history) {
  Json q = Json::array();
  for (int i = 0; i < 9; ++i) q.push_back(std::vector<double>(horizon, i - 4.0));
  std::vector<double> levels;
  for (int i = 1; i <= 9; ++i) levels.push_back(i / 10.0);
  return {{"event", "forecast"}, {"step", step}, {"levels", levels}, {"horizon", horizon},
          {"series", {{{"name", "val/0"}, {"history", std::vector<double>(history, 0.0)},
                       {"target", std::vector<double>(horizon, 0.0)}, {"quantiles", q}}}}};
}

// eval.json as `orrery eval` writes it (core/src/eval/eval_protocol.cpp): every model on every data
// set (monthly, short term), ratio(model, data set) as both ratios and a tenth of it as the raw
// metrics, the summary's geometric means over the data sets.
template <class F>
Json eval_json(const std::vector<std::string>& models, const std::vector<std::string>& datasets, F ratio) {
  Json configs = Json::array(), rows = Json::array(), summary = Json::array();
  for (const auto& d : datasets)
    configs.push_back({{"dataset", d}, {"frequency", "M"}, {"term", "short"}, {"horizon", 12}, {"windows", 2},
                       {"items", 2}, {"season", 12}});
  for (size_t i = 0; i < datasets.size(); ++i)
    for (size_t k = 0; k < models.size(); ++k) {
      const double r = ratio(k, i);
      rows.push_back({{"dataset", datasets[i]}, {"frequency", "M"}, {"term", "short"}, {"model", models[k]},
                      {"mase", r / 10}, {"crps", r / 10}, {"coverage", 0.8}, {"mase_ratio", r}, {"crps_ratio", r}});
    }
  for (size_t k = 0; k < models.size(); ++k) {
    double log_sum = 0;
    for (size_t i = 0; i < datasets.size(); ++i) log_sum += std::log(ratio(k, i));
    const double g = std::exp(log_sum / static_cast<double>(datasets.size()));
    summary.push_back({{"model", models[k]}, {"mase", g}, {"crps", g}, {"coverage", 0.8}, {"configurations", datasets.size()}});
  }
  return {{"protocol", {{"name", "GIFT-Eval"}, {"terms", {"short"}}, {"normaliser", "seasonal_naive"}}},
          {"configurations", configs}, {"rows", rows}, {"summary", summary}, {"table", ""}};
}

}  // namespace test
