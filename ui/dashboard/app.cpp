#include "app.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "imgui_canvas.h"
#include "orrery/error.h"
#include "orrery/host/eval_forecasts.h"
#include "orrery/host/format_duration.h"
#include "plot/svg_canvas.h"
#include "plot/theme.h"
#include "orrery/sort_stably.h"

namespace orrery::ui {

Tab parse_tab(const std::string& name) {
  if (name == "loss") return Tab::loss;
  if (name == "forecasts" || name == "forecast") return Tab::forecasts;
  if (name == "samples") return Tab::samples;
  if (name == "lr" || name == "lr_transfer") return Tab::lr;
  if (name == "diagnostics") return Tab::diagnostics;
  if (name == "eval" || name == "evaluation") return Tab::eval;
  if (name == "search") return Tab::search;
  if (name == "scaling") return Tab::scaling;
  throw Error("ui: --view must be loss, forecasts, samples, lr, diagnostics, eval, search or scaling, got '" + name + "'");
}

namespace {

constexpr size_t kFollowRuns = 8;  // runs shown before the user picks any

ImVec4 status_color(RunStatus s) {
  switch (s) {
    case RunStatus::running: return {0.45f, 0.85f, 0.45f, 1};
    case RunStatus::done: return {0.75f, 0.77f, 0.82f, 1};
    case RunStatus::interrupted: return {0.93f, 0.79f, 0.28f, 1};
    case RunStatus::failed: return {0.95f, 0.40f, 0.40f, 1};
    case RunStatus::stale: return {0.95f, 0.60f, 0.30f, 1};
  }
  return {1, 1, 1, 1};
}

// A region of the current window for a canvas: its rectangle, reserved in the layout.
plot::Rect claim_region(float min_h = 200) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImVec2 avail = ImGui::GetContentRegionAvail();
  avail.y = std::max(avail.y, min_h);
  ImGui::Dummy(avail);
  return {p.x, p.y, p.x + avail.x, p.y + avail.y};
}

bool hovering(const plot::PlotFrame& f) {
  const ImVec2 m = ImGui::GetIO().MousePos;
  return ImGui::IsWindowHovered() && f.area.contains({m.x, m.y});
}

// The index of the x nearest to `x` in an ascending list.
size_t nearest(const std::vector<double>& xs, double x) {
  auto it = std::lower_bound(xs.begin(), xs.end(), x);
  if (it == xs.end()) return xs.size() - 1;
  if (it != xs.begin() && x - *(it - 1) < *it - x) --it;
  return static_cast<size_t>(it - xs.begin());
}

// The item whose point lands nearest the mouse on a plot, closer than `within` pixels (which
// it lowers to the distance found, so one radius can serve several lists); nullptr if none.
// `xy(item)` gives the point's data coordinates.
template <class Items, class XY>
auto nearest_point(const plot::PlotFrame& frame, const Items& items, XY xy, float& within) {
  const ImVec2 m = ImGui::GetIO().MousePos;
  const typename Items::value_type* hit = nullptr;
  for (const auto& item : items) {
    const auto [x, y] = xy(item);
    const plot::Vec2 p = frame.to_pixel(x, y);
    const float d = std::hypot(p.x - m.x, p.y - m.y);
    if (d < within) within = d, hit = &item;
  }
  return hit;
}

// Hovering a forecast's plot: a rule at the step under the mouse and a read-out of the context
// there, or of every quantile and the actual value.
void hover_forecast(ImGuiCanvas& canvas, const plot::PlotFrame& f, const ForecastSnapshot& snap, size_t series) {
  if (!hovering(f) || series >= snap.series.size()) return;
  const ForecastSeries& s = snap.series[series];
  const long t = std::lround(f.x_at(ImGui::GetIO().MousePos.x));
  const float px = f.to_pixel(static_cast<double>(t), f.y.lo).x;
  canvas.line({px, f.area.y0}, {px, f.area.y1}, plot::theme().muted);
  ImGui::BeginTooltip();
  ImGui::Text("t = %ld", t);
  if (t < 0 && -t <= static_cast<long>(s.history.size())) {
    ImGui::Text("context %.4g", s.history[s.history.size() + t]);
  } else if (t >= 0) {
    for (size_t q = 0; q < s.quantiles.size() && q < snap.levels.size(); ++q)
      if (static_cast<size_t>(t) < s.quantiles[q].size()) ImGui::Text("q%02.0f  %.4g", snap.levels[q] * 100, s.quantiles[q][t]);
    if (static_cast<size_t>(t) < s.target.size()) ImGui::Text("actual %.4g", s.target[t]);
  }
  ImGui::EndTooltip();
}

}  // namespace

App::App(Tab first_tab, const std::string& filter, bool show_fps) : first_tab_(first_tab), show_fps_(show_fps) {
  std::snprintf(filter_.InputBuf, sizeof filter_.InputBuf, "%s", filter.c_str());
  filter_.Build();
}

plot::Color App::color_of(const std::string& name) {
  auto it = colors_.find(name);
  if (it == colors_.end()) it = colors_.emplace(name, plot::run_color(colors_.size())).first;
  return it->second;
}

