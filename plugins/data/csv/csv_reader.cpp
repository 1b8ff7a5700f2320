#include "csv_reader.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <string_view>

#include "csv_tokenizer.h"
#include "layout.h"
#include "orrery/error.h"
#include "series_builder.h"
#include "spill.h"

namespace orrery::data {
namespace {

constexpr size_t kLookahead = 100;  // rows that decide which columns are numeric

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool missing(std::string_view f) {
  if (f.empty()) return true;
  if (f.size() > 4) return false;
  std::string l(f);
  for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return l == "na" || l == "n/a" || l == "nan" || l == "null" || l == "none";
}

// A number (possibly infinite, or beyond a double's range as +-infinity: the caller decides),
// or nothing.
std::optional<double> number(std::string_view f) {
  if (!f.empty() && f.front() == '+') f.remove_prefix(1);
  double v = 0;
  const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
  if (end != f.data() + f.size() || (ec != std::errc() && ec != std::errc::result_out_of_range)) return std::nullopt;
  if (ec == std::errc::result_out_of_range)  // 1e400 (or 1e-400, which is 0 for any purpose here)
    return std::strtod(std::string(f).c_str(), nullptr);  // +-HUGE_VAL, or the underflow's tiny value
  if (std::isnan(v)) return std::nullopt;
  return v;
}

// Whether a field spells infinity itself ("inf", "-Infinity"), rather than a number too large.
bool spells_infinity(std::string_view f) {
  for (char c : f)
    if (c == 'i' || c == 'I') return true;
  return false;
}

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
  const std::string where = in.path() + ":" + std::to_string(line);
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string name(trim(fields[i]));
    if (name.empty())
      throw Error(where + ": column " + std::to_string(i + 1) + " of the header has no name" +
                  (i + 1 == fields.size() ? " (a trailing comma?)" : ""));
    for (size_t k = 0; k < names.size(); ++k)
      if (names[k] == name)
        throw Error(where + ": columns " + std::to_string(k + 1) + " and " + std::to_string(i + 1) + " are both named " +
                    quote_input(name));
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace

BuildResult read_csv(const std::string& path, const Json& o, std::ostream& out, const std::string& scratch) {
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
  auto numeric = [&](size_t c) {
    for (const auto& [row, l] : ahead) {
      const std::string_view f = trim(row[c]);
      if (!missing(f) && !number(f)) return false;
    }
    return true;
  };
  const Layout layout = resolve_layout(header, numeric, options, path);

  SpillLog spill(scratch, static_cast<size_t>(o.value("buffer_bytes", int64_t{64} << 20)));
  SeriesBuilder builder({path, layout.time_name(), options.frequency, where, "line"}, spill);
  RowRouter router(layout, builder, std::filesystem::path(path).stem().string());
  std::vector<double> values(layout.values.size());
  auto take = [&](const std::vector<std::string>& row, int64_t l) {
    check_width(row, l);
    double seconds = std::numeric_limits<double>::quiet_NaN();
    if (layout.time >= 0) {
      const std::string_view f = trim(row[layout.time]);
      const auto t = parse_timestamp(f, options.time_format);
      if (!t)
        throw Error(where(l) + ": column " + quote_input(header[layout.time]) + ": " +
                    (f.empty() ? std::string("no time") : "cannot read " + quote_input(f) + " as a time") + " (" +
                    time_hint(options.time_format) + ")");
      seconds = *t;
    }
    for (size_t k = 0; k < values.size(); ++k) {
      const std::string_view f = trim(row[layout.values[k]]);
      if (missing(f)) {
        values[k] = std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      const auto v = number(f);
      if (v && !std::isfinite(*v) && !spells_infinity(f))
        throw Error(where(l) + ": column " + quote_input(header[layout.values[k]]) + ": the value " + quote_input(f) +
                    " is beyond float32's range (+-3.4e38): rescale the column");
      if (!v || !std::isfinite(*v))
        throw Error(where(l) + ": column " + quote_input(header[layout.values[k]]) + ": " +
                    (v ? "infinite" : "non-numeric") + " value " + quote_input(f) +
                    " (values are numbers; NA, NaN, null or an empty field mark a missing one)");
      values[k] = *v;
    }
    router.add(layout.id >= 0 ? trim(row[layout.id]) : std::string_view(), seconds, l, values.data());
  };
  for (const auto& [row, l] : ahead) take(row, l);
  ahead.clear();
  while (in.next(fields, line)) take(fields, line);

  BuildResult result;
  result.series = builder.finish(out);
  result.rows = builder.rows();
  result.dropped = builder.dropped();
  return result;
}

}  // namespace orrery::data
