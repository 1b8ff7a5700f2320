#pragma once
#include <string>
#include <vector>

namespace orrery {
// A numeric CSV with a header row; empty fields and NA/NaN become NaN. Errors name file:line.
struct CsvTable {
  std::vector<std::string> names;
  std::vector<std::vector<double>> columns;
  const std::vector<double>& column(const std::string& name) const;  // throws if absent
};
CsvTable read_csv(const std::string& path);
}  // namespace orrery
