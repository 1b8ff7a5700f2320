#include "orrery/timestamps.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "orrery/error.h"
#include "orrery/frequency.h"

namespace orrery {
namespace {

constexpr double kDay = 86400;
constexpr double kMonthDays = 365.2425 / 12;  // a mean Gregorian month
// Day-based spacings may be off by an hour when a file's local times cross a DST change.
constexpr double kDayTolerance = 1.5 * 3600;
// Sub-daily times are read from decimal text: allow for the rounding of parsed fractions.
constexpr double kSecondTolerance = 2e-3;

// Days since 1970-01-01 of a proleptic Gregorian date (the era-based civil calendar method:
// 400-year eras of 146097 days, years counted from March so February's length comes last).
int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

struct Civil {
  int64_t year;
  int month, day;
};

Civil civil_from_days(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {yoe + era * 400 + (month <= 2), month, day};
}

bool leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int64_t y, int m) {
  static constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap(y) ? 29 : days[m - 1];
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t day_of(double seconds) { return static_cast<int64_t>(std::floor(seconds / kDay)); }
int64_t month_index(double seconds) {
  const Civil c = civil_from_days(day_of(seconds));
  return c.year * 12 + c.month - 1;
}
int weekday(int64_t days) { return static_cast<int>(((days + 3) % 7 + 7) % 7); }  // Monday = 0

// A cursor over an ISO timestamp.
struct Cursor {
  std::string_view s;
  size_t i = 0;
  bool done() const { return i == s.size(); }
  bool peek(char c) const { return i < s.size() && s[i] == c; }
  bool eat(char c) { return peek(c) ? (++i, true) : false; }
  // Between `min` and `max` decimal digits.
  bool number(size_t min, size_t max, int& out) {
    size_t n = 0;
    out = 0;
    while (i < s.size() && n < max && s[i] >= '0' && s[i] <= '9') out = out * 10 + (s[i++] - '0'), ++n;
    return n >= min;
  }
};

std::optional<double> parse_iso(std::string_view text) {
  Cursor c{text};
  int year, month, day = 1;
  if (!c.number(4, 4, year)) return std::nullopt;
  const char sep = c.peek('/') ? '/' : '-';
  if (!c.eat(sep) || !c.number(1, 2, month) || month < 1 || month > 12) return std::nullopt;
  if (c.eat(sep) && (!c.number(1, 2, day) || day < 1 || day > days_in_month(year, month))) return std::nullopt;
  double seconds = static_cast<double>(days_from_civil(year, month, day)) * kDay;
  if (c.done()) return seconds;
  if (!c.eat('T') && !c.eat(' ')) return std::nullopt;
  while (c.eat(' ')) {}
  int hour, minute, second = 0;
  if (!c.number(2, 2, hour) || hour > 23 || !c.eat(':') || !c.number(2, 2, minute) || minute > 59)
    return std::nullopt;
  double fraction = 0;
  if (c.eat(':')) {
    if (!c.number(2, 2, second) || second > 60) return std::nullopt;  // 60: a leap second
    if (c.eat('.') || c.eat(',')) {
      double scale = 0.1;
      size_t digits = 0;
      for (; !c.done() && c.s[c.i] >= '0' && c.s[c.i] <= '9'; ++c.i, ++digits, scale /= 10)
        fraction += (c.s[c.i] - '0') * scale;
      if (digits == 0) return std::nullopt;
    }
  }
  seconds += hour * 3600.0 + minute * 60.0 + second + fraction;
  while (c.eat(' ')) {}
  if (c.eat('Z') || c.eat('z')) return c.done() ? std::optional(seconds) : std::nullopt;
  if (c.done()) return seconds;
  const int sign = c.eat('+') ? 1 : c.eat('-') ? -1 : 0;
  int oh, om = 0;
  if (sign == 0 || !c.number(2, 2, oh) || oh > 23) return std::nullopt;
  if (!c.done()) {
    c.eat(':');
    if (!c.number(2, 2, om) || om > 59 || !c.done()) return std::nullopt;
  }
  return seconds - sign * (oh * 3600.0 + om * 60.0);  // local time minus its offset is UTC
}

std::optional<double> parse_number(std::string_view text) {
  double v = 0;
  const char* end = text.data() + text.size();
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

// R writes a monthly ts's times as year + (month - 1) / 12, often rounded to a few decimals:
// within 0.05 of a month the time is that month's first day. Other fractions (R's weekly or
// daily ts) are placed proportionally through the year.
double from_year_fraction(double x) {
  const double year = std::floor(x), months = (x - year) * 12, whole = std::round(months);
  const auto y = static_cast<int64_t>(year);
  if (std::fabs(months - whole) < 0.05)
    return static_cast<double>(days_from_civil(y + (whole >= 12), static_cast<int>(whole) % 12 + 1, 1)) * kDay;
  const double start = static_cast<double>(days_from_civil(y, 1, 1)) * kDay;
  return start + (x - year) * (leap(y) ? 366 : 365) * kDay;
}

std::string name(int64_t multiple, char unit) {
  return (multiple == 1 ? std::string() : std::to_string(multiple)) + unit;
}

// "15 minutes", "1 day", "31 days": spacings in messages.
std::string spacing(double seconds) {
  const struct { double size; const char* unit; } units[] = {
      {kDay, "day"}, {3600, "hour"}, {60, "minute"}, {1, "second"}};
  for (const auto& u : units)
    if (seconds >= u.size || u.size == 1) {
      char buf[64];
      const double n = seconds / u.size;
      std::snprintf(buf, sizeof buf, std::fabs(n - std::round(n)) < 1e-9 ? "%.0f %s%s" : "%.3g %s%s", n,
                    u.unit, std::fabs(n - 1) < 1e-9 ? "" : "s");
      return buf;
    }
  return {};
}

// `why` the spacing from t[i - 1] to t[i] does not fit: by default, it is no whole number of the
// typical spacing's steps.
[[noreturn]] void irregular(const std::string& what, const std::vector<double>& t, size_t i, double typical,
                            const std::string& why = "not a whole number of steps") {
  throw Error(what + ": irregular timestamps: the typical spacing is " + spacing(typical) +
              " but from " + format_timestamp(t[i - 1]) + " to " + format_timestamp(t[i]) + " it is " +
              spacing(t[i] - t[i - 1]) + ", " + why + " (set the frequency explicitly if the data has one)");
}

struct Misfits {
  size_t first = 0, count = 0;  // first: index in the times of a misfit spacing's end
};

// The grid step: the median spacing, or the smallest spacing when at least a tenth of the
// spacings are not whole multiples of the median (over half the rows missing). A few misfits
// are stray rows: 0, and the caller reports the first.
template <class Check>
int64_t pick_step(int64_t median, int64_t smallest, size_t spacings, const Check& misfits, Misfits& bad) {
  bad = misfits(median);
  if (bad.count == 0) return median;
  if (bad.count * 10 >= spacings && smallest >= 1 && misfits(smallest).count == 0) return smallest;
  return 0;
}

// Spacings counted in whole units (days, months) that are not positive multiples of `step`.
Misfits off_multiple(const std::vector<int64_t>& steps, int64_t step) {
  Misfits m;
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i] < 1 || steps[i] % step != 0) {
      if (m.count++ == 0) m.first = i + 1;
    }
  return m;
}

// Sub-daily: a fixed step of whole seconds.
std::string sub_daily(const std::vector<double>& t, const std::vector<double>& d, double median,
                      const std::string& what) {
  const size_t shortest = std::min_element(d.begin(), d.end()) - d.begin();
  if (d[shortest] < 1 - kSecondTolerance)
    throw Error(what + ": timestamps less than a second apart (" + format_timestamp(t[shortest]) + " and " +
                format_timestamp(t[shortest + 1]) + "): sub-second data is not supported");
  auto misfits = [&](int64_t step) {
    Misfits m;
    for (size_t i = 0; i < d.size(); ++i) {
      const double k = std::round(d[i] / static_cast<double>(step));
      if (k < 1 || std::fabs(d[i] - k * static_cast<double>(step)) > kSecondTolerance) {
        if (m.count++ == 0) m.first = i + 1;
      }
    }
    return m;
  };
  Misfits bad;
  const int64_t s = pick_step(std::llround(median), std::llround(d[shortest]), d.size(), misfits, bad);
  if (s == 0) irregular(what, t, bad.first, median);
  return s % 3600 == 0 ? name(s / 3600, 'H') : s % 60 == 0 ? name(s / 60, 'T') : name(s, 'S');
}

std::string daily(const std::vector<double>& t, const std::vector<double>& d, double median,
                  const std::string& what) {
  std::vector<int64_t> days(d.size());
  for (size_t i = 0; i < d.size(); ++i) {
    days[i] = std::llround(d[i] / kDay);
    if (std::fabs(d[i] - days[i] * kDay) > kDayTolerance) irregular(what, t, i + 1, median);
  }
  Misfits bad;
  const int64_t step = pick_step(std::max<int64_t>(1, std::llround(median / kDay)),
                                 *std::min_element(days.begin(), days.end()), days.size(),
                                 [&](int64_t s) { return off_multiple(days, s); }, bad);
  if (step == 0) irregular(what, t, bad.first, median);
  if (step == 1) {
    // Weekday-only data: no time on a Saturday or Sunday over a span that must cross a weekend
    // (five weekdays at most follow each other).
    const int64_t first = day_of(t.front());
    bool weekdays = true;
    int64_t date = first;
    for (size_t i = 0; i <= days.size() && weekdays; ++i) {
      if (i > 0) date += days[i - 1];
      weekdays = weekday(date) < 5;
    }
    if (weekdays && date - first > 4) return "B";
  }
  return step % 7 == 0 ? name(step / 7, 'W') : name(step, 'D');
}

std::string monthly(const std::vector<double>& t, const std::vector<double>& d, double median,
                    const std::string& what) {
  std::vector<int64_t> months(d.size());
  for (size_t i = 0; i < d.size(); ++i) {
    months[i] = month_index(t[i + 1]) - month_index(t[i]);
    // Month lengths differ by up to three days: more than that, and the days of the month
    // drift (e.g. month starts mixed with month ends).
    if (months[i] < 1 || std::fabs(d[i] / kDay - months[i] * kMonthDays) > 3.5) {
      const int from = civil_from_days(day_of(t[i])).day, to = civil_from_days(day_of(t[i + 1])).day;
      irregular(what, t, i + 1, median,
                from == to ? "not a whole number of months"
                           : "and the day of the month moves from " + std::to_string(from) + " to " + std::to_string(to) +
                                 ": not a whole number of months");
    }
  }
  Misfits bad;
  const int64_t step = pick_step(std::max<int64_t>(1, std::llround(median / kDay / kMonthDays)),
                                 *std::min_element(months.begin(), months.end()), months.size(),
                                 [&](int64_t s) { return off_multiple(months, s); }, bad);
  if (step == 0) irregular(what, t, bad.first, median);
  return step % 12 == 0 ? name(step / 12, 'A') : step % 3 == 0 ? name(step / 3, 'Q') : name(step, 'M');}

}  // namespace

