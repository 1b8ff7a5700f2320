#pragma once
// A generator's choice among named parts (synthetic's families, observability's kinds) as an
// option {name = weight}: only the parts named there are drawn. Header-only, so the generator
// plugins need not link the file sources' library.
#include <cmath>
#include <string>
#include <vector>

#include "orrery/error.h"
#include "orrery/json.h"
#include "orrery/options.h"

namespace orrery::data {

struct NamedParts {
  std::string owner;              // "data plugin 'synthetic'"
  std::string option;             // "families"
  std::string part;               // "family"
  std::vector<std::string> names;
  std::vector<double> defaults;   // in `names` order

  std::string listed() const {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  }

  // Weights in `names` order: `option` when it is a table, else the defaults. Unknown names,
  // negative or non-finite weights and an all-zero table are errors naming the option.
  std::vector<double> weights(const Json& value) const {
    if (value.is_null()) return defaults;
    std::vector<double> w(names.size(), 0.0);
    double total = 0;
    for (const auto& [name, weight] : value.items()) {
      size_t i = 0;
      while (i < names.size() && name != names[i]) ++i;
      if (i == names.size()) {
        std::string msg = owner + ": unknown " + part + " '" + name + "' in option '" + option + "'";
        const std::string near = closest_name(name, names);
        if (!near.empty()) msg += " (did you mean '" + near + "'?)";
        throw Error(msg + "; the " + option + " are: " + listed());
      }
      if (!weight.is_number() || !std::isfinite(weight.get<double>()) || weight.get<double>() < 0)
        throw Error(owner + ": the weight of " + part + " '" + name + "' must be a non-negative number, got " +
                    weight.dump());
      total += w[i] = weight.get<double>();
    }
    if (!(total > 0))
      throw Error(owner + ": option '" + option + "' gives no " + part + " a positive weight; the " + option +
                  " are: " + listed());
    return w;
  }
};

}  // namespace orrery::data
