#pragma once
// Timestamps of users' files, as seconds since 1970-01-01 UTC, and the regular grid they lie
// on. A frequency is a pandas-style string as GIFT-Eval names them: an optional multiple and a
// unit, L (millisecond), S, T (minute), H, D, B (weekdays), W, M (calendar month), Q, A (year),
// e.g. "10S", "5T", "H", "B", "M". Pure C++: no torch.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orrery {

// How a timestamp field is written. Numbers are never guessed: "1949" could be a year, a unix
// second or a row number, so a numeric format is chosen by the caller.
enum class TimeFormat {
  iso,            // 2024-01-31, 2024-01, 2024-01-31 12:00, 2024-01-31T12:00:00.25Z, ...+05:30
  unix_seconds,   // 1706659200, 1706659200.5
  year_fraction,  // R's ts time: 1949.0833 = February 1949 (year + (month - 1) / 12)
};

// Times lie within about 100,000 years of 1970 (+-3.2e12 seconds): far beyond any data, and
// where every date computation here stays exact and within 64-bit integers. parse_timestamp
// refuses times outside; readers of typed times (Arrow timestamps, dates) check them with this.
inline bool in_time_range(double seconds) { return seconds >= -3.2e12 && seconds <= 3.2e12; }

// The field as seconds since the epoch (UTC), or nothing when it is not a timestamp in
// `format` (or outside in_time_range). ISO times without an offset are taken as UTC.
// Surrounding blanks are ignored.
std::optional<double> parse_timestamp(std::string_view text, TimeFormat format = TimeFormat::iso);

// "2024-01-31 12:00:00" (UTC; ".250" when there are milliseconds), for messages; a time
// outside in_time_range as its number of seconds.
std::string format_timestamp(double seconds);

// The frequency of a series' timestamps (any order; at least two distinct ones), from the
// median spacing: missing rows (gaps) and month lengths are tolerated, but a spacing that is
// not a whole number of steps, a step under a second, or a repeated time, throws orrery::Error
// starting with `what` (e.g. "data.csv: column \"date\""). Daily times that skip every weekend
// give "B"; month starts and month ends alike give "M".
std::string infer_frequency(const std::vector<double>& seconds, const std::string& what = "timestamps");

// The step of each time on `frequency`'s grid, counted from the earliest time (position 0),
// so a series with gaps can be laid out on a regular grid. Throws naming `what` when a time is
// off the grid (a Saturday in "B" data, 12:30 in "H" data) or `frequency` is not one
// (Frequency::parse reads it, so pandas' newer aliases such as "15min" or "ME" work too).
std::vector<int64_t> grid_positions(const std::vector<double>& seconds, const std::string& frequency,
                                    const std::string& what = "timestamps");

}  // namespace orrery
