#include "svg_report.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "../plot/svg_canvas.h"
#include "../plot/theme.h"
#include "orrery/error.h"
#include "orrery/host/eval_forecasts.h"
#include "orrery/sort_stably.h"
#include "views.h"

namespace orrery::ui {

std::vector<std::string> write_svg_report(const Workspace& ws, const std::string& out_dir) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw Error("orrery plot: cannot create " + out_dir + ": " + ec.message());
  std::vector<std::string> written;
  constexpr float W = 1200, H = 720;
  const plot::Rect page{16, 16, W - 16, H - 16};
  auto save = [&](plot::SvgCanvas& c, const char* file) {
    const std::string path = (std::filesystem::path(out_dir) / file).string();
    c.save(path);
    written.push_back(path);
  };

  // The newest runs first, coloured as the dashboard colours them (by position in the list).
  // A folder with only an eval.json trained nothing: it has no curves to draw.
  std::vector<std::shared_ptr<const Run>> runs;
  for (const auto& r : ws.runs)
    if (!r->eval || !r->config.is_null() || !r->train_loss.empty()) runs.push_back(r);
  sort_stably(runs, [](const auto& a, const auto& b) { return a->last_write > b->last_write; });
  std::vector<StyledRun> shown;
  for (size_t i = 0; i < runs.size() && i < 10; ++i) shown.push_back({runs[i], plot::run_color(i)});

  if (!shown.empty()) {
    plot::SvgCanvas c(W, H, plot::theme().background);
    draw_loss_view(c, page, shown, LossViewOptions{});
    save(c, "loss.svg");
  }
  for (const auto& run : runs) {
    if (run->forecasts.empty()) continue;
    plot::SvgCanvas c(W, H, plot::theme().background);
    const auto& snap = *run->forecasts.back();
    draw_forecast_grid(c, page, snap, run->name + " - " + snap.label);
    save(c, "forecasts.svg");
    break;
  }
  // Text samples of the shown runs, as tall as they need.
  if (std::any_of(shown.begin(), shown.end(), [](const StyledRun& s) { return !s.run->samples.empty(); })) {
    plot::SvgCanvas measure(W, H, plot::theme().background);
    const float h = std::max(H * 0.5f, draw_samples(measure, page, shown) + 32);
    plot::SvgCanvas c(W, h, plot::theme().background);
    draw_samples(c, {16, 16, W - 16, h - 16}, shown);
    save(c, "samples.svg");
  }
  const auto panels = group_sweep(ws.runs);
  const bool sweep = std::any_of(panels.begin(), panels.end(), is_sweep);
  if (sweep) {
    plot::SvgCanvas c(W, H * 0.75f, plot::theme().background);
    draw_lr_transfer(c, {16, 16, W - 16, H * 0.75f - 16}, panels);
    save(c, "lr_transfer.svg");
  }
  if (!ws.coord_checks.empty()) {
    const CoordCheck& cc = *ws.coord_checks.back();
    plot::SvgCanvas c(W, H * 0.75f, plot::theme().background);
    draw_coord_check(c, {16, 16, W - 16, H * 0.75f - 16}, cc, cc.steps);
    save(c, "coord_check.svg");
  }
  const bool updates = std::any_of(shown.begin(), shown.end(), [](const StyledRun& s) { return !s.run->update_rms.empty(); });
  if (updates) {
    plot::SvgCanvas c(W, H, plot::theme().background);
    draw_optimizer_view(c, page, shown);
    save(c, "optimizer.svg");
  }
  // Every run's evaluation in one table; as tall as its rows need, so no label is squeezed.
  if (std::any_of(ws.runs.begin(), ws.runs.end(), [](const auto& r) { return r->eval != nullptr; })) {
    const EvalTable table = merge_evaluations(ws.runs);
    plot::SvgCanvas measure(W, H, plot::theme().background);
    const float h = std::max(H * 0.75f, eval_view_height(measure, table, 24) + 32);
    plot::SvgCanvas c(W, h, plot::theme().background);
    draw_eval_view(c, {16, 16, W - 16, h - 16}, table, EvalViewOptions{});
    save(c, "eval.svg");
  }
  // An evaluation's windows (its eval_forecasts.jsonl): one file per configuration, every window a row,
  // the model's fan beside the baseline's, named by the run folder when the workspace holds several.
  size_t evaluated = 0;
  for (const auto& r : ws.runs) evaluated += r->eval && std::filesystem::exists(std::filesystem::path(r->dir) / kEvalForecastsFile);
  for (const auto& r : ws.runs) {
    const auto file = std::filesystem::path(r->dir) / kEvalForecastsFile;
    if (!r->eval || !std::filesystem::exists(file)) continue;
    const EvalForecasts f = read_eval_forecasts(file.string());
    if (f.windows.empty())  // an evaluation that scored nothing: say so rather than draw nothing
      std::fprintf(stderr, "orrery: note: plot: %s holds no window, so no windows-*.svg is drawn from it\n",
                   file.string().c_str());
    const std::string model = default_eval_model(f), baseline = default_eval_baseline(f);
    for (const auto& configuration : forecast_configurations(f)) {
      const size_t n = configuration_windows(f, configuration).size();
      const float h = 60 + 220.f * static_cast<float>(n);
      plot::SvgCanvas c(W, h, plot::theme().background);
      draw_eval_windows(c, {16, 16, W - 16, h - 16}, f, configuration, model, baseline, 0, n);
      std::string name = configuration;
      std::replace(name.begin(), name.end(), '/', '-');
      std::string prefix = r->name;
      std::replace(prefix.begin(), prefix.end(), '/', '-');
      save(c, ("windows-" + (evaluated > 1 ? prefix + "-" : std::string()) + name + ".svg").c_str());
    }
  }
  // Studies: one file each, named by its folder when the workspace holds several.
  const auto file_for = [](const std::string& kind, const std::string& folder, size_t count) {
    if (count == 1) return kind + ".svg";
    std::string name = folder;
    std::replace(name.begin(), name.end(), '/', '-');
    return kind + "-" + name + ".svg";
  };
  for (const auto& s : ws.studies) {
    const size_t lines = (s->dims.size() + 4) / 5;
    const float h = std::max(H, 380 + 230.f * static_cast<float>(lines));
    plot::SvgCanvas c(W * 1.25f, h, plot::theme().background);
    draw_search_view(c, {16, 16, W * 1.25f - 16, h - 16}, *s);
    save(c, file_for("search", s->name, ws.studies.size()).c_str());
  }
  for (const auto& s : ws.scalings) {
    plot::SvgCanvas c(W, H * 0.7f, plot::theme().background);
    draw_scaling_view(c, {16, 16, W - 16, H * 0.7f - 16}, *s);
    save(c, file_for("scaling", s->name, ws.scalings.size()).c_str());
  }
  return written;
}

}  // namespace orrery::ui
