#pragma once
// How a model forecasts unless told otherwise, the same in every front end: `orrery forecast`,
// model:forecast, `orrery eval`, orrery.eval and the dashboard's CSV forecast. Decided on the
// validation windows of the bundled and the decision benchmarks (docs/results/decision): the
// forecasts from the last 64 and the last 512 steps averaged level by level (a context ensemble),
// each series' Box-Cox transform kept only where it forecast the series' own last horizon better
// than no transform (unguarded, it made a data set 1.77 times worse), and no sign averaging (no
// difference on either benchmark).
#include <cstdint>
#include <vector>

namespace orrery::inference_defaults {

inline const std::vector<int64_t> contexts{64, 512};
inline constexpr bool box_cox = true;        // Guerrero's exponent, over blocks of the season
inline constexpr bool box_cox_check = true;  // ... kept per series by its own check
inline constexpr bool box_cox_average = true;  // ... averaged with the plain forecast (ForecastOptions)
inline constexpr int64_t check_origins = 1;  // ... of its last horizon (ForecastOptions::check_origins)

}  // namespace orrery::inference_defaults
