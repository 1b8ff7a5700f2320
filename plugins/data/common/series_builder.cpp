#include "series_builder.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>

#include "orrery/error.h"
#include "orrery/timestamps.h"
#include "orrery/utf8.h"

namespace orrery::data {

Json SeriesInfo::to_json() const {
  Json j = {{"name", name}, {"columns", columns}, {"variates", variates}, {"length", length},
            {"offset", offset}, {"frequency", frequency}};
  j["start"] = start ? Json(*start) : Json(nullptr);
  if (past + future > 0) j["past_covariates"] = past, j["future_covariates"] = future;
  if (!statics.empty()) j["statics"] = statics;
  return j;
}

SeriesInfo SeriesInfo::from_json(const Json& j) {
  SeriesInfo s;
  s.name = j.at("name").get<std::string>();
  s.columns = j.at("columns").get<std::vector<std::string>>();
  s.variates = j.at("variates").get<int64_t>();
  s.length = j.at("length").get<int64_t>();
  s.offset = j.at("offset").get<uint64_t>();
  s.frequency = j.at("frequency").get<std::string>();
  if (!j.at("start").is_null()) s.start = j["start"].get<double>();
  s.past = j.value("past_covariates", int64_t{0});
  s.future = j.value("future_covariates", int64_t{0});
  if (j.contains("statics")) s.statics = j["statics"].get<std::vector<double>>();
  return s;
}

SeriesBuilder::SeriesBuilder(BuilderSettings settings, SpillLog& spill)
    : settings_(std::move(settings)), spill_(spill) {}

size_t SeriesBuilder::group(std::string_view key, bool& created) {
  auto it = index_.find(key);
  created = it == index_.end();
  if (!created) return it->second;
  groups_.push_back({std::string(key), spill_.add_stream(), {},
                     std::vector<double>(static_columns_.size(), std::numeric_limits<double>::quiet_NaN()),
                     std::vector<int64_t>(static_columns_.size(), 0)});
  index_.emplace(std::string(key), groups_.size() - 1);
  return groups_.size() - 1;
}

size_t SeriesBuilder::add_series(size_t group, std::string name, std::vector<std::string> columns, size_t past,
                                 size_t future) {
  // Names from header cells and id values go into JSON (the cache index, config.json, events).
  for (auto& c : columns) c = valid_utf8(c);
  series_.push_back({valid_utf8(name), std::move(columns), spill_.add_stream(), static_cast<int64_t>(past),
                     static_cast<int64_t>(future)});
  groups_[group].series.push_back(series_.size() - 1);
  return series_.size() - 1;
}

void SeriesBuilder::add_time(size_t group, double seconds, int64_t line) {
  char row[16];
  std::memcpy(row, &seconds, 8);
  std::memcpy(row + 8, &line, 8);
  spill_.append(groups_[group].times, row, sizeof row);
  ++rows_;
}

void SeriesBuilder::add_static(size_t group, size_t k, double value, int64_t line) {
  if (std::isnan(value)) return;
  Group& g = groups_[group];
  const std::string column = "column " + quote_input(static_columns_[k]);
  const std::string series = g.key.empty() ? "" : " (series " + quote_input(g.key) + ")";
  auto text = [](double x) {
    char t[32];
    std::snprintf(t, sizeof t, "%.9g", x);
    return std::string(t);
  };
  // The model reads them as float32 (Batch::statics), as a row's values are checked (RowRouter).
  const double a = std::fabs(value);
  if (!(a <= FLT_MAX) || (a > 0 && a < FLT_MIN))
    throw Error(settings_.where(line) + ": " + column + ": the static covariate " + text(value) + series + " is " +
                (a > 0 && a < FLT_MIN ? "below float32's smallest normal number (1.2e-38)" : "not a finite float32 number") +
                ": rescale the column");
  double& known = g.statics[k];
  if (std::isnan(known)) {
    known = value, g.static_lines[k] = line;
  } else if (known != value) {
    throw Error(settings_.where(line) + ": " + column + " is a static covariate (one value per series), but" + series +
                " it is " + text(value) + " here and " + text(known) + " at " + settings_.line_word + " " +
                std::to_string(g.static_lines[k]));
  }
}

// Each row's step on the group's grid: its place in the file when untimed, else from the
// group's frequency (given or inferred). Repeated times are errors naming both lines.
std::vector<int64_t> SeriesBuilder::positions(const Group& g, std::vector<double>& times,
                                              std::vector<int64_t>& lines, std::string& frequency) const {
  const size_t n = times.size();
  std::vector<int64_t> pos(n);
  if (settings_.time_column.empty()) {
    std::iota(pos.begin(), pos.end(), 0);
    frequency = settings_.frequency;  // a given frequency names the file's steps (and its season)
    return pos;
  }
  const std::string series = g.key.empty() && groups_.size() == 1 ? "" : " (series " + quote_input(g.key) + ")";
  const std::string what = settings_.file + ": column " + quote_input(settings_.time_column) + series;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return times[a] != times[b] ? times[a] < times[b] : lines[a] < lines[b];
  });
  for (size_t k = 1; k < n; ++k)
    if (times[order[k]] == times[order[k - 1]])
      throw Error(settings_.where(lines[order[k]]) + ": column " + quote_input(settings_.time_column) + ": the time " +
                  format_timestamp(times[order[k]]) + " repeats " + settings_.line_word + " " + std::to_string(lines[order[k - 1]]) + series +
                  "; each time may appear once per series");
  frequency = settings_.frequency;
  if (frequency.empty() && n >= 2) frequency = infer_frequency(times, what);
  if (frequency.empty()) return pos;  // a single row
  pos = grid_positions(times, frequency, what);
  for (size_t k = 1; k < n; ++k)  // two times within one step (e.g. 12:00 and 12:00:00.001)
    if (pos[order[k]] == pos[order[k - 1]])
      throw Error(settings_.where(lines[order[k]]) + ": column " + quote_input(settings_.time_column) + ": the time " +
                  format_timestamp(times[order[k]]) + " falls on the same " + frequency + " step as " + settings_.line_word + " " +
                  std::to_string(lines[order[k - 1]]) + series);
  // A stray time far from the rest would make a grid of almost nothing but gaps.
  const int64_t span = pos[order.back()] + 1;
  if (span > 20 * static_cast<int64_t>(n) + 1000)
    throw Error(what + ": the times from " + format_timestamp(times[order.front()]) + " to " +
                format_timestamp(times[order.back()]) + " span " + std::to_string(span) + " steps of " + frequency +
                " but there are only " + std::to_string(n) + " rows: a wrong time, or the wrong frequency?");
  return pos;
}

