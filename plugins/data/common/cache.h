#pragma once
// The on-disk cache of data files read into series. A file is read once (streamed, whatever
// its size) and stored as float32 values, series after series, plus an index in JSON beside
// them (series names, offsets, lengths, variates, frequency). Later sources map the values
// instead of parsing again.
//
// An entry is keyed by the file's absolute path and `content` (the reader and every option
// that changes what the file reads as), so sources with other options keep their own entries;
// it is valid while the file keeps the size and modification time (to the nanosecond) that the
// index records, and is rebuilt otherwise. Values and then the index are each written to a
// temporary and renamed into place, and the build holds a lock (flock on a file beside them),
// so a crash never leaves a half entry and the ranks of one run build each file once.
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "orrery/json.h"
#include "series_builder.h"

namespace orrery::data {

struct BuildResult {
  std::vector<SeriesInfo> series;
  int64_t rows = 0, dropped = 0;  // dropped: series with no observed value
  // Per static covariate column: its categories in this file (byte order), none when numeric.
  // A series' `statics` hold a numeric column's value, a categorical one's 0/1 per category.
  std::vector<std::vector<std::string>> static_categories;
};
// Reads the file, writing its series' values to `out`; `scratch`: a folder for temporaries.
using BuildFn = std::function<BuildResult(std::ostream& out, const std::string& scratch)>;

struct CacheEntry {
  std::string source;       // the data file, absolute
  std::string index_path;   // the JSON index
  std::string values_path;  // the float32 values
  std::vector<SeriesInfo> series;
  int64_t rows = 0, dropped = 0;
  std::vector<std::vector<std::string>> static_categories;  // as BuildResult's
  bool reused = false;  // false: built by this call
};

// The folder to cache in: `option` when set, else .orrery-cache beside `first_file` or, where
// that cannot be written, $XDG_CACHE_HOME/orrery (~/.cache/orrery). Created when missing.
std::string cache_folder(const std::string& option, const std::string& first_file);

CacheEntry cached(const std::string& folder, const std::string& file, const Json& content, const BuildFn& build);

// FNV-1a: stable across runs and machines (std::hash is not), for cache keys and holdouts.
uint64_t stable_hash(std::string_view text);

}  // namespace orrery::data
