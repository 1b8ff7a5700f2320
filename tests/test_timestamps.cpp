// Timestamps of users' files: parsing to UTC seconds, the frequency they follow, and the grid
// that gaps are filled on.
#include <catch2/catch.hpp>

#include "orrery/error.h"
#include "orrery/timestamps.h"

using orrery::TimeFormat;
using orrery::infer_frequency;
using orrery::parse_timestamp;

namespace {
constexpr double kDay = 86400;
const double k2024 = 19723 * kDay;  // 2024-01-01 00:00:00 UTC

std::vector<double> every(double start, double step, int n) {
  std::vector<double> t;
  for (int i = 0; i < n; ++i) t.push_back(start + i * step);
  return t;
}

std::vector<double> iso(std::initializer_list<const char*> texts) {
  std::vector<double> t;
  for (const char* s : texts) t.push_back(parse_timestamp(s).value());
  return t;
}
}  // namespace

TEST_CASE("ISO dates and datetimes parse to UTC seconds") {
  CHECK(parse_timestamp("1970-01-01") == 0.0);
  CHECK(parse_timestamp("2024-01-01") == k2024);
  CHECK(parse_timestamp("2024-01-31") == k2024 + 30 * kDay);
  CHECK(parse_timestamp("2024-02-29") == k2024 + 59 * kDay);  // a leap day
  CHECK(parse_timestamp("2024/01/31") == k2024 + 30 * kDay);
  CHECK(parse_timestamp("2024-01") == k2024);  // a month alone: its first day
  CHECK(parse_timestamp("1949-03-01") == -7611 * kDay);  // before 1970
  CHECK(parse_timestamp("2024-01-31 12:00:00") == k2024 + 30 * kDay + 43200);
  CHECK(parse_timestamp("2024-01-31T12:00:00Z") == k2024 + 30 * kDay + 43200);
  CHECK(parse_timestamp("2024-01-31T12:00") == k2024 + 30 * kDay + 43200);
  CHECK(parse_timestamp("  2024-01-31 12:00:00  ") == k2024 + 30 * kDay + 43200);
  CHECK(parse_timestamp("2024-01-31T12:00:00.25Z").value() == Approx(k2024 + 30 * kDay + 43200.25).epsilon(0));
  CHECK(parse_timestamp("2024-01-31T12:00:00+02:00") == k2024 + 30 * kDay + 36000);
  CHECK(parse_timestamp("2024-01-31T12:00:00-0530") == k2024 + 30 * kDay + 43200 + 19800);
  CHECK(parse_timestamp("2024-01-31 12:00:00.5+01:00").value() == Approx(k2024 + 30 * kDay + 39600.5).epsilon(0));
}

TEST_CASE("text that is not an ISO timestamp is refused, not guessed") {
  for (const char* bad : {"", "abc", "2024-13-01", "2024-02-30", "2023-02-29", "2024-01-31 25:00", "2024-01-31T12",
                          "2024-01-31 12:00:00 junk", "2024-01-31T12:00:00+2", "1706659200", "1949.0833",
                          "31/01/2024", "2024-01-31T12:00:00.Z"}) {
    INFO(bad);
    CHECK_FALSE(parse_timestamp(bad).has_value());
  }
}

TEST_CASE("numbers are unix seconds or R's fractional years only when asked") {
  CHECK(parse_timestamp("1706659200", TimeFormat::unix_seconds) == 1706659200.0);
  CHECK(parse_timestamp("1706659200.5", TimeFormat::unix_seconds) == 1706659200.5);
  CHECK(parse_timestamp("1.7e9", TimeFormat::unix_seconds) == 1.7e9);
  CHECK_FALSE(parse_timestamp("2024-01-31", TimeFormat::unix_seconds).has_value());
  CHECK_FALSE(parse_timestamp("12abc", TimeFormat::unix_seconds).has_value());
  CHECK_FALSE(parse_timestamp("inf", TimeFormat::unix_seconds).has_value());
  // R's monthly ts: year + (month - 1) / 12, at full precision or rounded
  CHECK(parse_timestamp("1949", TimeFormat::year_fraction) == parse_timestamp("1949-01-01"));
  CHECK(parse_timestamp("1949.0833", TimeFormat::year_fraction) == parse_timestamp("1949-02-01"));
  CHECK(parse_timestamp("1949.08333333333", TimeFormat::year_fraction) == parse_timestamp("1949-02-01"));
  CHECK(parse_timestamp("1949.92", TimeFormat::year_fraction) == parse_timestamp("1949-12-01"));
  CHECK(parse_timestamp("1960.9999", TimeFormat::year_fraction) == parse_timestamp("1961-01-01"));
  CHECK(parse_timestamp("1949.25", TimeFormat::year_fraction) == parse_timestamp("1949-04-01"));  // quarterly
  // A fraction between months is placed proportionally through the year.
  CHECK(parse_timestamp("2023.5", TimeFormat::year_fraction) == parse_timestamp("2023-07-01"));
  CHECK(parse_timestamp("2023.1", TimeFormat::year_fraction).value() ==
        Approx(parse_timestamp("2023-01-01").value() + 36.5 * kDay));
}

