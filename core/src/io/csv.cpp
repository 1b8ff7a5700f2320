#include "orrery/host/csv.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

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

bool is_missing(const std::string& f) { return f.empty() || f == "NA" || f == "NaN" || f == "nan"; }

}  // namespace

const std::vector<double>& CsvTable::column(const std::string& name) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return columns[i];
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  if (known.size() > 200) known = known.substr(0, 200) + "...";
  throw Error("no column " + quote_input(name) + " (columns: " + known + ")");
}

bool CsvTable::has(const std::string& name) const {
  for (const auto& n : names)
    if (n == name) return true;
  return false;
}

CsvTable read_csv(const std::string& path, const std::vector<std::string>& text_columns) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(path + " is a folder, not a CSV file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path + ": " + std::strerror(errno));
  CsvTable t;
  std::string line;
  int64_t lineno = 0;
  std::vector<bool> is_text;
  auto where = [&] { return path + ":" + std::to_string(lineno) + ": "; };
  while (std::getline(in, line)) {
    ++lineno;
    if (lineno == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);  // a UTF-8 byte-order mark
    if (line.find('\0') != std::string::npos)
      throw Error(where() + "holds binary data (a NUL byte): not a text CSV file");
    if (trim(line).empty()) continue;
    auto fields = split_row(line);
    if (t.names.empty()) {
      for (size_t i = 0; i < fields.size(); ++i) {
        std::string name = trim(fields[i]);
        if (name.empty())
          throw Error(where() + "column " + std::to_string(i + 1) + " of the header has no name" +
                      (i + 1 == fields.size() ? " (a trailing comma?)" : ""));
        for (size_t k = 0; k < t.names.size(); ++k)
          if (t.names[k] == name)
            throw Error(where() + "columns " + std::to_string(k + 1) + " and " + std::to_string(i + 1) +
                        " are both named " + quote_input(name) + "; every column needs its own name");
        t.names.push_back(std::move(name));
      }
      t.columns.resize(t.names.size());
      t.text.resize(t.names.size());
      for (size_t i = 0; i < t.names.size(); ++i)
        is_text.push_back(std::find(text_columns.begin(), text_columns.end(), t.names[i]) != text_columns.end());
      continue;
    }
    if (fields.size() != t.names.size())
      throw Error(where() + "expected " + std::to_string(t.names.size()) + " fields, found " +
                  std::to_string(fields.size()));
    for (size_t i = 0; i < fields.size(); ++i) {
      const std::string f = trim(fields[i]);
      if (is_text[i]) {
        t.text[i].push_back(f);
        continue;
      }
      double v = std::numeric_limits<double>::quiet_NaN();
      if (!is_missing(f)) {
        char* end = nullptr;
        errno = 0;
        v = std::strtod(f.c_str(), &end);
        if (end != f.c_str() + f.size() || std::isnan(v))
          throw Error(where() + "column " + quote_input(t.names[i]) + " has a non-numeric value " + quote_input(f));
        if (errno == ERANGE && std::isinf(v))
          throw Error(where() + "column " + quote_input(t.names[i]) + " has a value beyond the range of a double: " +
                      quote_input(f));
        if (std::isinf(v))
          throw Error(where() + "column " + quote_input(t.names[i]) + " has an infinite value " + quote_input(f));
      }
      t.columns[i].push_back(v);
    }
  }
  if (t.names.empty()) throw Error(path + ": empty file, expected a header row");
  return t;
}

}  // namespace orrery