void App::frame(const Workspace& ws, const std::string& job_line) {
  csv_shown_ = false;
  now_ = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("Orrery", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoBringToFrontOnFocus |
                   ImGuiWindowFlags_NoSavedSettings);
  header(ws, job_line);

  std::vector<std::shared_ptr<const Run>> shown;
  for (const auto& r : ws.runs) {
    color_of(r->name);
    const std::string text = r->name + " " + r->arch + " " + r->param + " " + r->optimizer;
    if (filter_.PassFilter(text.c_str())) shown.push_back(r);
  }
  if (follow_) {  // the newest runs, until the user picks
    std::vector<std::shared_ptr<const Run>> newest = shown;
    sort_stably(newest, [](const auto& a, const auto& b) { return a->last_write > b->last_write; });
    selected_.clear();
    for (size_t i = 0; i < newest.size() && i < kFollowRuns; ++i) selected_.insert(newest[i]->name);
  }
  std::vector<StyledRun> selected;
  for (const auto& r : shown)
    if (selected_.count(r->name)) selected.push_back({r, color_of(r->name)});

  const float left_w = std::max(420.f, ImGui::GetContentRegionAvail().x * 0.36f);
  ImGui::BeginChild("runs", {left_w, 0}, true);
  runs_table(shown);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("views", {0, 0}, false);
  if (ImGui::BeginTabBar("tabs")) {
    auto tab = [&](const char* label, Tab t) {
      const ImGuiTabItemFlags f = first_frame_ && first_tab_ == t ? ImGuiTabItemFlags_SetSelected : 0;
      return ImGui::BeginTabItem(label, nullptr, f);
    };
    if (tab("Loss", Tab::loss)) loss_tab(selected), ImGui::EndTabItem();
    if (tab("Forecasts", Tab::forecasts)) forecasts_tab(selected, shown), ImGui::EndTabItem();
    if (tab("Samples", Tab::samples)) samples_tab(selected), ImGui::EndTabItem();
    if (tab("LR transfer", Tab::lr)) lr_tab(shown), ImGui::EndTabItem();
    if (tab("Diagnostics", Tab::diagnostics)) diagnostics_tab(ws, selected), ImGui::EndTabItem();
    if (tab("Evaluation", Tab::eval)) eval_tab(shown), ImGui::EndTabItem();
    if (tab("Search", Tab::search)) search_tab(ws), ImGui::EndTabItem();
    if (tab("Scaling", Tab::scaling)) scaling_tab(ws), ImGui::EndTabItem();
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
  ImGui::End();
  first_frame_ = false;
}

void App::header(const Workspace& ws, const std::string& job_line) {
  int running = 0;
  for (const auto& r : ws.runs) running += r->status(now_) == RunStatus::running;
  ImGui::TextColored({0.37f, 0.66f, 1.f, 1.f}, "Orrery");
  ImGui::SameLine();
  ImGui::Text("%s   %zu runs, %d running", ws.root.c_str(), ws.runs.size(), running);
  if (!job_line.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("|");
    ImGui::SameLine();
    ImGui::TextUnformatted(job_line.c_str());
  }
  if (!show_fps_) return;
  ImGui::SameLine(ImGui::GetWindowWidth() - 110);
  ImGui::TextDisabled("%.0f fps", ImGui::GetIO().Framerate);
}

void App::runs_table(const std::vector<std::shared_ptr<const Run>>& shown_in) {
  ImGui::SetNextItemWidth(-150);
  filter_.Draw("##filter");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("filter: a,b = a or b; -c = not c (name, arch, param, optimizer)");
  ImGui::SameLine();
  if (ImGui::SmallButton("all")) {
    follow_ = false, selected_.clear();
    for (const auto& r : shown_in) selected_.insert(r->name);
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("none")) follow_ = false, selected_.clear();
  ImGui::SameLine();
  if (ImGui::SmallButton(follow_ ? "newest*" : "newest")) follow_ = true;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("follow the %zu newest runs", kFollowRuns);

  enum Col { name, status, step, loss, ranks, eta, speed, arch, param, optimizer, lr, width, count };
  const ImGuiTableFlags flags = ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable | ImGuiTableFlags_Sortable |
                                ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("runs", count, flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_DefaultSort, 240);
  for (const char* c : {"status", "step", "loss", "ranks", "ETA", "series/s", "arch", "param", "optimizer", "lr", "width"})
    ImGui::TableSetupColumn(c);
  ImGui::TableHeadersRow();

  std::vector<std::shared_ptr<const Run>> rows = shown_in;
  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsCount > 0) {
    const auto& s = specs->Specs[0];
    const bool asc = s.SortDirection == ImGuiSortDirection_Ascending;
    auto key = [&](const Run& r) -> double {
      switch (s.ColumnIndex) {
        case step: return static_cast<double>(r.step);
        case loss: return r.latest_loss();
        case speed: return r.series_per_s;
        case ranks: return static_cast<double>(r.world_size);
        case eta: return r.eta_s;
        case lr: return r.lr;
        case width: return static_cast<double>(r.width);
        case status: return static_cast<double>(r.status(now_));
        default: return 0;
      }
    };
    auto text = [&](const Run& r) -> const std::string& {
      switch (s.ColumnIndex) {
        case arch: return r.arch;
        case param: return r.param;
        case optimizer: return r.optimizer;
        default: return r.name;
      }
    };
    sort_stably(rows, [&](const auto& a, const auto& b) {
      const bool numeric = s.ColumnIndex != name && s.ColumnIndex != arch && s.ColumnIndex != param && s.ColumnIndex != optimizer;
      if (numeric) {
        const double x = key(*a), y = key(*b);
        if (std::isnan(x) || std::isnan(y)) return !std::isnan(x) && std::isnan(y);  // blanks last
        return asc ? x < y : x > y;
      }
      return asc ? text(*a) < text(*b) : text(*a) > text(*b);
    });
  }

  for (const auto& rp : rows) {
    const Run& r = *rp;
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(name);
    const bool is_selected = selected_.count(r.name) > 0;
    // A swatch of the run's colour in front of the name, filled while it is plotted.
    const plot::Color c = color_of(r.name);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float sz = ImGui::GetTextLineHeight() * 0.6f, pad = (ImGui::GetTextLineHeight() - sz) / 2;
    if (is_selected) ImGui::GetWindowDrawList()->AddRectFilled({p.x, p.y + pad}, {p.x + sz, p.y + pad + sz}, to_imgui(c));
    else ImGui::GetWindowDrawList()->AddRect({p.x, p.y + pad}, {p.x + sz, p.y + pad + sz}, to_imgui(c));
    ImGui::SetCursorScreenPos({p.x + sz + 6, p.y});
    if (ImGui::Selectable(r.name.c_str(), is_selected, ImGuiSelectableFlags_SpanAllColumns)) {
      follow_ = false;
      if (ImGui::GetIO().KeyCtrl) {
        if (is_selected) selected_.erase(r.name);
        else selected_.insert(r.name);
      } else {
        selected_ = {r.name};
      }
    }
    if (ImGui::IsItemHovered() && !r.error.empty()) ImGui::SetTooltip("%s", r.error.c_str());
    const RunStatus st = r.status(now_);
    ImGui::TableSetColumnIndex(status);
    ImGui::TextColored(status_color(st), "%s", status_name(st));
    ImGui::TableSetColumnIndex(step);
    if (r.eval && r.config.is_null() && r.train_loss.empty()) ImGui::TextDisabled("eval");  // trains nothing
    else if (r.planned_steps > 0) ImGui::Text("%lld/%lld", static_cast<long long>(r.step), static_cast<long long>(r.planned_steps));
    else ImGui::Text("%lld", static_cast<long long>(r.step));
    ImGui::TableSetColumnIndex(loss);
    if (std::isfinite(r.latest_loss())) ImGui::Text("%.4f", r.latest_loss());
    ImGui::TableSetColumnIndex(ranks);  // data-parallel processes
    ImGui::Text("%lld", static_cast<long long>(r.world_size));
    ImGui::TableSetColumnIndex(eta);
    if (st == RunStatus::running) ImGui::TextUnformatted(format_duration(r.eta_s).c_str());
    ImGui::TableSetColumnIndex(speed);  // the whole job's, and each rank's
    if (std::isfinite(r.series_per_s) && r.world_size > 1)
      ImGui::Text("%.0f = %lld x %.0f", r.series_per_s, static_cast<long long>(r.world_size),
                  r.series_per_s / static_cast<double>(r.world_size));
    else if (std::isfinite(r.series_per_s))
      ImGui::Text("%.0f", r.series_per_s);
    ImGui::TableSetColumnIndex(arch);
    ImGui::TextUnformatted(r.arch.c_str());
    ImGui::TableSetColumnIndex(param);
    ImGui::TextUnformatted(r.param.c_str());
    ImGui::TableSetColumnIndex(optimizer);
    ImGui::TextUnformatted(r.optimizer.c_str());
    ImGui::TableSetColumnIndex(lr);
    if (std::isfinite(r.lr)) ImGui::Text("%.3g", r.lr);
    ImGui::TableSetColumnIndex(width);
    if (r.width > 0) ImGui::Text("%lld", static_cast<long long>(r.width));
  }
  ImGui::EndTable();
}

