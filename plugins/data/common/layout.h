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
#include "orrery/one_hot.h"
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
  // Covariate columns whose cells are categories (a holiday's name, a weekday, a store's format):
  // each enters as one 0/1 variate (static: one 0/1 static covariate, "column=category") per
  // category seen in its file, as one_hot.h makes them for a forecast.
  std::vector<std::string> categorical;
  // Static covariate columns (one number per series: a store's size): each series' values, the
  // same on every row of it, carried beside its variates rather than as variates.
  std::vector<std::string> static_covariates;

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
  // The last columns of `values`: past-only, then known-future covariates, then `statics` static
  // covariates (which become no variate).
  size_t past = 0, future = 0, statics = 0;
  // categorical[k]: whether values[k] holds categories; categories[k] its categories (byte
  // order), filled by CategoryPass before rows are routed.
  std::vector<bool> categorical;
  std::vector<std::vector<std::string>> categories;
  std::string time_name() const { return time < 0 ? "" : header[time]; }
  bool any_categorical() const;
  // The variates values[k] becomes: one, or one per category.
  size_t width(size_t k) const { return categorical[k] ? categories[k].size() : 1; }
  // Each static covariate column's categories (none when numeric), as BuildResult holds them:
  // text that JSON keeps (non-UTF-8 bytes as \xNN, as a variate's name), so that a cache entry
  // read back names them as the read that built it did.
  std::vector<std::vector<std::string>> static_categories() const;
  // A categorical cell (trimmed) as its category's index; NaN for an empty cell.
  double category(size_t k, std::string_view cell) const;
};

// The first of two passes over a file with categorical columns: every category of each, so that
// a series' variates are known when its first row arrives. Errors name `file` and the column:
// a column with no category, or more than kMaxCategories (one_hot.h), reported as soon as seen.
class CategoryPass {
 public:
  CategoryPass(Layout& layout, const std::string& file);
  void see(size_t k, std::string_view cell) { sets_[k].see(cell); }  // values[k]'s cell, trimmed; "" is missing
  void finish();                                                     // sorts them into layout.categories

 private:
  Layout& layout_;
  std::vector<CategorySet> sets_;  // one per value column
};

// `numeric(i)`: whether column i holds numbers (so that defaults skip text columns). Errors
// name `file` and list the header; `text_in(i)` says where column i holds text ("a.csv:2 holds
// "x" in column "b""), for the message of a file without a numeric column.
Layout resolve_layout(const std::vector<std::string>& header, const std::function<bool(size_t)>& numeric,
                      const LayoutOptions& options, const std::string& file,
                      const std::function<std::string(size_t)>& text_in = {});

// Puts rows into a SeriesBuilder as a layout says, making each group's series on first sight.
// A series' static covariates are checked to be one value (one category) across its rows.
class RowRouter {
 public:
  RowRouter(const Layout& layout, SeriesBuilder& builder, std::string file_stem);
  // `values` in the order of layout.values, NaN where missing, a categorical column's as
  // Layout::category gives it; `id` is ignored when wide.
  void add(std::string_view id, double seconds, int64_t line, const double* values);

 private:
  const Layout& layout_;
  SeriesBuilder& builder_;
  std::string stem_;
  std::vector<std::string> variates_;  // each column's name, or per category "column=category"
  size_t past_ = 0, future_ = 0;       // of the variates: the covariates' (the last ones)
  size_t dynamic_ = 0;                 // values that become variates (the rest: static covariates)
  std::vector<size_t> first_series_;  // of each group: its series are consecutive
  // Static covariates: each static column's first slot in the builder's (one per category when
  // categorical), and per group each categorical one's category index and the line that gave it.
  std::vector<size_t> static_slot_;
  std::vector<std::vector<std::pair<double, int64_t>>> category_seen_;
  void add_statics(size_t group, int64_t line, const double* values);
  std::vector<float> row_;
};


}  // namespace orrery::data
