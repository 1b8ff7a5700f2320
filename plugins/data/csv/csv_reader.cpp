#include "csv_reader.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "layout.h"
#include "orrery/csv_fields.h"
#include "orrery/csv_tokenizer.h"
#include "orrery/error.h"
#include "series_builder.h"
#include "spill.h"

namespace orrery::data {
namespace {

constexpr size_t kLookahead = 100;  // rows that decide which columns are numeric

const char* time_hint(TimeFormat f) {
  switch (f) {
    case TimeFormat::iso:
      return "expected an ISO date or time such as 2024-01-31 or 2024-01-31 12:00:00; for numbers set "
             "timestamp_format = \"unix\" or \"year\"";
    case TimeFormat::unix_seconds: return "expected unix seconds (timestamp_format = \"unix\")";
    case TimeFormat::year_fraction: return "expected a fractional year such as 1949.0833 (timestamp_format = \"year\")";
  }
  return "";
}

std::vector<std::string> read_header(CsvTokenizer& in, std::vector<std::string>& fields, int64_t& line) {
  if (!in.next(fields, line)) throw Error(in.path() + ": empty file, expected a header row");
  std::vector<std::string> names;
  std::unordered_map<std::string_view, size_t> column_of;  // a hash: a million columns in linear time
  column_of.reserve(fields.size());
  const std::string where = in.path() + ":" + std::to_string(line);
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string_view name = csv_trim(fields[i]);
    if (name.empty())
      throw Error(where + ": column " + std::to_string(i + 1) + " of the header has no name" +
                  (i + 1 == fields.size() ? " (a trailing comma?)" : ""));
    if (const auto [at, fresh] = column_of.emplace(name, i); !fresh)
      throw Error(where + ": columns " + std::to_string(at->second + 1) + " and " + std::to_string(i + 1) +
                  " are both named " + quote_input(name));
  }
  for (const auto& f : fields) names.emplace_back(csv_trim(f));
  return names;
}

}  // namespace

BuildResult read_csv(const std::string& path, const Json& o, std::ostream& out, const std::string& scratch,
                     const Interrupt* interrupt) {
  const LayoutOptions options = LayoutOptions::from_json(o);
  CsvTokenizer in(path, static_cast<size_t>(o.value("chunk_bytes", int64_t{1} << 20)));
  auto where = [&path](int64_t line) { return path + ":" + std::to_string(line); };
  std::vector<std::string> fields;
  int64_t line = 0;
  const std::vector<std::string> header = read_header(in, fields, line);
  const int64_t header_line = line;
  auto check_width = [&](const std::vector<std::string>& row, int64_t l) {
    if (row.size() != header.size())
      throw Error(where(l) + ": expected " + std::to_string(header.size()) + " fields as in the header, found " +
                  std::to_string(row.size()));
  };

  std::vector<std::pair<std::vector<std::string>, int64_t>> ahead;
  while (ahead.size() < kLookahead && in.next(fields, line)) {
    check_width(fields, line);
    ahead.emplace_back(fields, line);
  }
  if (ahead.empty()) throw Error(where(header_line) + ": no data rows after the header");
  // A text column (names, labels) holds text and no number among its first rows. Any other
  // holds values, so a cell in it that is not a number is an error naming the cell, never a
  // reason to drop the column; one still all missing there is a series that starts later.
  auto numeric = [&](size_t c) {
    bool text = false;
    for (const auto& [row, l] : ahead) {
      const CsvNumber::Kind kind = read_csv_number(csv_trim(row[c])).kind;
      if (kind == CsvNumber::Kind::text) text = true;
      else if (kind != CsvNumber::Kind::missing) return true;
    }
    return !text;
  };
  // For a file without such a column: where column c holds text, for the message.
  auto text_in = [&](size_t c) -> std::string {
    for (const auto& [row, l] : ahead)
      if (read_csv_number(csv_trim(row[c])).kind == CsvNumber::Kind::text)
        return where(l) + " holds " + quote_input(csv_trim(row[c])) + " in column " + quote_input(header[c]);
    return "";
  };
  Layout layout = resolve_layout(header, numeric, options, path, text_in);
  if (layout.any_categorical()) {  // a first pass over the whole file for their categories
    CategoryPass pass(layout, path);
    CsvTokenizer again(path, static_cast<size_t>(o.value("chunk_bytes", int64_t{1} << 20)));
    int64_t l = 0;
    again.next(fields, l);  // the header
    while (again.next(fields, l)) {
      check_interrupt(interrupt);
      check_width(fields, l);
      for (size_t k = 0; k < layout.values.size(); ++k)
        if (layout.categorical[k]) pass.see(k, csv_trim(fields[layout.values[k]]));
    }
    pass.finish();
  }

  SpillLog spill(scratch, static_cast<size_t>(o.value("buffer_bytes", int64_t{64} << 20)));
  SeriesBuilder builder({path, layout.time_name(), options.frequency, where, "line"}, spill);
  RowRouter router(layout, builder, std::filesystem::path(path).stem().string());
  std::vector<double> values(layout.values.size());
  auto take = [&](const std::vector<std::string>& row, int64_t l) {
    check_interrupt(interrupt);  // one atomic load a row, against a row's parsing
    check_width(row, l);
    double seconds = std::numeric_limits<double>::quiet_NaN();
    if (layout.time >= 0) {
      const std::string_view f = csv_trim(row[layout.time]);
      const auto t = parse_timestamp(f, options.time_format);
      if (!t)
        throw Error(where(l) + ": column " + quote_input(header[layout.time]) + ": " +
                    (f.empty() ? std::string("no time") : "cannot read " + quote_input(f) + " as a time") + " (" +
                    time_hint(options.time_format) + ")");
      seconds = *t;
    }
    for (size_t k = 0; k < values.size(); ++k) {
      const std::string_view f = csv_trim(row[layout.values[k]]);
      if (layout.categorical[k]) {
        try {
          values[k] = layout.category(k, f);
        } catch (const Error& e) {
          throw Error(where(l) + ": " + e.what());
        }
        continue;
      }
      const CsvNumber v = read_csv_number(f);
      if (const std::string problem = csv_number_problem(v, f); !problem.empty())
        throw Error(where(l) + ": column " + quote_input(header[layout.values[k]]) + ": " + problem);
      values[k] = v.value;  // NaN when missing; float32's range is the router's check
    }
    router.add(layout.id >= 0 ? csv_trim(row[layout.id]) : std::string_view(), seconds, l, values.data());
  };
  for (const auto& [row, l] : ahead) take(row, l);
  ahead.clear();
  while (in.next(fields, line)) take(fields, line);

  BuildResult result;
  result.series = builder.finish(out);
  result.rows = builder.rows();
  result.dropped = builder.dropped();
  result.static_categories = layout.static_categories();
  return result;
}

}  // namespace orrery::data
