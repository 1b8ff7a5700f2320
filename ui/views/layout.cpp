#include <numeric>

#include "views.h"

namespace orrery::ui {

std::vector<plot::Rect> split_columns(plot::Rect r, size_t n, float gap) {
  std::vector<plot::Rect> out;
  if (n == 0) return out;
  const float w = (r.w() - gap * (n - 1)) / n;
  for (size_t i = 0; i < n; ++i) {
    const float x0 = r.x0 + i * (w + gap);
    out.push_back({x0, r.y0, x0 + w, r.y1});
  }
  return out;
}

std::vector<plot::Rect> split_rows(plot::Rect r, std::span<const float> weights, float gap) {
  std::vector<plot::Rect> out;
  const float total = std::accumulate(weights.begin(), weights.end(), 0.f);
  const float avail = r.h() - gap * (weights.size() - 1);
  float y = r.y0;
  for (float w : weights) {
    const float h = avail * w / total;
    out.push_back({r.x0, y, r.x1, y + h});
    y += h + gap;
  }
  return out;
}

}  // namespace orrery::ui