void App::loss_tab(const std::vector<StyledRun>& selected) {
  float w = static_cast<float>(loss_.smoothing);
  ImGui::SetNextItemWidth(180);
  if (ImGui::SliderFloat("smoothing", &w, 0.f, 0.99f, "%.2f")) loss_.smoothing = w;
  ImGui::SameLine();
  ImGui::Checkbox("log x", &loss_.log_x);
  ImGui::SameLine();
  ImGui::Checkbox("log y", &loss_.log_y);
  ImGui::SameLine();
  ImGui::Checkbox("validation", &loss_.show_validation);
  ImGui::SameLine();
  ImGui::Checkbox("x = seconds", &loss_.time_axis);

  ImGuiCanvas canvas(ImGui::GetWindowDrawList());
  const auto frames = draw_loss_view(canvas, claim_region(), selected, loss_);
  // Hover: a rule at the mouse and every run's value at the nearest logged point.
  for (const auto& f : frames) {
    if (!hovering(f)) continue;
    const double x = f.x_at(ImGui::GetIO().MousePos.x);
    canvas.line({ImGui::GetIO().MousePos.x, f.area.y0}, {ImGui::GetIO().MousePos.x, f.area.y1}, plot::theme().muted);
    ImGui::BeginTooltip();
    const bool is_lr = &f == &frames[1], is_bits = frames.size() > 2 && &f == &frames[2];
    for (const auto& s : selected) {
      const Run& r = *s.run;
      // The loss, every optimizer group's learning rate, or the validation bits per unit.
      std::vector<std::pair<std::string, const Curve*>> curves;
      if (is_lr)
        for (const auto& [group, curve] : r.lr_curves) curves.emplace_back(group, &curve);
      else
        curves.emplace_back("", is_bits ? &r.val_bits : &r.train_loss);
      for (const auto& [group, curve] : curves) {
        if (curve->empty()) continue;
        std::vector<double> xs;
        for (double st : curve->x) xs.push_back(run_x(r, st, loss_.time_axis));
        const size_t i = nearest(xs, x);
        const auto smoothed = is_lr || is_bits || loss_.smoothing <= 0 ? curve->y : smooth(curve->y, loss_.smoothing);
        canvas.circle(f.to_pixel(xs[i], smoothed[i]), 4, s.color, true);
        ImGui::TextColored({s.color.r / 255.f, s.color.g / 255.f, s.color.b / 255.f, 1}, "%s", r.name.c_str());
        ImGui::SameLine();
        if (is_lr) ImGui::Text("step %.0f  %s lr %.3g", curve->x[i], group.c_str(), curve->y[i]);
        else if (is_bits) ImGui::Text("step %.0f  %.4f bits per %s", curve->x[i], curve->y[i], r.val_unit.c_str());
        else ImGui::Text("step %.0f  loss %.4f (smoothed %.4f)", curve->x[i], curve->y[i], smoothed[i]);
      }
    }
    ImGui::EndTooltip();
  }
}

void App::forecasts_tab(const std::vector<StyledRun>& selected, const std::vector<std::shared_ptr<const Run>>& shown) {
  if (csv_worker_) {
    if (ImGui::RadioButton("training snapshots", !csv_view_)) csv_view_ = false;
    ImGui::SameLine();
    if (ImGui::RadioButton("forecast a CSV", csv_view_)) csv_view_ = true;
  }
  if (csv_worker_ && csv_view_) csv_forecast_view(shown);
  else snapshots_view(selected, shown);
}

