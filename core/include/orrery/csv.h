#pragma once
#include <string>
#include <vector>

namespace orrery {
// A numeric CSV with a header row; empty fields and NA/NaN become NaN. A UTF-8 byte-order
// mark is skipped. Errors name file:line and quote at most ~80 characters of the input: a
// folder, binary data, a header column without a name or with a repeated one, a row of the
// wrong width, a non-numeric, infinite or out-of-range value.
struct CsvTable {
  std::vector<std::string> names;
  std::vector<std::vector<double>> columns;
  const std::vector<double>& column(const std::string& name) const;  // throws if absent
};
CsvTable read_csv(const std::string& path);
}  // namespace orrery
