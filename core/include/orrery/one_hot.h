#pragma once
// A categorical covariate (a holiday's name, a weekday, a store's format) as one 0/1 row per
// category. Every reader of covariates (the model's variate rows, the in-context regression)
// takes numbers, so categories enter as those rows and nothing downstream knows they were text.
#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace orrery {

// At most this many categories per column: beyond, a column is more likely an id than a
// covariate, and each category costs the model a row.
inline constexpr size_t kMaxCategories = 64;

// The distinct categories of one column, gathered cell by cell: a file's first pass streams its
// cells through one (so a file need not fit in memory), one_hot() a column it holds. Errors name
// `what` (e.g. "a.csv: column "holiday"").
class CategorySet {
 public:
  explicit CategorySet(std::string what) : what_(std::move(what)) {}
  // A cell, already trimmed; "" is missing. A category beyond kMaxCategories is an error at once,
  // so a column of ids stops a pass at its 65th distinct value.
  void see(std::string_view cell);
  // Every category once, in byte order; a column without any is an error.
  std::vector<std::string> sorted() const;

 private:
  std::string what_;
  std::set<std::string, std::less<>> seen_;
};

struct OneHot {
  std::vector<std::string> categories;    // sorted (byte order), each once
  std::vector<std::vector<double>> rows;  // rows[k][t]: 1 where cell t is categories[k], else 0; NaN where missing
};

// `cells`, trimmed of spaces and tabs: only an empty cell is missing (NaN in every row); any
// other text, "NA" and "None" included, is a category. Errors as CategorySet's, naming `what`.
OneHot one_hot(const std::vector<std::string>& cells, const std::string& what);

}  // namespace orrery