void App::snapshots_view(const std::vector<StyledRun>& selected, const std::vector<std::shared_ptr<const Run>>& shown) {
  // The selected runs with forecasts first, then every other run that has some.
  std::vector<StyledRun> candidates;
  for (const auto& s : selected)
    if (!s.run->forecasts.empty()) candidates.push_back(s);
  for (const auto& r : shown)
    if (!r->forecasts.empty() && !selected_.count(r->name)) candidates.push_back({r, color_of(r->name)});
  std::vector<const StyledRun*> with;
  for (const auto& s : candidates) with.push_back(&s);
  if (with.empty()) {
    ImGuiCanvas canvas(ImGui::GetWindowDrawList());
    ForecastSnapshot none;
    draw_forecast(canvas, claim_region(), none, 0, "no run has forecast snapshots yet");
    return;
  }
  const StyledRun* cur = with.front();
  for (const auto* s : with)
    if (s->run->name == forecast_run_) cur = s;
  forecast_run_ = cur->run->name;
  ImGui::SetNextItemWidth(260);
  if (ImGui::BeginCombo("run", forecast_run_.c_str())) {
    for (const auto* s : with)
      if (ImGui::Selectable(s->run->name.c_str(), s == cur)) forecast_run_ = s->run->name, cur = s;
    ImGui::EndCombo();
  }
  const auto& snaps = cur->run->forecasts;
  const int last = static_cast<int>(snaps.size()) - 1;
  if (latest_snapshot_) snapshot_ = last;
  snapshot_ = std::clamp(snapshot_, 0, last);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(220);
  if (ImGui::SliderInt("snapshot", &snapshot_, 0, last, snaps[snapshot_]->label.c_str())) latest_snapshot_ = snapshot_ == last;
  ImGui::SameLine();
  ImGui::Checkbox("latest", &latest_snapshot_);
  const ForecastSnapshot& snap = *snaps[snapshot_];
  const int n_series = static_cast<int>(snap.series.size());
  series_ = std::clamp(series_, 0, std::max(n_series - 1, 0));
  ImGui::SameLine();
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left)) series_ = (series_ + n_series - 1) % std::max(n_series, 1);
  ImGui::SameLine();
  if (ImGui::ArrowButton("##next", ImGuiDir_Right)) series_ = (series_ + 1) % std::max(n_series, 1);
  ImGui::SameLine();
  ImGui::Text("series %d/%d", series_ + 1, n_series);
  ImGui::SameLine();
  ImGui::Checkbox("all series", &grid_);

  ImGuiCanvas canvas(ImGui::GetWindowDrawList());
  const plot::Rect region = claim_region();
  if (grid_) {
    draw_forecast_grid(canvas, region, snap, cur->run->name + " - " + snap.label);
    return;
  }
  const std::string title = cur->run->name + " - " + snap.label + " - " +
                            (series_ < n_series ? snap.series[series_].name : std::string());
  const plot::PlotFrame f = draw_forecast(canvas, region, snap, static_cast<size_t>(series_), title);
  if (series_ < n_series) hover_forecast(canvas, f, snap, static_cast<size_t>(series_));
}

void App::enable_csv_forecasts(CsvForecaster forecaster, std::function<void()> wake, const CsvForecastSettings& settings,
                              bool open, const std::string& export_prefix) {
  csv_worker_ = std::make_unique<ForecastWorker>(std::move(forecaster), std::move(wake));
  csv_ = settings;
  csv_view_ = open;
  if (!export_prefix.empty()) export_prefix_ = export_prefix, export_pending_ = true;
}

bool App::busy() const {
  return csv_worker_ && (png_request_ || (csv_shown_ && (csv_drawn_busy_ || export_pending_)));
}

std::string App::csv_error() const {
  if (export_error_) return export_message_;
  if (!csv_worker_) return "";
  const auto r = csv_worker_->result();
  return r && r->settings == csv_ ? r->error : "";
}

namespace {

// ImGui::InputText onto a std::string, grown as the user types.
bool input_string(const char* label, std::string& s, float width) {
  ImGui::SetNextItemWidth(width);
  auto grow = [](ImGuiInputTextCallbackData* d) {
    if (d->EventFlag == ImGuiInputTextFlags_CallbackResize) {
      auto* str = static_cast<std::string*>(d->UserData);
      str->resize(static_cast<size_t>(d->BufTextLen));
      d->Buf = str->data();
    }
    return 0;
  };
  return ImGui::InputText(label, s.data(), s.capacity() + 1, ImGuiInputTextFlags_CallbackResize, grow, &s);
}

bool input_count(const char* label, int64_t& value, float width) {
  int v = static_cast<int>(std::clamp<int64_t>(value, -1000000000, 1000000000));
  ImGui::SetNextItemWidth(width);
  if (!ImGui::InputInt(label, &v)) return false;
  value = v;
  return true;
}

std::string contexts_text(const std::vector<int64_t>& contexts) {
  std::string out;
  for (int64_t c : contexts) out += (out.empty() ? "" : ",") + std::to_string(c);
  return out;
}

// The model's fan beside the baseline's on one value axis, or the model's alone; the frames drawn.
std::vector<plot::PlotFrame> draw_csv_forecast(plot::Canvas& c, plot::Rect r, const CsvForecastResult& res) {
  const CsvForecastSettings& s = res.settings;
  const std::string column = res.model.series.empty() ? s.column : res.model.series[0].name;
  std::string left = res.model_name + ": " + column + ", context " + contexts_text(s.contexts);
  if (s.contexts.size() > 1) left += " (ensemble)";
  if (s.box_cox)
    left += std::string(", Box-Cox") + (s.box_cox_average ? " averaged" : "") + (s.box_cox_check ? " where checked" : "") +
            " (season " + std::to_string(s.season) + ")";
  if (res.baseline.series.empty()) return {draw_forecast(c, r, res.model, 0, left)};
  const auto [model, baseline] =
      draw_forecast_pair(c, r, res.model, res.baseline, left, s.baseline + " (season " + std::to_string(s.season) + ")");
  return {model, baseline};
}

}  // namespace

