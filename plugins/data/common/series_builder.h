#pragma once
// A file's rows gathered into series and laid on regular grids: the format-neutral half of
// reading a data file (csv and parquet feed it rows; the cache stores what it writes).
//
// Series that share one time axis form a group: in the wide layout the whole file (each value
// column a series, or all of them one multivariate series), in the long layout one id. A row
// gives its group a time and each of the group's series a row of values. Rows go to a SpillLog
// as they come, so a file larger than memory is read once; finish() then takes one group at a
// time (one series must fit in memory, the file need not), infers its frequency, places each
// row on the grid (gaps become unobserved steps) and appends the values to the cache.
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "orrery/json.h"
#include "spill.h"

namespace orrery::data {

// One stored series: `variates` runs of `length` float32 steps (NaN = unobserved), variate after
// variate, from `offset` (counted in floats) in its cache's values file.
struct SeriesInfo {
  std::string name;
  std::vector<std::string> columns;  // one name per variate
  int64_t variates = 1, length = 0;
  int64_t past = 0, future = 0;  // the last variates: past-only covariates, then known-future ones
  std::vector<double> statics;   // its static covariates' values (the builder's static columns)
  uint64_t offset = 0;
  std::string frequency;        // "" without a time column (or with a single time)
  std::optional<double> start;  // seconds since the epoch of the first step, when timed
  Json to_json() const;
  static SeriesInfo from_json(const Json& j);
};

struct BuilderSettings {
  std::string file;         // for messages
  std::string time_column;  // "": untimed, rows stay in file order
  std::string frequency;    // "": inferred for each group
  std::function<std::string(int64_t line)> where;  // "data.csv:12": a row's place in messages
  std::string line_word = "line";                   // what `where` counts: "line", "row"
};

class SeriesBuilder {
 public:
  SeriesBuilder(BuilderSettings settings, SpillLog& spill);

  // The group keyed `key`, made on first use (then `created` is set: add its series).
  size_t group(std::string_view key, bool& created);
  const std::string& group_key(size_t group) const { return groups_[group].key; }
  // `past`, `future`: how many of its last columns are past-only and known-future covariates.
  size_t add_series(size_t group, std::string name, std::vector<std::string> columns, size_t past = 0,
                    size_t future = 0);
  // A row of `group`: its time (NaN when untimed) and line; then add_values for each series.
  void add_time(size_t group, double seconds, int64_t line);
  // Static covariates: named once, before the first group; then each row's cell of column k
  // (NaN: empty). Every series of a group takes the group's values, which may not change
  // from row to row; a group with no value of one is an error when it is finished.
  void set_static_columns(std::vector<std::string> names) { static_columns_ = std::move(names); }
  void add_static(size_t group, size_t k, double value, int64_t line);
  void add_values(size_t series, const float* values) {
    spill_.append(series_[series].stream, values, series_[series].columns.size() * sizeof(float));
  }

  // Every series on its grid, without the leading and trailing steps where no variate is
  // observed (a series with none is dropped), appended to `out` in the order first seen.
  std::vector<SeriesInfo> finish(std::ostream& out);
  int64_t rows() const { return rows_; }
  int64_t dropped() const { return dropped_; }
  const BuilderSettings& settings() const { return settings_; }

 private:
  struct Group {
    std::string key;
    size_t times;  // stream of (double seconds, int64 line)
    std::vector<size_t> series;
    std::vector<double> statics = {};      // NaN until a row gives one
    std::vector<int64_t> static_lines = {};  // the row that gave each
  };
  struct Series {
    std::string name;
    std::vector<std::string> columns;
    size_t stream;
    int64_t past = 0, future = 0;
  };
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<int64_t> positions(const Group& g, std::vector<double>& times, std::vector<int64_t>& lines,
                                 std::string& frequency) const;

  BuilderSettings settings_;
  SpillLog& spill_;
  std::vector<Group> groups_;
  std::vector<Series> series_;
  std::vector<std::string> static_columns_;
  std::unordered_map<std::string, size_t, KeyHash, std::equal_to<>> index_;
  int64_t rows_ = 0, dropped_ = 0;
};

}  // namespace orrery::data