std::optional<double> parse_timestamp(std::string_view text, TimeFormat format) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  switch (format) {
    case TimeFormat::iso: return parse_iso(text);
    case TimeFormat::unix_seconds: {
      auto x = parse_number(text);
      if (!x || !in_time_range(*x)) return std::nullopt;
      return x;
    }
    case TimeFormat::year_fraction: {
      auto x = parse_number(text);
      if (!x || *x < -100000 || *x > 100000) return std::nullopt;
      return from_year_fraction(*x);
    }
  }
  return std::nullopt;
}

std::string format_timestamp(double seconds) {
  if (!std::isfinite(seconds)) return "(not a time)";
  if (!in_time_range(seconds)) {  // beyond the calendar arithmetic below
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g seconds since 1970", seconds);
    return buf;
  }
  const int64_t ms_total = std::llround(seconds * 1000);
  const int64_t days = floor_div(ms_total, 86400000);
  const int64_t ms = ms_total - days * 86400000;
  const Civil c = civil_from_days(days);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02d-%02d %02d:%02d:%02d", static_cast<long long>(c.year), c.month, c.day,
                static_cast<int>(ms / 3600000), static_cast<int>(ms / 60000 % 60), static_cast<int>(ms / 1000 % 60));
  std::string out = buf;
  if (ms % 1000) {
    std::snprintf(buf, sizeof buf, ".%03d", static_cast<int>(ms % 1000));
    out += buf;
  }
  return out;
}