void App::csv_controls(const std::vector<std::shared_ptr<const Run>>& shown, const CsvForecastResult* result) {
  CsvForecastSettings& s = csv_;
  input_string("model", s.model, 270);
  ImGui::SameLine();
  if (ImGui::BeginCombo("##runs", "runs", ImGuiComboFlags_NoPreview)) {
    for (const auto& r : shown) {
      std::error_code ec;
      if (!std::filesystem::exists(std::filesystem::path(r->dir) / "model.safetensors", ec)) continue;
      if (ImGui::Selectable(r->name.c_str(), s.model == r->dir)) s.model = r->dir;
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  input_string("file", s.input, 270);
  // The file's columns come back with each forecast of it.
  const bool columns_known = result && result->settings.input == s.input && !result->columns.empty();
  const std::string shown_column = s.column.empty() && result && !result->model.series.empty()
                                       ? result->model.series[0].name : s.column;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(150);
  if (ImGui::BeginCombo("column", shown_column.empty() ? "first" : shown_column.c_str())) {
    if (columns_known)
      for (const auto& c : result->columns)
        if (ImGui::Selectable(c.c_str(), c == shown_column)) s.column = c;
    ImGui::EndCombo();
  }

  input_count("horizon", s.horizon, 100);
  ImGui::SameLine();
  input_count("context", s.contexts.back(), 100);
  ImGui::SameLine();
  bool ensemble = s.contexts.size() > 1;
  if (ImGui::Checkbox("ensemble", &ensemble)) {
    // The default ensemble's shape: the context and its last eighth, averaged level by level.
    const int64_t whole = s.contexts.back();
    s.contexts = ensemble ? std::vector<int64_t>{std::max<int64_t>(whole / 8, 1), whole} : std::vector<int64_t>{whole};
  }
  if (s.contexts.size() > 1) {
    ImGui::SameLine();
    input_count("short", s.contexts.front(), 90);
  }
  ImGui::SameLine();
  ImGui::Checkbox("Box-Cox", &s.box_cox);
  if (s.box_cox) {
    ImGui::SameLine();
    ImGui::Checkbox("checked", &s.box_cox_check);
    ImGui::SameLine();
    ImGui::Checkbox("averaged", &s.box_cox_average);
  }
  ImGui::SameLine();
  input_count("season", s.season, 90);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(130);
  if (ImGui::BeginCombo("baseline", s.baseline.empty() ? "none" : s.baseline.c_str())) {
    if (ImGui::Selectable("none", s.baseline.empty())) s.baseline.clear();
    for (const auto& b : csv_worker_->forecaster().baselines)
      if (ImGui::Selectable(b.c_str(), b == s.baseline)) s.baseline = b;
    ImGui::EndCombo();
  }
  std::string covariates;
  for (const auto& c : s.covariates) covariates += (covariates.empty() ? "" : ", ") + c;
  ImGui::SetNextItemWidth(270);
  if (ImGui::BeginCombo("covariates", covariates.empty() ? "none" : covariates.c_str())) {
    if (columns_known)
      for (const auto& c : result->columns) {
        if (c == shown_column) continue;
        const auto at = std::find(s.covariates.begin(), s.covariates.end(), c);
        if (ImGui::Selectable(c.c_str(), at != s.covariates.end(), ImGuiSelectableFlags_DontClosePopups)) {
          if (at == s.covariates.end()) s.covariates.push_back(c);
          else s.covariates.erase(at);
        }
      }
    ImGui::EndCombo();
  }
}

void App::csv_forecast_view(const std::vector<std::shared_ptr<const Run>>& shown) {
  csv_shown_ = true;
  const auto result = csv_worker_->result();
  csv_controls(shown, result.get());
  if (!csv_submitted_ || !(*csv_submitted_ == csv_)) csv_worker_->submit(csv_), csv_submitted_ = csv_;

  const bool busy = csv_worker_->busy();
  const bool current = result && result->settings == csv_;
  ImGui::SameLine();  // the export on the covariates' line
  input_string("##export", export_prefix_, 200);
  ImGui::SameLine();
  const bool can_export = current && result->error.empty() && !busy;
  const bool clicked = ImGui::Button("export PNG, SVG and CSV") && can_export;
  if (!export_message_.empty()) {
    ImGui::SameLine();
    if (export_error_) ImGui::TextColored({0.95f, 0.40f, 0.40f, 1}, "%s", export_message_.c_str());
    else ImGui::TextDisabled("%s", export_message_.c_str());
  }
  if (busy) {
    ImGui::TextDisabled("forecasting...");
  } else if (current && !result->error.empty()) {
    ImGui::TextColored({0.95f, 0.40f, 0.40f, 1}, "%s", result->error.c_str());
  } else if (current) {
    std::string flags = "--horizon " + std::to_string(csv_.horizon) + " --context " + contexts_text(csv_.contexts);
    flags += !csv_.box_cox ? " --no-box-cox" : csv_.box_cox_check ? "" : " --box-cox";
    if (csv_.box_cox && csv_.box_cox_average != inference_defaults::box_cox_average)
      flags += csv_.box_cox_average ? " --box-cox-average" : " --no-box-cox-average";
    if (csv_.box_cox) flags += " --season " + std::to_string(csv_.season);
    ImGui::TextDisabled("forecast in %.2f s, as orrery forecast %s computes it", result->seconds, flags.c_str());
  } else {
    ImGui::NewLine();
  }

  ImGuiCanvas canvas(ImGui::GetWindowDrawList());
  const plot::Rect region = claim_region();
  if (!result || (result->error.empty() ? false : !current)) {
    ForecastSnapshot none;
    draw_forecast(canvas, region, none, 0, busy ? "forecasting..." : "pick a model and a CSV file");
  } else if (!result->error.empty()) {
    ForecastSnapshot none;
    draw_forecast(canvas, region, none, 0, "no forecast (the line above says why)");
  } else {
    const auto frames = draw_csv_forecast(canvas, region, *result);
    hover_forecast(canvas, frames[0], result->model, 0);
    if (frames.size() > 1) hover_forecast(canvas, frames[1], result->baseline, 0);
  }
  csv_drawn_busy_ = busy || !current;  // what this frame shows, whatever the worker does meanwhile
  if (can_export && (clicked || export_pending_)) export_csv_forecast(*result, region), export_pending_ = false;
  if (export_pending_ && current && !busy && !result->error.empty()) export_pending_ = false;  // nothing to export
}

void App::export_csv_forecast(const CsvForecastResult& result, plot::Rect region) {
  try {
    if (export_prefix_.empty()) throw Error("export: name the files to write (PREFIX.png, PREFIX.svg, PREFIX.csv)");
    constexpr float W = 1200, H = 560;
    plot::SvgCanvas svg(W, H, plot::theme().background);
    draw_csv_forecast(svg, {16, 16, W - 16, H - 16}, result);
    svg.save(export_prefix_ + ".svg");
    plot::save_text(export_prefix_ + ".csv", result.csv);
    png_request_ = PngRequest{export_prefix_ + ".png", region};
    export_message_ = "wrote " + export_prefix_ + ".png, .svg and .csv";
    export_error_ = false;
  } catch (const std::exception& e) {
    export_failed(e.what());
  }
}

// The selected runs' text samples in a scrolled child: its content as tall as last frame's drawing.
void App::samples_tab(const std::vector<StyledRun>& selected) {
  ImGui::BeginChild("samples", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x;
  ImGuiCanvas canvas(ImGui::GetWindowDrawList());
  samples_height_ = draw_samples(canvas, {p.x, p.y, p.x + w, p.y + std::max(samples_height_, 1.f)}, selected);
  ImGui::Dummy(ImVec2(w, samples_height_));
  ImGui::EndChild();
}

void App::lr_tab(const std::vector<std::shared_ptr<const Run>>& shown) {
  const auto panels = group_sweep(shown);
  ImGui::TextDisabled("held-out loss (the final training loss where a run scores none) of every run passing the "
                      "filter (%zu), mean over seeds; rings: still running; large ring: best rate; dotted: fitted "
                      "optimum", shown.size());
  ImGuiCanvas canvas(ImGui::GetWindowDrawList());
  const auto frames = draw_lr_transfer(canvas, claim_region(), panels);
  for (size_t k = 0; k < frames.size() && k < panels.size(); ++k) {
    if (!hovering(frames[k])) continue;
    const SweepPoint* best = nullptr;
    int64_t best_width = 0;
    float within = 12;
    for (const auto& c : panels[k].curves)
      if (const auto* p = nearest_point(frames[k], c.points, [](const SweepPoint& q) { return std::pair{q.log2_lr, q.loss}; }, within))
        best = p, best_width = c.width;
    if (best) {
      ImGui::BeginTooltip();
      ImGui::Text("width %lld, lr 2^%.2f = %.3g", static_cast<long long>(best_width), best->log2_lr, std::exp2(best->log2_lr));
      ImGui::Text("loss %.4f over %zu run(s)%s", best->loss, best->losses.size(), best->running ? ", some running" : "");
      if (best->diverged) ImGui::Text("%d diverged", best->diverged);
      ImGui::EndTooltip();
    }
  }
}

void App::diagnostics_tab(const Workspace& ws, const std::vector<StyledRun>& selected) {
  // Top: the coordinate check (its own controls); bottom: the optimizer of the selected runs.
  ImGuiCanvas canvas(ImGui::GetWindowDrawList());
  const CoordCheck empty;
  const CoordCheck* cc = &empty;
  if (!ws.coord_checks.empty()) {
    coord_index_ = std::clamp(coord_index_, 0, static_cast<int>(ws.coord_checks.size()) - 1);
    cc = ws.coord_checks[coord_index_].get();
    const int steps = static_cast<int>(std::min<int64_t>(cc->steps, 1 << 20));  // SliderInt's range limit
    if (coord_step_ < 0 || coord_step_ > steps) coord_step_ = steps;
    ImGui::SetNextItemWidth(260);
    if (ImGui::BeginCombo("coordinate check", cc->name.c_str())) {
      for (int i = 0; i < static_cast<int>(ws.coord_checks.size()); ++i)
        if (ImGui::Selectable(ws.coord_checks[i]->name.c_str(), i == coord_index_)) coord_index_ = i;
      ImGui::EndCombo();
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(160);
    ImGui::SliderInt("step", &coord_step_, 0, steps);
  }
  const float weights[] = {1.f, 1.f};
  const auto rows = split_rows(claim_region(), weights, 14);
  draw_coord_check(canvas, rows[0], *cc, coord_step_);
  draw_optimizer_view(canvas, rows[1], selected);
}

const App::ForecastsFile& App::forecasts_file(const std::string& path) {
  std::error_code ec;
  const auto written = std::filesystem::last_write_time(path, ec);
  ForecastsFile& f = forecasts_files_[path];
  if (f.forecasts && !ec && f.written == written) return f;
  f = ForecastsFile{written, nullptr, ""};
  try {
    f.forecasts = std::make_shared<const EvalForecasts>(read_eval_forecasts(path));
  } catch (const std::exception& e) {
    f.error = e.what();  // shown in the window; the dashboard goes on
  }
  return f;
}

void App::eval_tab(const std::vector<std::shared_ptr<const Run>>& shown) {
  EvalTable table = merge_evaluations(shown);
  if (!drill_.pending.empty() || !drill_.configuration.empty()) return eval_windows(table, shown);
  int metric = eval_.metric == EvalMetric::crps ? 0 : 1;
  ImGui::RadioButton("CRPS", &metric, 0);
  ImGui::SameLine();
  ImGui::RadioButton("MASE", &metric, 1);
  eval_.metric = metric == 0 ? EvalMetric::crps : EvalMetric::mase;
  // Worst first: the rows by the first Orrery model over ETS (or the first baseline), one click.
  size_t model = table.models.size(), baseline = table.models.size();
  for (size_t k = 0; k < table.models.size(); ++k) {
    if (!table.models[k].baseline && model == table.models.size()) model = k;
    if (table.models[k].baseline && (baseline == table.models.size() || table.models[k].name == "ets")) baseline = k;
  }
  if (model < table.models.size() && baseline < table.models.size()) {
    ImGui::SameLine();
    ImGui::Checkbox(("worst first: " + table.models[model].label + " over " + table.models[baseline].label).c_str(),
                    &drill_.sort);
    if (drill_.sort) sort_eval_rows(table, model, baseline, eval_.metric);
  }
  ImGui::SameLine();
  ImGui::TextDisabled("each model's metric over seasonal naive's on the same windows; click a data set for its windows");
  if (!drill_.message.empty()) ImGui::TextColored({0.95f, 0.4f, 0.4f, 1}, "%s", drill_.message.c_str());
  // A long benchmark scrolls instead of squeezing its rows below a readable height.
  ImGui::BeginChild("eval", {0, 0}, false);
  ImGuiCanvas canvas(ImGui::GetWindowDrawList());
  const auto frames = draw_eval_view(canvas, claim_region(eval_view_height(canvas, table, 21)), table, eval_);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (!frames.empty() && hovering(frames[0]))
    if (const auto hit = eval_hit(table, frames[0], {mouse.x, mouse.y}, eval_.metric)) {
      const EvalModel& m = table.models[hit->model];
      const auto c = m.color;
      if (const auto dot = eval_dot(table, frames[0], hit->row, hit->model, eval_.metric))
        canvas.circle(*dot, 8, plot::theme().text, false);
      ImGui::BeginTooltip();
      ImGui::TextColored({c.r / 255.f, c.g / 255.f, c.b / 255.f, 1}, "%s", m.label.c_str());
      if (hit->row < table.rows.size()) {
        const EvalScores& s = table.rows[hit->row].cells[hit->model];
        ImGui::Text("%s", table.rows[hit->row].label.c_str());
        ImGui::Text("CRPS %.4g  ratio %.3f", s.crps, s.crps_ratio);
        ImGui::Text("MASE %.4g  ratio %.3f", s.mase, s.mase_ratio);
        if (std::isfinite(s.coverage)) ImGui::Text("10-90 coverage %.2f", s.coverage);
      } else {
        const EvalModelSummary& s = m.summary;
        ImGui::Text("geometric mean over %lld configurations", static_cast<long long>(s.configurations));
        ImGui::Text("CRPS ratio %.3f  MASE ratio %.3f", s.crps, s.mase);
        if (std::isfinite(s.coverage)) ImGui::Text("mean 10-90 coverage %.2f", s.coverage);
      }
      ImGui::EndTooltip();
      // A click on a data set's dot opens its windows.
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && hit->row < table.rows.size())
        drill_.configuration = table.rows[hit->row].label, drill_.first = 0, drill_.message.clear();
    }
  ImGui::EndChild();
}

// One configuration's windows from the forecasts file of the first shown run that holds it: the
// model's fan beside the baseline's, a page of windows at a time. Keys: left and right page
// through the windows, up and down step through the data sets, Escape goes back to the table.
void App::eval_windows(const EvalTable& table, const std::vector<std::shared_ptr<const Run>>& shown) {
  std::shared_ptr<const EvalForecasts> forecasts;
  std::string names;     // every configuration a forecasts file holds, for --select's message
  std::string unreadable;  // why a forecasts file could not be read
  for (const auto& r : shown) {
    const auto path = std::filesystem::path(r->dir) / kEvalForecastsFile;
    if (!r->eval || !std::filesystem::exists(path)) continue;
    const ForecastsFile& f = forecasts_file(path.string());
    if (!f.error.empty()) {
      drill_.message = unreadable = f.error;
      continue;
    }
    const auto configurations = forecast_configurations(*f.forecasts);
    if (!drill_.pending.empty()) {  // --select: a data set's name, or its whole configuration
      for (const auto& c : configurations)
        if (c == drill_.pending || c.substr(0, c.find('/')) == drill_.pending) drill_.configuration = c, drill_.pending.clear();
      for (const auto& c : configurations) names += (names.empty() ? "" : ", ") + c.substr(0, c.find('/'));
    }
    if (std::find(configurations.begin(), configurations.end(), drill_.configuration) != configurations.end()) {
      forecasts = f.forecasts;
      break;
    }
  }
  if (!drill_.pending.empty()) {
    drill_.message = "--select " + drill_.pending + ": no data set of that name in the evaluations' forecasts" +
                     (!names.empty()        ? "; they hold " + names
                      : !unreadable.empty() ? "; " + unreadable
                                            : std::string(" (no run shown has an eval_forecasts.jsonl)"));
    std::fprintf(stderr, "orrery: warning: ui: %s\n", drill_.message.c_str());  // also where no one sees the window
    drill_.pending.clear(), drill_.configuration.clear();
    return eval_tab(shown);
  }
  if (ImGui::Button("< table") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
    drill_.configuration.clear();
    return;
  }
  if (!forecasts) {
    ImGui::SameLine();
    ImGui::TextColored({0.95f, 0.4f, 0.4f, 1}, "%s",
                       (drill_.message.empty() ? "no eval_forecasts.jsonl holds " + drill_.configuration +
                                                     " (orrery eval writes it; --no-forecasts leaves it out)"
                                               : drill_.message).c_str());
    return;
  }
  const EvalForecasts& f = *forecasts;
  if (drill_.model.empty() || std::find(f.forecasters.begin(), f.forecasters.end(), drill_.model) == f.forecasters.end())
    drill_.model = default_eval_model(f);
  if (drill_.baseline.empty()) drill_.baseline = default_eval_baseline(f);
  auto pick = [&](const char* label, std::string& chosen) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(180);
    if (ImGui::BeginCombo(label, chosen.c_str())) {
      for (const auto& name : f.forecasters)
        if (ImGui::Selectable(name.c_str(), name == chosen)) chosen = name;
      ImGui::EndCombo();
    }
  };
  pick("model", drill_.model);
  pick("beside", drill_.baseline);
  // The data sets in the table's order, and this one's windows a page at a time.
  std::vector<std::string> order;
  for (const auto& row : table.rows) order.push_back(row.label);
  const auto at = std::find(order.begin(), order.end(), drill_.configuration);
  const size_t n = configuration_windows(f, drill_.configuration).size(), page = 4;
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow)) && drill_.first + page < n) drill_.first += page;
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow))) drill_.first -= std::min(drill_.first, page);
  if (at != order.end()) {
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow)) && at + 1 != order.end())
      drill_.configuration = *(at + 1), drill_.first = 0;
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow)) && at != order.begin())
      drill_.configuration = *(at - 1), drill_.first = 0;
  }
  ImGui::SameLine();
  ImGui::TextDisabled("windows %zu-%zu of %zu (left, right); data set %zu of %zu (up, down); Esc: the table",
                      std::min(drill_.first + 1, n), std::min(drill_.first + page, n), n,
                      at == order.end() ? 0 : static_cast<size_t>(at - order.begin()) + 1, order.size());
  ImGuiCanvas canvas(ImGui::GetWindowDrawList());
  draw_eval_windows(canvas, claim_region(), f, drill_.configuration, drill_.model, drill_.baseline, drill_.first, page);
}

