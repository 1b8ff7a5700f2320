#include "imgui_canvas.h"

#include <cmath>
#include <vector>

namespace orrery::ui {

void ImGuiCanvas::polyline(std::span<const plot::Vec2> pts, plot::Color c, float thickness, plot::Stroke stroke) {
  if (pts.size() < 2) return;
  const ImU32 col = to_imgui(c);
  if (stroke == plot::Stroke::solid) {
    std::vector<ImVec2> v(pts.size());
    for (size_t i = 0; i < pts.size(); ++i) v[i] = to_imgui(pts[i]);
    list_->AddPolyline(v.data(), static_cast<int>(v.size()), col, ImDrawFlags_None, thickness);
    return;
  }
  // Dashes measured along the whole path, so the pattern runs on across vertices.
  const float on = stroke == plot::Stroke::dashed ? 6.f : 2.f, off = stroke == plot::Stroke::dashed ? 4.f : 3.f;
  float phase = 0;
  for (size_t i = 1; i < pts.size(); ++i) {
    const plot::Vec2 a = pts[i - 1], b = pts[i];
    const float len = std::hypot(b.x - a.x, b.y - a.y);
    float s = 0;
    while (s < len) {
      const float period_pos = std::fmod(phase + s, on + off);
      const bool drawing = period_pos < on;
      const float step = std::min(len - s, drawing ? on - period_pos : on + off - period_pos);
      if (drawing) {
        const float t0 = s / len, t1 = (s + step) / len;
        list_->AddLine({a.x + (b.x - a.x) * t0, a.y + (b.y - a.y) * t0},
                       {a.x + (b.x - a.x) * t1, a.y + (b.y - a.y) * t1}, col, thickness);
      }
      s += std::max(step, 1e-3f);
    }
    phase += len;
  }
}

void ImGuiCanvas::band(std::span<const plot::Vec2> upper, std::span<const plot::Vec2> lower, plot::Color c) {
  // Two triangles per segment, written straight into the vertex buffer and without
  // anti-aliased fringes: adjacent quads then meet without the 1-px seams AA fill leaves.
  const size_t n = std::min(upper.size(), lower.size());
  if (n < 2) return;
  // 16-bit indices reach 65535 vertices per reservation: long bands go in overlapping pieces.
  constexpr size_t kPiece = 16384;
  if (n > kPiece) {
    for (size_t i = 0; i + 1 < n; i += kPiece - 1) {
      const size_t m = std::min(kPiece, n - i);
      band(upper.subspan(i, m), lower.subspan(i, m), c);
    }
    return;
  }
  const ImU32 col = to_imgui(c);
  const ImVec2 uv = ImGui::GetFontTexUvWhitePixel();
  const int segments = static_cast<int>(n - 1);
  list_->PrimReserve(segments * 6, static_cast<int>(n * 2));
  const auto base = static_cast<ImDrawIdx>(list_->_VtxCurrentIdx);
  for (size_t i = 0; i < n; ++i) {
    list_->PrimWriteVtx(to_imgui(upper[i]), uv, col);
    list_->PrimWriteVtx(to_imgui(lower[i]), uv, col);
  }
  for (int i = 0; i < segments; ++i) {
    const auto u0 = static_cast<ImDrawIdx>(base + 2 * i), l0 = static_cast<ImDrawIdx>(u0 + 1);
    const auto u1 = static_cast<ImDrawIdx>(u0 + 2), l1 = static_cast<ImDrawIdx>(u0 + 3);
    list_->PrimWriteIdx(u0), list_->PrimWriteIdx(u1), list_->PrimWriteIdx(l1);
    list_->PrimWriteIdx(u0), list_->PrimWriteIdx(l1), list_->PrimWriteIdx(l0);
  }
}

void ImGuiCanvas::rect(plot::Rect r, plot::Color c, float thickness) {
  list_->AddRect({r.x0, r.y0}, {r.x1, r.y1}, to_imgui(c), 0, ImDrawFlags_None, thickness);
}

void ImGuiCanvas::fill_rect(plot::Rect r, plot::Color c) { list_->AddRectFilled({r.x0, r.y0}, {r.x1, r.y1}, to_imgui(c)); }

void ImGuiCanvas::circle(plot::Vec2 p, float radius, plot::Color c, bool filled) {
  if (filled) list_->AddCircleFilled(to_imgui(p), radius, to_imgui(c), 12);
  else list_->AddCircle(to_imgui(p), radius, to_imgui(c), 16, 1.5f);
}

void ImGuiCanvas::text(plot::Vec2 anchor, std::string_view s, plot::Color c, plot::Align h, plot::Align v) {
  if (s.empty()) return;
  const plot::Vec2 o = plot::aligned_origin(anchor, text_size(s), h, v);
  list_->AddText({std::round(o.x), std::round(o.y)}, to_imgui(c), s.data(), s.data() + s.size());
}

plot::Vec2 ImGuiCanvas::text_size(std::string_view s) const {
  const ImVec2 v = ImGui::CalcTextSize(s.data(), s.data() + s.size());
  return {v.x, v.y};
}

void ImGuiCanvas::push_clip(plot::Rect r) { list_->PushClipRect({r.x0, r.y0}, {r.x1, r.y1}, true); }
void ImGuiCanvas::pop_clip() { list_->PopClipRect(); }

}  // namespace orrery::ui
