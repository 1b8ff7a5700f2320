#pragma once
// Which columns of a table are times, ids and values, and how rows become series: shared by
// every tabular format (csv, parquet). The options name columns; the header resolves them.
//   wide: one row per time, each value column a series (or, multivariate, all of them one
//         series with a variate per column);
//   long: one row per (id, time), the value column(s) of an id its series (multivariate: one
//         series with a variate per value column; else one series per id and value column).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "orrery/json.h"
#include "orrery/timestamps.h"
#include "series_builder.h"

namespace orrery::data {

struct LayoutOptions {
  std::string layout = "auto";  // wide, long, auto (long when there is an id column)
  std::string timestamp;        // "": a column named time, timestamp, date, datetime or ds; "none"
  TimeFormat time_format = TimeFormat::iso;
  std::string frequency;        // "": inferred
  std::string id;               // "": a column named id, item_id or series
  std::vector<std::string> value, columns;
  bool multivariate = false;
  // Covariate columns (docs/covariates.md): each series' last variates, past-only ones then
  // known-future ones, after its targets; any makes the layout multivariate.
  std::vector<std::string> past_covariates, future_covariates;

  static LayoutOptions from_json(const Json& options);
  Json to_json() const;  // all of it changes what a file reads as: part of its cache key
};

// The options applied to one file's header.
struct Layout {
  std::vector<std::string> header;
  bool long_form = false;
  int time = -1, id = -1;   // column indices, -1 when absent
  std::vector<int> values;  // value columns, in the order they become variates or series
  bool multivariate = false;
  std::string time_name() const { return time < 0 ? "" : header[time]; }
};

// `numeric(i)`: whether column i holds numbers (so that defaults skip text columns). Errors
// name `file` and list the header; `text_in(i)` says where column i holds text ("a.csv:2 holds
// "x" in column "b""), for the message of a file without a numeric column.
Layout resolve_layout(const std::vector<std::string>& header, const std::function<bool(size_t)>& numeric,
                      const LayoutOptions& options, const std::string& file,
                      const std::function<std::string(size_t)>& text_in = {});

// Puts rows into a SeriesBuilder as a layout says, making each group's series on first sight.
class RowRouter {
 public:
  RowRouter(const Layout& layout, SeriesBuilder& builder, std::string file_stem);
  // `values` in the order of layout.values, NaN where missing; `id` is ignored when wide.
  void add(std::string_view id, double seconds, int64_t line, const double* values);

 private:
  const Layout& layout_;
  SeriesBuilder& builder_;
  std::string stem_;
  std::vector<size_t> first_series_;  // of each group: its series are consecutive
  std::vector<float> row_;
};

// "a, b" -> {"a", "b"}; a JSON list is taken as it is.
std::vector<std::string> name_list(const Json& value);

}  // namespace orrery::data
