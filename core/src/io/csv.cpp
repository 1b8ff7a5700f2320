#include "orrery/host/csv.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "orrery/csv_fields.h"
#include "orrery/csv_tokenizer.h"
#include "orrery/error.h"

namespace orrery {

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

size_t CsvTable::rows() const {
  if (names.empty()) return 0;
  return std::max(columns.front().size(), text.front().size());  // one of them is the first column's
}

CsvTable read_csv(const std::string& path, const std::vector<std::string>& text_columns) {
  CsvTokenizer in(path, size_t{1} << 20);  // the csv data plugin's tokenizer and cell rule
  CsvTable t;
  std::vector<std::string> fields;
  int64_t line = 0;
  if (!in.next(fields, line)) throw Error(path + ": empty file, expected a header row");
  auto where = [&] { return path + ":" + std::to_string(line) + ": "; };
  std::unordered_map<std::string, size_t> column_of;  // a hash: a million columns in linear time
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string name(csv_trim(fields[i]));
    if (name.empty())
      throw Error(where() + "column " + std::to_string(i + 1) + " of the header has no name" +
                  (i + 1 == fields.size() ? " (a trailing comma?)" : ""));
    if (const auto [at, fresh] = column_of.emplace(name, i); !fresh)
      throw Error(where() + "columns " + std::to_string(at->second + 1) + " and " + std::to_string(i + 1) +
                  " are both named " + quote_input(name) + "; every column needs its own name");
    t.names.push_back(std::move(name));
  }
  t.columns.resize(t.names.size());
  t.text.resize(t.names.size());
  std::vector<bool> is_text;
  for (const auto& n : t.names)
    is_text.push_back(std::find(text_columns.begin(), text_columns.end(), n) != text_columns.end());
  while (in.next(fields, line)) {
    if (fields.size() != t.names.size())
      throw Error(where() + "expected " + std::to_string(t.names.size()) + " fields, found " +
                  std::to_string(fields.size()));
    for (size_t i = 0; i < fields.size(); ++i) {
      const std::string_view f = csv_trim(fields[i]);
      if (is_text[i]) {
        t.text[i].emplace_back(f);
        continue;
      }
      const CsvNumber v = read_csv_number(f);
      if (const std::string problem = csv_number_problem(v, f); !problem.empty())
        throw Error(where() + "column " + quote_input(t.names[i]) + ": " + problem);
      t.columns[i].push_back(v.value);
    }
  }
  return t;
}

}  // namespace orrery