// A combo over the studies of one kind (their folders), newest by default; -1 when there are none.
template <class T>
int pick_study(const char* label, const std::vector<std::shared_ptr<const T>>& all, std::string& chosen) {
  if (all.empty()) return -1;
  int index = static_cast<int>(all.size()) - 1;
  for (int i = 0; i < static_cast<int>(all.size()); ++i)
    if (all[i]->name == chosen) index = i;
  ImGui::SetNextItemWidth(320);
  if (ImGui::BeginCombo(label, all[index]->name.c_str())) {
    for (int i = 0; i < static_cast<int>(all.size()); ++i)
      if (ImGui::Selectable(all[i]->name.c_str(), i == index)) index = i, chosen = all[i]->name;
    ImGui::EndCombo();
  }
  return index;
}

void App::search_tab(const Workspace& ws) {
  const int index = pick_study("study", ws.studies, study_);
  if (index < 0) {
    ImGui::TextDisabled("no study under this folder: orrery.search{} writes one (runs/<name>/study.json)");
    return;
  }
  const SearchStudy& s = *ws.studies[static_cast<size_t>(index)];
  ImGui::SameLine();
  if (s.best >= 0)
    for (const auto& t : s.trials)
      if (t.number == s.best) ImGui::Text("best: trial %lld, %.5g", static_cast<long long>(t.number), t.value);
  // The plots above, the trials table below.
  const float table_h = std::min(260.f, ImGui::GetContentRegionAvail().y * 0.35f);
  ImGui::BeginChild("search plots", {0, -table_h}, false);
  ImGuiCanvas canvas(ImGui::GetWindowDrawList());
  const auto frames = draw_search_view(canvas, claim_region(), s);
  if (!frames.empty() && hovering(frames[0])) {
    float within = 10;
    const auto by_number = [](const StudyTrial& t) { return std::pair{static_cast<double>(t.number), study_trial_y(t)}; };
    if (const StudyTrial* hit = nearest_point(frames[0], s.trials, by_number, within)) {
      ImGui::BeginTooltip();
      ImGui::Text("trial %lld: %s%s, %.5g", static_cast<long long>(hit->number), hit->state.c_str(),
                  hit->lost ? " (its worker died)" : "", study_trial_y(*hit));
      for (size_t k = 0; k < s.dims.size(); ++k)
        if (!hit->texts[k].empty()) ImGui::Text("%s = %s", s.dims[k].name.c_str(), hit->texts[k].c_str());
      ImGui::EndTooltip();
    }
  }
  ImGui::EndChild();
  const int columns = 3 + static_cast<int>(std::min<size_t>(s.dims.size(), 60));
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_ScrollX | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("trials", columns, flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn("#");
  ImGui::TableSetupColumn("state");
  ImGui::TableSetupColumn("value");
  for (int k = 3; k < columns; ++k) ImGui::TableSetupColumn(s.dims[static_cast<size_t>(k - 3)].name.c_str());
  ImGui::TableHeadersRow();
  for (auto it = s.trials.rbegin(); it != s.trials.rend(); ++it) {  // the newest on top
    const StudyTrial& t = *it;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%lld%s", static_cast<long long>(t.number), t.number == s.best ? " *" : "");
    ImGui::TableNextColumn();
    const ImVec4 color = t.state == "complete"  ? ImVec4{0.75f, 0.77f, 0.82f, 1}
                         : t.state == "running" ? ImVec4{0.45f, 0.85f, 0.45f, 1}
                         : t.state == "pruned"  ? ImVec4{0.93f, 0.79f, 0.28f, 1}
                                                : ImVec4{0.95f, 0.40f, 0.40f, 1};
    ImGui::TextColored(color, "%s", t.state.c_str());
    ImGui::TableNextColumn();
    const double y = study_trial_y(t);
    if (std::isfinite(y)) ImGui::Text("%.5g", y);
    for (int k = 3; k < columns; ++k) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(t.texts[static_cast<size_t>(k - 3)].c_str());
    }
  }
  ImGui::EndTable();
}

