#include "holdout.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace orrery::data {

double holdout_draw(const std::string& file_name, const std::string& series_name) {
  const uint64_t h = mix_seed(stable_hash(file_name + '\x1f' + series_name), 0);
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

std::vector<Region> split_regions(const std::vector<CacheEntry>& entries, const std::vector<MappedFile>& values,
                                  double holdout, Split split, SplitSummary& summary, int64_t exclude_last) {
  std::vector<Region> regions;
  const bool validation = split == Split::validation;
  for (size_t f = 0; f < entries.size(); ++f) {
    const CacheEntry& e = entries[f];
    const std::string file = std::filesystem::path(e.source).filename().string();
    std::vector<char> held(e.series.size());
    size_t count = 0;
    for (size_t s = 0; s < e.series.size(); ++s) count += held[s] = holdout_draw(file, e.series[s].name) < holdout;
    const bool in_time = holdout > 0 && holdout < 1 && !e.series.empty() && (count == 0 || count == e.series.size());
    if (in_time) summary.time_split_files.push_back(e.source);
    for (size_t s = 0; s < e.series.size(); ++s) {
      const SeriesInfo& info = e.series[s];
      const int64_t usable = info.length - exclude_last;  // the steps either split may draw
      if (usable < 1) continue;
      Region r{values[f].floats() + info.offset, info.length, info.variates, 0, usable, info.past, info.future,
               info.statics.data()};
      if (in_time) {
        const int64_t tail = std::clamp<int64_t>(std::llround(static_cast<double>(usable) * holdout), 1, usable);
        (validation ? r.lo : r.hi) = usable - tail;
      } else if (static_cast<bool>(held[s]) != validation) {
        continue;
      }
      if (r.hi <= r.lo) continue;
      summary.series += 1;
      summary.steps += r.hi - r.lo;
      regions.push_back(r);
    }
  }
  return regions;
}

}  // namespace orrery::data
