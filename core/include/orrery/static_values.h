#pragma once
// A series' static covariates as a researcher gives them to a forecast (a store's size = 400, its
// format = "mall"), put as the model reads them: one number per name it was built with, in its
// order. A categorical static covariate is one 0/1 name per category it was trained with,
// "format=mall", "format=street" (as the csv and parquet sources make them), so the category
// given for "format" becomes 1 for its own name and 0 for the others. Naming a category's 0/1
// value directly ("format=mall" = 1) works too.
#include <optional>
#include <string>
#include <vector>

namespace orrery {

struct GivenStatic {
  std::string name;
  std::optional<double> number;  // a number's value; unset for a category
  std::string category;          // a category's text
};

// Errors say `what` (e.g. "model:forecast: static_covariates") and name what is wrong: a name the
// model does not read, a category it was not trained with, a number where it reads a category or
// the other way round, a value given twice or missing, one beyond float32's range.
std::vector<double> static_values(const std::vector<std::string>& model_names, const std::vector<GivenStatic>& given,
                                  const std::string& what);

}  // namespace orrery
