// The Evaluation tab's drill-down and `orrery plot EVAL_DIR`: one configuration's windows as small
// multiples, each window a row of two panels, the model's fan beside a baseline's on the same
// context and actual values and one value axis, each titled with its MASE and CRPS on that window
// alone.
#include <algorithm>
#include <cstdio>

#include "../plot/theme.h"
#include "views.h"

namespace orrery::ui {

namespace {

std::string scores_of(const EvalWindow& w, const std::string& name) {
  const auto it = w.scores.find(name);
  if (it == w.scores.end()) return name + ": not scored";
  char text[96];
  std::snprintf(text, sizeof text, "%s: MASE %.3g, CRPS %.3g", name.c_str(), it->second.first, it->second.second);
  return text;
}

}  // namespace

std::vector<size_t> configuration_windows(const EvalForecasts& f, const std::string& configuration) {
  std::vector<size_t> out;
  for (size_t i = 0; i < f.windows.size(); ++i)
    if (f.windows[i].configuration() == configuration) out.push_back(i);
  return out;
}

std::vector<std::string> forecast_configurations(const EvalForecasts& f) {
  std::vector<std::string> out;
  for (const auto& w : f.windows)
    if (std::find(out.begin(), out.end(), w.configuration()) == out.end()) out.push_back(w.configuration());
  return out;
}

std::string default_eval_model(const EvalForecasts& f) {
  for (const auto& name : f.forecasters)
    if (!is_eval_baseline(name) && name.find('/') == std::string::npos) return name;
  return f.forecasters.empty() ? "" : f.forecasters.front();
}

std::string default_eval_baseline(const EvalForecasts& f) {
  for (const char* preferred : {"ets", "theta", "seasonal_naive"})
    if (std::find(f.forecasters.begin(), f.forecasters.end(), preferred) != f.forecasters.end()) return preferred;
  return "seasonal_naive";  // always in the file: the normaliser
}

void draw_eval_windows(plot::Canvas& c, plot::Rect r, const EvalForecasts& f, const std::string& configuration,
                       const std::string& model, const std::string& baseline, size_t first, size_t count) {
  const plot::Theme& t = plot::theme();
  const std::vector<size_t> windows = configuration_windows(f, configuration);
  const std::string title = configuration + ": " + model + " beside " + baseline + " (" +
                            std::to_string(windows.size()) + " " + f.split + " window" + (windows.size() == 1 ? "" : "s") + ")";
  const plot::Vec2 th = c.text_size(title);
  c.text({r.x0, r.y0}, title, t.text);
  const plot::Rect body{r.x0, r.y0 + th.y + 6, r.x1, r.y1};
  if (windows.empty() || first >= windows.size()) {
    plot::Plot p(c, body, "", plot::Range().axis("step"), plot::Range().axis(""));
    p.note("no window of " + configuration + " in the forecasts file");
    return;
  }
  const size_t shown = std::min(count, windows.size() - first);
  std::vector<float> weights(shown, 1.f);
  const auto rows = split_rows(body, weights, 12);
  for (size_t k = 0; k < shown; ++k) {
    const EvalWindow& w = f.windows[windows[first + k]];
    const std::string where = w.series + ", window from step " + std::to_string(w.start);
    draw_forecast_pair(c, rows[k], window_snapshot(f, w, model), window_snapshot(f, w, baseline),
                       where + ". " + scores_of(w, model), scores_of(w, baseline), k == 0);
  }
}

}  // namespace orrery::ui
