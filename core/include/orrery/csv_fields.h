#pragma once
// The one rule for a CSV cell, shared by every reader of CSV files: the csv data plugin, and the
// host's read_csv behind `orrery forecast`, `orrery eval` and orrery.read_csv. Rows are split by
// CsvTokenizer (RFC 4180 quoting); a cell is trimmed of spaces and tabs; a missing value is an
// empty cell or a common marker; a number is a decimal as std::from_chars reads it (no hex,
// no "1,5"), with an optional leading '+'.
#include <string>
#include <string_view>

namespace orrery {

std::string_view csv_trim(std::string_view cell);

// Empty, or (in any case) NA, N/A, #N/A, NaN, null, None, nil, "-", "--" or "?".
bool csv_missing(std::string_view trimmed);

struct CsvNumber {
  enum class Kind {
    number,        // `value` holds it, finite
    missing,       // a missing marker: value is NaN
    infinite,      // spelled as infinity ("inf", "-Infinity")
    out_of_range,  // digits outside a double's range: "1e400", and "1e-400" (not silently 0)
    text,          // anything else
  };
  Kind kind = Kind::missing;
  double value = 0;
};
CsvNumber read_csv_number(std::string_view trimmed);

// Why a cell is not a number, for a message "FILE:LINE: column "c": " + this; "" for a number
// or a missing value. `what` of "infinite value "inf"", "non-numeric value "abc" (...)", ...
std::string csv_number_problem(const CsvNumber& n, std::string_view trimmed);

}  // namespace orrery
