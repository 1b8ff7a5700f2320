#pragma once
// "42s", "3m07s", "2h15m": how progress lines and the dashboard print a duration.
#include <cmath>
#include <cstdio>
#include <string>

namespace orrery {

inline std::string format_duration(double s) {
  if (!std::isfinite(s)) return "";
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, (int(s) % 3600) / 60);
  return buf;
}

}  // namespace orrery
