#pragma once
// The percentile bootstrap every comparison in Orrery reports: resample the paired units (seeds,
// runs, data sets) with replacement, recompute the statistic, and read an interval off the
// sorted draws. Scripts reach it as orrery.bootstrap{...}; scaling fits share its quantile.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace orrery::bootstrap {

// The q-quantile (0 <= q <= 1) of ascending values by linear interpolation between order
// statistics (numpy's default, R's type 7); NaN when there are none.
double quantile(const std::vector<double>& sorted, double q);

// A statistic of one resample: the indices drawn (n of them, each in [0, n)); nullopt where
// the resample says nothing (e.g. a fit that needs two distinct units), which is skipped, as is
// a NaN or infinite value (a ratio over a resample whose denominator is 0).
using Statistic = std::function<std::optional<double>(const std::vector<size_t>& picks)>;

struct Draws {
  std::vector<double> values;  // ascending
  size_t skipped = 0;          // resamples whose statistic was nullopt, NaN or infinite
  double lo = 0, hi = 0;       // the central `level` interval of values (NaN when none)
};

// `resamples` resamples of n units (1 <= n <= kMaxUnits). The indices come from a 31-bit linear
// congruential generator started at `seed` (the one Orrery's scripts have used since their first
// published intervals, kept so that those intervals reproduce): deterministic on every platform.
// Its draws carry 15 bits, so the modulo biases a unit's chance by at most n / 32768 of it.
inline constexpr size_t kMaxUnits = 32768;
Draws resample(size_t n, const Statistic& statistic, size_t resamples = 1000, uint64_t seed = 12345,
               double level = 0.9);

}  // namespace orrery::bootstrap
