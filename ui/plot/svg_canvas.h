#pragma once
// A Canvas that writes SVG 1.1. Text is measured with a fixed advance per character (the
// dashboard font's average), close enough for layout with the sans-serif fonts browsers use.
#include <sstream>
#include <string>
#include <vector>

#include "canvas.h"

namespace orrery::plot {

class SvgCanvas final : public Canvas {
 public:
  SvgCanvas(float width, float height, Color background);
  void polyline(std::span<const Vec2> points, Color c, float thickness, Stroke stroke) override;
  void band(std::span<const Vec2> upper, std::span<const Vec2> lower, Color c) override;
  void rect(Rect r, Color c, float thickness) override;
  void fill_rect(Rect r, Color c) override;
  void circle(Vec2 centre, float radius, Color c, bool filled) override;
  void text(Vec2 anchor, std::string_view s, Color c, Align h, Align v) override;
  Vec2 text_size(std::string_view s) const override;
  void push_clip(Rect r) override;
  void pop_clip() override;

  // The finished document.
  std::string str() const;
  // Writes the document to `path` (temporary file + rename); errors name the path.
  void save(const std::string& path) const;

 private:
  std::ostringstream body_;
  std::ostringstream defs_;
  float width_, height_;
  int clips_ = 0;
  int open_groups_ = 0;
};

// Writes `text` to `path` through a temporary file and a rename, so a reader never sees half a
// file; errors name the path.
void save_text(const std::string& path, const std::string& text);

}  // namespace orrery::plot
