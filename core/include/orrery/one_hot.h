#pragma once
// A categorical covariate (a holiday's name, a weekday, a store's format) as one 0/1 row per
// category. Every reader of covariates (the model's variate rows, the in-context regression)
// takes numbers, so categories enter as those rows and nothing downstream knows they were text.
#include <cstddef>
#include <string>
#include <vector>

namespace orrery {

// At most this many categories per column: beyond, a column is more likely an id than a
// covariate, and each category costs the model a row.
inline constexpr size_t kMaxCategories = 64;

struct OneHot {
  std::vector<std::string> categories;    // sorted (byte order), each once
  std::vector<std::vector<double>> rows;  // rows[k][t]: 1 where cell t is categories[k], else 0; NaN where missing
};

// `cells`, trimmed of spaces and tabs: only an empty cell is missing (NaN in every row); any
// other text, "NA" and "None" included, is a category. Errors name `what` (e.g. "a.csv: column
// "holiday""): a column with no category, or with more than kMaxCategories.
OneHot one_hot(const std::vector<std::string>& cells, const std::string& what);

}  // namespace orrery