std::vector<SeriesInfo> SeriesBuilder::finish(std::ostream& out) {
  std::vector<SeriesInfo> stored;
  uint64_t offset = 0;
  for (const Group& g : groups_) {
    const std::vector<char> raw = spill_.take(g.times);
    const size_t n = raw.size() / 16;
    std::vector<double> times(n);
    std::vector<int64_t> lines(n);
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(&times[i], raw.data() + 16 * i, 8);
      std::memcpy(&lines[i], raw.data() + 16 * i + 8, 8);
    }
    std::string frequency;
    const std::vector<int64_t> pos = positions(g, times, lines, frequency);
    const int64_t length = n ? *std::max_element(pos.begin(), pos.end()) + 1 : 0;
    for (size_t s : g.series) {
      const Series& series = series_[s];
      const size_t V = series.columns.size();
      const std::vector<char> bytes = spill_.take(series.stream);
      const float* values = reinterpret_cast<const float*>(bytes.data());
      std::vector<float> grid(V * static_cast<size_t>(length), std::numeric_limits<float>::quiet_NaN());
      std::vector<char> seen(static_cast<size_t>(length), 0);
      for (size_t i = 0; i < n; ++i)
        for (size_t v = 0; v < V; ++v) {
          const float x = values[i * V + v];
          grid[v * length + pos[i]] = x;
          if (!std::isnan(x)) seen[pos[i]] = 1;
        }
      const auto first = std::find(seen.begin(), seen.end(), 1);
      if (first == seen.end()) {
        ++dropped_;
        continue;
      }
      const int64_t a = first - seen.begin();
      const int64_t b = length - (std::find(seen.rbegin(), seen.rend(), 1) - seen.rbegin());
      SeriesInfo info;
      info.name = series.name;
      info.columns = series.columns;
      info.variates = static_cast<int64_t>(V);
      info.past = series.past, info.future = series.future;
      for (size_t k = 0; k < static_columns_.size(); ++k)
        if (std::isnan(g.statics[k]))
          throw Error(settings_.file + ": series " + quote_input(series.name) + " has no value of static covariate " +
                      quote_input(static_columns_[k]) + " on any row: each series needs its static covariates");
      info.statics = g.statics;
      info.length = b - a;
      info.offset = offset;
      info.frequency = frequency;
      if (!settings_.time_column.empty())
        for (size_t i = 0; i < n; ++i)
          if (pos[i] == a) info.start = times[i];
      for (size_t v = 0; v < V; ++v)
        out.write(reinterpret_cast<const char*>(grid.data() + v * length + a), (b - a) * sizeof(float));
      offset += V * static_cast<uint64_t>(b - a);
      stored.push_back(std::move(info));
    }
  }
  if (!out) throw Error(settings_.file + ": cannot write its cache (disk full?)");
  return stored;
}

}  // namespace orrery::data
