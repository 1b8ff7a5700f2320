#pragma once
// Colours shared by the dashboard and the SVG plots: a dark theme, a qualitative palette for
// runs and a sequential ramp for widths (small = blue, large = warm).
#include <cstddef>

#include "canvas.h"

namespace orrery::plot {

struct Theme {
  Color background = Color::hex(0x15171c);   // behind the plots
  Color plot_area = Color::hex(0x1c1f26);    // inside the axes
  Color grid = Color::hex(0xffffff, 20);
  Color axis = Color::hex(0x8a90a0);
  Color text = Color::hex(0xd4d7de);
  Color muted = Color::hex(0x8a90a0);
  Color legend_background = Color::hex(0x15171c, 215);
  Color history = Color::hex(0xc8ccd4);      // a forecast's context
  Color fan = Color::hex(0x5fa8ff);          // quantile bands and median
  Color actual = Color::hex(0xffa64d);       // the values that came true
};

const Theme& theme();

// The i-th run colour (Tableau 10), cycling.
Color run_color(size_t i);

// A colour for position t in [0, 1] along the width ramp.
Color ramp_color(double t);

}  // namespace orrery::plot
