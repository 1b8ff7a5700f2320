#include "orrery/one_hot.h"

#include <algorithm>
#include <limits>

#include "orrery/csv_fields.h"
#include "orrery/error.h"

namespace orrery {

void CategorySet::see(std::string_view cell) {
  if (cell.empty() || seen_.find(cell) != seen_.end()) return;
  if (seen_.size() == kMaxCategories)
    throw Error(what_ + ": more than " + std::to_string(kMaxCategories) +
                " categories, the most a categorical covariate may have (one row each); is it an id?");
  seen_.emplace(cell);
}

std::vector<std::string> CategorySet::sorted() const {
  if (seen_.empty()) throw Error(what_ + ": a categorical covariate with no category (every cell is empty)");
  return {seen_.begin(), seen_.end()};
}

OneHot one_hot(const std::vector<std::string>& cells, const std::string& what) {
  CategorySet set(what);
  for (const auto& cell : cells) set.see(csv_trim(cell));
  OneHot out;
  out.categories = set.sorted();
  out.rows.assign(out.categories.size(), std::vector<double>(cells.size(), 0.0));
  for (size_t t = 0; t < cells.size(); ++t) {
    const std::string_view c = csv_trim(cells[t]);
    if (c.empty()) {
      for (auto& row : out.rows) row[t] = std::numeric_limits<double>::quiet_NaN();
    } else {
      const auto at = std::lower_bound(out.categories.begin(), out.categories.end(), c);
      out.rows[static_cast<size_t>(at - out.categories.begin())][t] = 1.0;
    }
  }
  return out;
}

}  // namespace orrery