TEST_CASE("timestamps format back for messages") {
  CHECK(orrery::format_timestamp(k2024 + 30 * kDay + 43200) == "2024-01-31 12:00:00");
  CHECK(orrery::format_timestamp(k2024 + 0.25) == "2024-01-01 00:00:00.250");
  CHECK(orrery::format_timestamp(-1) == "1969-12-31 23:59:59");
}

TEST_CASE("sub-daily frequencies come from the median spacing") {
  CHECK(infer_frequency(every(k2024, 1, 50)) == "S");
  CHECK(infer_frequency(every(k2024, 10, 50)) == "10S");
  CHECK(infer_frequency(every(k2024, 60, 50)) == "T");
  for (int m : {5, 10, 15, 30}) CHECK(infer_frequency(every(k2024, m * 60, 50)) == std::to_string(m) + "T");
  CHECK(infer_frequency(every(k2024, 3600, 50)) == "H");
  CHECK(infer_frequency(every(k2024, 6 * 3600, 50)) == "6H");
  // any order
  auto t = every(k2024, 3600, 10);
  std::reverse(t.begin(), t.end());
  CHECK(infer_frequency(t) == "H");
}

TEST_CASE("gaps of missing rows do not change the frequency") {
  auto t = every(k2024, 900, 100);
  t.erase(t.begin() + 10, t.begin() + 30);  // a stretch of 20 missing rows
  t.erase(t.begin() + 50);
  CHECK(infer_frequency(t) == "15T");
  // more than half the rows missing: the smallest spacing is the step
  CHECK(infer_frequency({0, 3600, 3 * 3600, 5 * 3600, 7 * 3600, 10 * 3600}) == "H");
  auto d = every(k2024, kDay, 60);
  d.erase(d.begin() + 5, d.begin() + 12);
  CHECK(infer_frequency(d) == "D");
}

TEST_CASE("daily, business-daily and weekly series") {
  CHECK(infer_frequency(every(k2024, kDay, 30)) == "D");
  CHECK(infer_frequency(every(k2024, 7 * kDay, 30)) == "W");
  CHECK(infer_frequency(every(k2024 + 6 * kDay, 7 * kDay, 30)) == "W");  // anchored on Sundays
  CHECK(infer_frequency(every(k2024, 2 * kDay, 30)) == "2D");
  std::vector<double> weekdays;  // 2024-01-01 was a Monday
  for (int d = 0; d < 60; ++d)
    if (d % 7 < 5) weekdays.push_back(k2024 + d * kDay);
  CHECK(infer_frequency(weekdays) == "B");
  // four weekdays in a row cannot tell business days from days
  CHECK(infer_frequency(every(k2024, kDay, 4)) == "D");
  // a local-time series crossing a DST change (23- and 25-hour days) is still daily
  auto dst = every(k2024, kDay, 20);
  for (size_t i = 10; i < dst.size(); ++i) dst[i] -= 3600;
  CHECK(infer_frequency(dst) == "D");
}

