#include "orrery/csv.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "orrery/error.h"

namespace orrery {
namespace {

std::vector<std::string> split_row(const std::string& line) {
  std::vector<std::string> fields;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) fields.push_back(cur), cur.clear();
    else if (c != '\r') cur += c;
  }
  fields.push_back(cur);
  return fields;
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

}  // namespace

const std::vector<double>& CsvTable::column(const std::string& name) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return columns[i];
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  throw Error("no column '" + name + "' (columns: " + known + ")");
}

CsvTable read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open " + path);
  CsvTable t;
  std::string line;
  int64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (trim(line).empty()) continue;
    auto fields = split_row(line);
    if (t.names.empty()) {
      for (auto& f : fields) t.names.push_back(trim(f));
      t.columns.resize(t.names.size());
      continue;
    }
    if (fields.size() != t.names.size())
      throw Error(path + ":" + std::to_string(lineno) + ": expected " +
                  std::to_string(t.names.size()) + " fields, found " + std::to_string(fields.size()));
    for (size_t i = 0; i < fields.size(); ++i) {
      std::string f = trim(fields[i]);
      double v = std::numeric_limits<double>::quiet_NaN();
      if (!f.empty() && f != "NA" && f != "NaN" && f != "nan") {
        size_t used = 0;
        try {
          v = std::stod(f, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != f.size())
          throw Error(path + ":" + std::to_string(lineno) + ": column '" + t.names[i] +
                      "' has a non-numeric value '" + f + "'");
      }
      t.columns[i].push_back(v);
    }
  }
  if (t.names.empty()) throw Error(path + ": empty file, expected a header row");
  return t;
}

}  // namespace orrery
