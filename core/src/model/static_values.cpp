#include "orrery/static_values.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "orrery/error.h"
#include "orrery/options.h"

namespace orrery {
namespace {

// The model's names that are categories of column `name`: "name=category".
std::vector<size_t> categories_of(const std::vector<std::string>& model_names, const std::string& name) {
  std::vector<size_t> out;
  for (size_t i = 0; i < model_names.size(); ++i)
    if (model_names[i].size() > name.size() && model_names[i].starts_with(name) && model_names[i][name.size()] == '=')
      out.push_back(i);
  return out;
}

}  // namespace

std::vector<double> static_values(const std::vector<std::string>& model_names, const std::vector<GivenStatic>& given,
                                  const std::string& what) {
  if (model_names.empty())
    throw Error(what + ": this model reads no static covariates (its architecture's option static_covariates)");
  std::vector<std::optional<double>> out(model_names.size());
  std::vector<std::string> by(model_names.size());  // which given name set each
  auto set = [&](size_t i, double x, const std::string& from) {
    if (out[i])
      throw Error(what + ": " + quote_input(model_names[i]) + " is given twice (by " + quote_input(by[i]) + " and by " +
                  quote_input(from) + ")");
    out[i] = x, by[i] = from;
  };
  for (const auto& g : given) {
    const auto own = std::find(model_names.begin(), model_names.end(), g.name);
    const std::vector<size_t> categories = categories_of(model_names, g.name);
    if (own != model_names.end()) {
      if (!g.number)
        throw Error(what + ": " + quote_input(g.name) + " must be a number, not the text " + quote_input(g.category));
      if (!std::isfinite(*g.number)) throw Error(what + ": " + quote_input(g.name) + " must be a finite number");
      if (std::fabs(*g.number) > std::numeric_limits<float>::max())
        throw Error(what + ": " + quote_input(g.name) + " is beyond float32's range (+-3.4e38), where the model reads "
                    "it: rescale it");
      set(static_cast<size_t>(own - model_names.begin()), *g.number, g.name);
    } else if (!categories.empty()) {
      std::vector<std::string> known;
      for (size_t i : categories) known.push_back(model_names[i].substr(g.name.size() + 1));
      if (g.number)
        throw Error(what + ": " + quote_input(g.name) + " is a categorical static covariate (its categories: " +
                    join_names(known) + "): give its category as text");
      const auto at = std::find(known.begin(), known.end(), g.category);
      if (at == known.end())
        throw Error(what + ": " + quote_input(g.name) + " = " + quote_input(g.category) + " is not a category the "
                    "model was trained with (" + join_names(known) + ")");
      for (size_t j = 0; j < categories.size(); ++j) set(categories[j], known[j] == g.category ? 1.0 : 0.0, g.name);
    } else {
      throw Error(what + ": the model reads no static covariate " + quote_input(g.name) + "; it reads " +
                  join_names(model_names));
    }
  }
  std::vector<double> values;
  for (size_t i = 0; i < model_names.size(); ++i) {
    if (!out[i]) {
      const size_t eq = model_names[i].find('=');
      const bool category = eq != std::string::npos && !categories_of(model_names, model_names[i].substr(0, eq)).empty();
      throw Error(what + ": no value for " + quote_input(category ? model_names[i].substr(0, eq) : model_names[i]) +
                  (category ? " (a category)" : "") + " (the model reads " + join_names(model_names) + ")");
    }
    values.push_back(*out[i]);
  }
  return values;
}

}  // namespace orrery