std::string infer_frequency(const std::vector<double>& seconds, const std::string& what) {
  std::vector<double> t = seconds;
  std::sort(t.begin(), t.end());
  for (size_t i = 1; i < t.size(); ++i)
    if (t[i] == t[i - 1]) throw Error(what + ": the time " + format_timestamp(t[i]) + " appears twice");
  if (t.size() < 2) throw Error(what + ": a frequency needs at least two timestamps");
  std::vector<double> d(t.size() - 1);
  for (size_t i = 0; i < d.size(); ++i) d[i] = t[i + 1] - t[i];
  std::vector<double> sorted = d;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  const double median = sorted[sorted.size() / 2];
  if (median < 0.75 * kDay) return sub_daily(t, d, median, what);
  if (median < 26 * kDay) return daily(t, d, median, what);
  return monthly(t, d, median, what);
}

std::vector<int64_t> grid_positions(const std::vector<double>& seconds, const std::string& frequency,
                                    const std::string& what) {
  Frequency f;
  try {
    f = Frequency::parse(frequency);
  } catch (const Error& e) {
    throw Error(what + ": " + e.what());
  }
  std::vector<int64_t> pos(seconds.size());
  if (seconds.empty()) return pos;
  const double t0 = *std::min_element(seconds.begin(), seconds.end());
  auto off_grid = [&](double t) {
    return Error(what + ": the time " + format_timestamp(t) + " is not on the " + frequency + " grid that starts at " +
                 format_timestamp(t0));
  };
  const int64_t m = f.multiple;
  switch (f.base[0]) {
    case 'M': case 'Q': case 'A': {
      const int64_t per = m * (f.base == "M" ? 1 : f.base == "Q" ? 3 : 12), first = month_index(t0);
      for (size_t i = 0; i < seconds.size(); ++i) {
        const int64_t k = month_index(seconds[i]) - first;
        if (k % per) throw off_grid(seconds[i]);
        pos[i] = k / per;
      }
      return pos;
    }
    case 'B': {
      // Business days are counted in Monday-based weeks of five; dates are the first time's day
      // plus whole days, so times an hour off (DST) keep their date.
      auto business = [](int64_t date) { return floor_div(date + 3, 7) * 5 + weekday(date); };
      const int64_t first = day_of(t0);
      for (size_t i = 0; i < seconds.size(); ++i) {
        const double days = (seconds[i] - t0) / kDay;
        const int64_t date = first + std::llround(days);
        if (std::fabs(days - std::round(days)) * kDay > kDayTolerance || weekday(date) >= 5) throw off_grid(seconds[i]);
        const int64_t k = business(date) - business(first);
        if (k % m) throw off_grid(seconds[i]);
        pos[i] = k / m;
      }
      return pos;
    }
    default: {
      const double unit = f.base == "S" ? 1 : f.base == "T" ? 60 : f.base == "H" ? 3600 : f.base == "D" ? kDay : 7 * kDay;
      const double step = unit * static_cast<double>(m);
      const double tolerance = step >= kDay ? kDayTolerance : kSecondTolerance;
      for (size_t i = 0; i < seconds.size(); ++i) {
        const double k = std::round((seconds[i] - t0) / step);
        if (std::fabs(seconds[i] - t0 - k * step) > tolerance) throw off_grid(seconds[i]);
        pos[i] = static_cast<int64_t>(k);
      }
      return pos;
    }
  }
}

}  // namespace orrery
