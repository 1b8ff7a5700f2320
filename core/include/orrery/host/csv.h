#pragma once
#include <string>
#include <vector>

namespace orrery {
// A numeric CSV with a header row, read by the csv data plugin's rule (csv_tokenizer.h,
// csv_fields.h: RFC 4180 quoting, missing markers become NaN, decimal numbers only). A UTF-8
// byte-order mark is skipped. Errors name file:line and quote at most ~80 characters of the
// input: a folder or pipe, binary data, an unclosed quote, a header column without a name or
// with a repeated one, a row of the wrong width, a non-numeric, infinite or out-of-range value.
// Columns named in `text_columns` (e.g. a timestamp) are kept as text, unparsed, in `text`;
// their entry in `columns` is empty.
struct CsvTable {
  std::vector<std::string> names;
  std::vector<std::vector<double>> columns;
  std::vector<std::vector<std::string>> text;  // per column: filled for text columns only
  const std::vector<double>& column(const std::string& name) const;  // throws if absent
  bool has(const std::string& name) const;
  size_t rows() const;  // data rows below the header
};
CsvTable read_csv(const std::string& path, const std::vector<std::string>& text_columns = {});
}  // namespace orrery
