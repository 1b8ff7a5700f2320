#pragma once
// Which steps of which series a split draws: the validation split holds out a fixed share of
// each file's series, chosen by a stable hash of the file's name and the series' name, so the
// choice is the same in every run, on every machine, whatever the other files, and a series
// never moves between splits when others are added. Where that holds out none of a file's
// series, or all of them (a file of one multivariate series, a few columns), the file is split
// in time instead: validation draws the last `holdout` share of each series' steps (at least
// one) and training the steps before; no step is drawn by both. The last `exclude_last` steps
// of every series are kept from both splits (the test windows of a later evaluation).
#include <cstdint>
#include <string>
#include <vector>

#include "cache.h"
#include "mapped_file.h"
#include "orrery/data_source.h"
#include "sampler.h"

namespace orrery::data {

struct SplitSummary {
  int64_t series = 0, steps = 0;              // drawn by the split
  std::vector<std::string> time_split_files;  // files split in time
};

// In [0, 1): a series is held out for validation when below `holdout`.
double holdout_draw(const std::string& file_name, const std::string& series_name);

std::vector<Region> split_regions(const std::vector<CacheEntry>& entries, const std::vector<MappedFile>& values,
                                  double holdout, Split split, SplitSummary& summary, int64_t exclude_last = 0);

}  // namespace orrery::data
