#include "orrery/one_hot.h"

#include <algorithm>
#include <limits>
#include <functional>
#include <map>
#include <string_view>

#include "orrery/csv_fields.h"
#include "orrery/error.h"

namespace orrery {

OneHot one_hot(const std::vector<std::string>& cells, const std::string& what) {
  std::map<std::string, size_t, std::less<>> index;  // category -> its row, once all are known
  for (const auto& cell : cells) {
    const std::string_view c = csv_trim(cell);
    if (!c.empty()) index.emplace(std::string(c), 0);
  }
  if (index.empty()) throw Error(what + ": a categorical covariate with no category (every cell is empty)");
  if (index.size() > kMaxCategories)
    throw Error(what + ": " + std::to_string(index.size()) + " categories, more than the " +
                std::to_string(kMaxCategories) + " a categorical covariate may have (one row each); is it an id?");
  OneHot out;
  for (auto& [category, row] : index) row = out.categories.size(), out.categories.push_back(category);
  out.rows.assign(out.categories.size(), std::vector<double>(cells.size(), 0.0));
  for (size_t t = 0; t < cells.size(); ++t) {
    const std::string_view c = csv_trim(cells[t]);
    if (c.empty()) {
      for (auto& row : out.rows) row[t] = std::numeric_limits<double>::quiet_NaN();
    } else {
      out.rows[index.find(c)->second][t] = 1.0;
    }
  }
  return out;
}

}  // namespace orrery