TEST_CASE("calendar months, quarters and years despite their lengths") {
  CHECK(infer_frequency(iso({"2023-01-01", "2023-02-01", "2023-03-01", "2023-04-01", "2023-05-01"})) == "M");
  CHECK(infer_frequency(iso({"2023-01-31", "2023-02-28", "2023-03-31", "2023-04-30", "2023-05-31"})) == "M");
  CHECK(infer_frequency(iso({"2023-01-15", "2023-02-15", "2023-04-15", "2023-05-15"})) == "M");  // a gap
  CHECK(infer_frequency(iso({"2023-03-31", "2023-06-30", "2023-09-30", "2023-12-31", "2024-03-31"})) == "Q");
  CHECK(infer_frequency(iso({"2020-01-01", "2021-01-01", "2022-01-01", "2024-01-01"})) == "A");
  CHECK(infer_frequency(iso({"2020-12-31", "2021-12-31", "2022-12-31"})) == "A");
  CHECK(infer_frequency(iso({"2020-01-01", "2020-03-01", "2020-05-01", "2020-07-01"})) == "2M");
  std::vector<double> r;  // R's monthly AirPassengers times
  for (int i = 0; i < 24; ++i) r.push_back(parse_timestamp(std::to_string(1949 + i / 12.0), TimeFormat::year_fraction).value());
  CHECK(infer_frequency(r) == "M");
}

TEST_CASE("irregular, repeated or too few timestamps are errors that name the column") {
  CHECK_THROWS_WITH(infer_frequency({0, 3600, 7200, 7270, 10800}, "a.csv: column \"date\""),
                    Catch::StartsWith("a.csv: column \"date\": irregular timestamps") &&
                        Catch::Contains("from 1970-01-01 02:00:00 to 1970-01-01 02:01:10 it is 1.17 minutes"));
  // one stray half-hour row in hourly data is an error, not a half-hourly grid
  auto stray = every(0, 3600, 40);
  stray.push_back(10 * 3600 + 1800);
  CHECK_THROWS_WITH(infer_frequency(stray, "s.csv"), Catch::Contains("s.csv: irregular") &&
                                                         Catch::Contains("to 1970-01-01 10:30:00 it is 30 minutes"));
  CHECK_THROWS_WITH(infer_frequency({0, 60, 60, 120}, "b.csv"),
                    Catch::Contains("b.csv: the time 1970-01-01 00:01:00 appears twice"));
  CHECK_THROWS_WITH(infer_frequency({5}, "c.csv"), Catch::Contains("c.csv: a frequency needs at least two"));
  CHECK_THROWS_WITH(infer_frequency({0, 0.5, 1, 1.5}, "d.csv"), Catch::Contains("sub-second"));
  // month starts mixed with month ends drift by weeks
  CHECK_THROWS_WITH(infer_frequency(iso({"2023-01-01", "2023-02-28", "2023-03-01", "2023-04-30"}), "e.csv"),
                    Catch::Contains("e.csv: irregular"));
  CHECK_THROWS_AS(infer_frequency({0, kDay, 2.5 * kDay, 3.5 * kDay}), orrery::Error);
}

TEST_CASE("times are placed on their frequency's grid") {
  using orrery::grid_positions;
  CHECK(grid_positions({7200, 0, 3600 * 5}, "H") == std::vector<int64_t>{2, 0, 5});
  CHECK(grid_positions({0, 900, 3600}, "15T") == std::vector<int64_t>{0, 1, 4});
  CHECK(grid_positions({0, 900, 3600}, "15min") == std::vector<int64_t>{0, 1, 4});  // pandas' newer alias
  CHECK(grid_positions(iso({"2023-01-31", "2023-02-28", "2023-05-31"}), "M") == std::vector<int64_t>{0, 1, 4});
  CHECK(grid_positions(iso({"2023-01-01", "2023-07-01", "2024-01-01"}), "Q") == std::vector<int64_t>{0, 2, 4});
  CHECK(grid_positions(iso({"2020-06-30", "2023-06-30"}), "A") == std::vector<int64_t>{0, 3});
  // Friday, Monday, Wednesday of the next week
  CHECK(grid_positions(iso({"2024-01-05", "2024-01-08", "2024-01-17"}), "B") == std::vector<int64_t>{0, 1, 8});
  CHECK(grid_positions(iso({"2024-01-01", "2024-01-15"}), "W") == std::vector<int64_t>{0, 2});
  CHECK_THROWS_WITH(grid_positions({0, 1800}, "H", "x.csv"),
                    Catch::Contains("x.csv: the time 1970-01-01 00:30:00 is not on the H grid"));
  CHECK_THROWS_WITH(grid_positions(iso({"2024-01-05", "2024-01-06"}), "B", "y.csv"),
                    Catch::Contains("y.csv: the time 2024-01-06 00:00:00 is not on the B grid"));
  CHECK_THROWS_WITH(grid_positions({0}, "fortnightly", "z.csv"), Catch::Contains("z.csv: unknown frequency"));
}
