#include "theme.h"

#include <algorithm>
#include <cmath>

namespace orrery::plot {

const Theme& theme() {
  static const Theme t;
  return t;
}

Color run_color(size_t i) {
  static const uint32_t tableau10[] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                       0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};
  return Color::hex(tableau10[i % 10]);
}

Color ramp_color(double t) {
  static const uint32_t stops[] = {0x5b8def, 0x4cc3a5, 0xe8c547, 0xf0703c, 0xe0457b};
  constexpr int n = 5;
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * (n - 1);
  const int i = std::min(static_cast<int>(t), n - 2);
  const double f = t - i;
  const Color a = Color::hex(stops[i]), b = Color::hex(stops[i + 1]);
  auto mix = [&](uint8_t u, uint8_t v) { return static_cast<uint8_t>(std::lround(u + (v - u) * f)); };
  return {mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b), 255};
}

}  // namespace orrery::plot