void App::scaling_tab(const Workspace& ws) {
  const int index = pick_study("scaling study", ws.scalings, scaling_);
  if (index < 0) {
    ImGui::TextDisabled("no scaling study under this folder: scripts/scaling.lua writes one (runs/scaling/scaling.json)");
    return;
  }
  const ScalingStudy& s = *ws.scalings[static_cast<size_t>(index)];
  ImGui::SameLine();
  ImGui::TextDisabled("%zu sizes, %zu runs' budgets; held-out loss", s.sizes.size(), s.points.size());
  ImGuiCanvas canvas(ImGui::GetWindowDrawList());
  const auto frames = draw_scaling_view(canvas, claim_region(), s);
  for (size_t f = 0; f < frames.size(); ++f) {
    if (!hovering(frames[f])) continue;
    float within = 10;
    const auto at = [f](const ScalingPoint& p) { return std::pair{f == 0 ? p.params : 6 * p.params * p.tokens, p.loss}; };
    if (const ScalingPoint* hit = nearest_point(frames[f], s.points, at, within)) {
      ImGui::BeginTooltip();
      ImGui::Text("%s: %.4g parameters, %lld steps, %.3g points", hit->run.c_str(), hit->params,
                  static_cast<long long>(hit->budget), hit->tokens);
      ImGui::Text("held-out loss %.5f; L(N, D) predicts %.5f", hit->loss, s.joint.predict(hit->params, hit->tokens));
      ImGui::EndTooltip();
    }
  }
}

}  // namespace orrery::ui
