#include "orrery/csv_fields.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "orrery/error.h"

namespace orrery {

std::string_view csv_trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool csv_missing(std::string_view f) {
  if (f.empty()) return true;
  if (f.size() > 4) return false;
  std::string l(f);
  for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return l == "na" || l == "n/a" || l == "#n/a" || l == "nan" || l == "null" || l == "none" || l == "nil" ||
         l == "-" || l == "--" || l == "?";
}

CsvNumber read_csv_number(std::string_view f) {
  using Kind = CsvNumber::Kind;
  if (csv_missing(f)) return {Kind::missing, std::numeric_limits<double>::quiet_NaN()};
  std::string_view digits = f;
  if (digits.front() == '+') digits.remove_prefix(1);
  double v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (end != digits.data() + digits.size() || digits.empty()) return {Kind::text, 0};
  // Too large for a double ("1e400") or too small ("1e-400", which would silently read as 0).
  if (ec == std::errc::result_out_of_range) return {Kind::out_of_range, 0};
  if (ec != std::errc()) return {Kind::text, 0};
  if (std::isnan(v)) return {Kind::missing, v};  // "nan" spelled otherwise ("NAN(123)")
  if (std::isinf(v)) return {Kind::infinite, v};
  return {Kind::number, v};
}

std::string csv_number_problem(const CsvNumber& n, std::string_view f) {
  switch (n.kind) {
    case CsvNumber::Kind::number:
    case CsvNumber::Kind::missing: return "";
    case CsvNumber::Kind::infinite: return "infinite value " + quote_input(f);
    case CsvNumber::Kind::out_of_range:
      return "the value " + quote_input(f) + " is outside a double's range (1e-308 to 1.8e308 in size): rescale the column";
    case CsvNumber::Kind::text: break;
  }
  return "non-numeric value " + quote_input(f) +
         " (values are numbers; NA, N/A, NaN, null, None, -, ? or an empty field mark a missing one)";
}

}  // namespace orrery
