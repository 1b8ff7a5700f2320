#include "arrow_reader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "arrow_batches.h"
#include "arrow_cells.h"
#include "layout.h"
#include "orrery/error.h"
#include "series_builder.h"
#include "spill.h"

namespace orrery::data {
namespace {
// The columns a pass reads, ascending as open_batches' projected batches hold them, and where
// a column of the file sits in such a batch. Nothing else is decoded: a wide file's other
// columns cost nothing.
struct Projection {
  std::vector<int> fields;
  explicit Projection(std::vector<int> columns) : fields(std::move(columns)) {
    std::erase(fields, -1);  // no time or id column
    std::sort(fields.begin(), fields.end());
    fields.erase(std::unique(fields.begin(), fields.end()), fields.end());
  }
  int at(int column) const {
    return static_cast<int>(std::lower_bound(fields.begin(), fields.end(), column) - fields.begin());
  }
};
}  // namespace

BuildResult read_arrow_file(const std::string& path, const Json& o, std::ostream& out, const std::string& scratch,
                            const Interrupt* interrupt) {
  const LayoutOptions options = LayoutOptions::from_json(o);
  const auto schema = open_batches(path, 1)->schema();  // it names the columns; no row is read
  std::vector<std::string> header;
  for (const auto& f : schema->fields()) header.push_back(f->name());
  Layout layout = resolve_layout(
      header, [&](size_t c) { return numeric_type(*schema->field(static_cast<int>(c))->type()); }, options, path);
  const int64_t batch_rows = o.value("batch_rows", int64_t{65536});
  if (layout.any_categorical()) {  // a first pass over the whole file, its categorical columns only
    CategoryPass pass(layout, path);
    std::vector<int> categorical;
    for (size_t k = 0; k < layout.values.size(); ++k)
      if (layout.categorical[k]) categorical.push_back(layout.values[k]);
    const Projection read(categorical);
    int64_t seen = 0;
    try {
      auto first = open_batches(path, batch_rows, read.fields);
      while (auto batch = first->next()) {
        check_interrupt(interrupt);
        for (size_t k = 0; k < layout.values.size(); ++k)
          if (layout.categorical[k]) {
            const arrow::Array& column = *batch->column(read.at(layout.values[k]));
            for (int64_t i = 0; i < batch->num_rows(); ++i) pass.see(k, category_at(column, i));
          }
        seen += batch->num_rows();
      }
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {  // as below: damaged pages are reported by exception
      throw Error(path + ": row " + std::to_string(seen + 1) + ": " + e.what());
    }
    pass.finish();
  }

  auto where = [&path](int64_t row) { return path + ": row " + std::to_string(row); };
  SpillLog spill(scratch, static_cast<size_t>(o.value("buffer_bytes", int64_t{64} << 20)));
  SeriesBuilder builder({path, layout.time_name(), options.frequency, where, "row"}, spill);
  RowRouter router(layout, builder, std::filesystem::path(path).stem().string());
  std::vector<double> values(layout.values.size());
  std::vector<int> used = layout.values;
  used.push_back(layout.time), used.push_back(layout.id);
  const Projection read(used);
  auto batches = open_batches(path, batch_rows, read.fields);
  int64_t row = 0;
  try {
    while (auto batch = batches->next()) {
      check_interrupt(interrupt);
      const arrow::Array* time = layout.time >= 0 ? batch->column(read.at(layout.time)).get() : nullptr;
      const arrow::Array* id = layout.id >= 0 ? batch->column(read.at(layout.id)).get() : nullptr;
      std::vector<const arrow::Array*> columns;
      for (int c : layout.values) columns.push_back(batch->column(read.at(c)).get());
      for (int64_t i = 0; i < batch->num_rows(); ++i) {
        ++row;
        double seconds = std::numeric_limits<double>::quiet_NaN();
        if (time) {
          const Cell c = seconds_at(*time, i, options.time_format, seconds);
          if (c != Cell::ok)
            throw Error(where(row) + ": column " + quote_input(header[layout.time]) + ": " +
                        (c == Cell::missing ? std::string("no time")
                                            : "cannot read " + quote_input(cell_text(*time, i)) + " as a time (" +
                                                  time->type()->ToString() + "; for numbers set timestamp_format = "
                                                  "\"unix\" or \"year\")"));
        }
        for (size_t k = 0; k < columns.size(); ++k) {
          if (layout.categorical[k]) {
            try {
              values[k] = layout.category(k, category_at(*columns[k], i));
            } catch (const Error& e) {
              throw Error(where(row) + ": " + e.what());
            }
            continue;
          }
          const Cell c = number_at(*columns[k], i, values[k]);
          if (c == Cell::missing) values[k] = std::numeric_limits<double>::quiet_NaN();
          if (c == Cell::bad)
            throw Error(where(row) + ": column " + quote_input(header[layout.values[k]]) + ": non-numeric value " +
                        quote_input(cell_text(*columns[k], i)) + " (" + columns[k]->type()->ToString() + ")");
        }
        const std::string key = id ? id_at(*id, i) : std::string();
        router.add(key, seconds, row, values.data());
      }
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // parquet reports damaged pages by exception
    throw Error(where(row + 1) + ": " + e.what());
  }
  if (row == 0) throw Error(path + ": no data rows");

  BuildResult result;
  result.series = builder.finish(out);
  result.rows = builder.rows();
  result.dropped = builder.dropped();
  result.static_categories = layout.static_categories();
  return result;
}

}  // namespace orrery::data
