#pragma once
// The Canvas on an ImGui draw list: what the dashboard draws plots with.
#include <imgui.h>

#include "plot/canvas.h"

namespace orrery::ui {

class ImGuiCanvas final : public plot::Canvas {
 public:
  explicit ImGuiCanvas(ImDrawList* list) : list_(list) {}
  void polyline(std::span<const plot::Vec2> points, plot::Color c, float thickness, plot::Stroke stroke) override;
  void band(std::span<const plot::Vec2> upper, std::span<const plot::Vec2> lower, plot::Color c) override;
  void rect(plot::Rect r, plot::Color c, float thickness) override;
  void fill_rect(plot::Rect r, plot::Color c) override;
  void circle(plot::Vec2 centre, float radius, plot::Color c, bool filled) override;
  void text(plot::Vec2 anchor, std::string_view s, plot::Color c, plot::Align h, plot::Align v) override;
  plot::Vec2 text_size(std::string_view s) const override;
  void push_clip(plot::Rect r) override;
  void pop_clip() override;

 private:
  ImDrawList* list_;
};

inline ImU32 to_imgui(plot::Color c) { return IM_COL32(c.r, c.g, c.b, c.a); }
inline ImVec2 to_imgui(plot::Vec2 v) { return {v.x, v.y}; }

}  // namespace orrery::ui
