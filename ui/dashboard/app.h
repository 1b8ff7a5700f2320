#pragma once
// The dashboard's state and its frame: a runs table on the left, the views in tabs on the
// right. A pure function of the newest Workspace snapshot plus what the user clicked.
#include <imgui.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "runs/run.h"
#include "views/views.h"

namespace orrery::ui {

enum class Tab { loss, forecasts, samples, lr, diagnostics, eval, search, scaling };
Tab parse_tab(const std::string& name);  // errors name the option

class App {
 public:
  // `show_fps` is off for screenshots, so two renders of the same data are identical.
  App(Tab first_tab, const std::string& filter, bool show_fps = true);
  // Draws one frame over the whole viewport. `job_line` is shown in the header when non-empty.
  void frame(const Workspace& ws, const std::string& job_line);
  // Each run's colour (stable: by first appearance), for tests and the layout file.
  const std::map<std::string, plot::Color>& colors() const { return colors_; }

 private:
  void header(const Workspace& ws, const std::string& job_line);
  void runs_table(const std::vector<std::shared_ptr<const Run>>& shown);
  void loss_tab(const std::vector<StyledRun>& selected);
  void forecasts_tab(const std::vector<StyledRun>& selected, const std::vector<std::shared_ptr<const Run>>& shown);
  void samples_tab(const std::vector<StyledRun>& selected);
  void lr_tab(const std::vector<std::shared_ptr<const Run>>& shown);
  void diagnostics_tab(const Workspace& ws, const std::vector<StyledRun>& selected);
  void eval_tab(const std::vector<std::shared_ptr<const Run>>& shown);
  void search_tab(const Workspace& ws);
  void scaling_tab(const Workspace& ws);
  plot::Color color_of(const std::string& name);

  Tab first_tab_;
  bool show_fps_;
  bool first_frame_ = true;
  ImGuiTextFilter filter_;
  std::set<std::string> selected_;
  bool follow_ = true;  // until the user picks runs, show the newest ones
  std::map<std::string, plot::Color> colors_;
  LossViewOptions loss_;
  std::string forecast_run_;
  int snapshot_ = 0, series_ = 0;
  bool latest_snapshot_ = true, grid_ = false;
  int coord_index_ = 0, coord_step_ = -1;
  EvalViewOptions eval_;
  std::string study_, scaling_;  // the folders picked in the Search and Scaling tabs
  float samples_height_ = 0;  // what the Samples tab drew last frame: its scrolled content
  double now_ = 0;
};

}  // namespace orrery::ui
