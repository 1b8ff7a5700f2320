#pragma once
// What the plots draw on. The same view code renders onto an ImGui draw list (the live
// dashboard) and into an SVG file (`orrery plot`), so both show exactly the same thing.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace orrery::plot {

struct Vec2 {
  float x = 0, y = 0;
};

struct Rect {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // pixels, y grows downwards
  float w() const { return x1 - x0; }
  float h() const { return y1 - y0; }
  bool contains(Vec2 p) const { return p.x >= x0 && p.x <= x1 && p.y >= y0 && p.y <= y1; }
  Rect inset(float l, float t, float r, float b) const { return {x0 + l, y0 + t, x1 - r, y1 - b}; }
};

struct Color {
  uint8_t r = 0, g = 0, b = 0, a = 255;
  Color with_alpha(float alpha) const { return {r, g, b, static_cast<uint8_t>(alpha * 255.f + .5f)}; }
  static Color hex(uint32_t rgb, uint8_t a = 255) {
    return {static_cast<uint8_t>(rgb >> 16), static_cast<uint8_t>(rgb >> 8), static_cast<uint8_t>(rgb), a};
  }
};

enum class Stroke { solid, dashed, dotted };
enum class Align { start, centre, end };  // horizontal: left/centre/right; vertical: top/middle/bottom

class Canvas {
 public:
  virtual ~Canvas() = default;
  virtual void polyline(std::span<const Vec2> points, Color c, float thickness, Stroke stroke) = 0;
  // The area between two curves sampled at the same x positions (upper[i].x == lower[i].x).
  virtual void band(std::span<const Vec2> upper, std::span<const Vec2> lower, Color c) = 0;
  virtual void rect(Rect r, Color c, float thickness) = 0;
  virtual void fill_rect(Rect r, Color c) = 0;
  virtual void circle(Vec2 centre, float radius, Color c, bool filled) = 0;
  virtual void text(Vec2 anchor, std::string_view s, Color c, Align h = Align::start,
                    Align v = Align::start) = 0;
  virtual Vec2 text_size(std::string_view s) const = 0;
  // Drawing outside `r` is cut off until the matching pop_clip().
  virtual void push_clip(Rect r) = 0;
  virtual void pop_clip() = 0;

  void line(Vec2 a, Vec2 b, Color c, float thickness = 1, Stroke s = Stroke::solid) {
    const Vec2 pts[2] = {a, b};
    polyline(pts, c, thickness, s);
  }
};

// Where text goes for an anchor and alignment (shared by the canvases).
inline Vec2 aligned_origin(Vec2 anchor, Vec2 size, Align h, Align v) {
  auto shift = [](Align a, float extent) {
    return a == Align::start ? 0.f : a == Align::centre ? -extent / 2 : -extent;
  };
  return {anchor.x + shift(h, size.x), anchor.y + shift(v, size.y)};
}

}  // namespace orrery::plot
