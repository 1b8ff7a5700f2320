#include "orrery/host/combination.h"

#include <algorithm>

#include "orrery/error.h"

namespace orrery {

CombineRule parse_combine_rule(const std::string& name, const std::string& what) {
  if (name == "mean") return CombineRule::mean;
  if (name == "median") return CombineRule::median;
  throw Error(what + " must be mean (average the quantiles) or median (the median forecaster at each level), got " +
              quote_input(name));
}

const char* combine_rule_name(CombineRule rule) { return rule == CombineRule::mean ? "mean" : "median"; }

std::vector<std::vector<double>> combine_quantiles(const std::vector<std::vector<std::vector<double>>>& parts,
                                                   CombineRule rule) {
  if (parts.empty()) throw Error("a combination needs at least one forecast");
  const size_t levels = parts[0].size(), steps = levels ? parts[0][0].size() : 0;
  for (const auto& p : parts) {
    if (p.size() != levels) throw Error("a combination's forecasts have different numbers of levels");
    for (const auto& l : p)
      if (l.size() != steps) throw Error("a combination's forecasts have different horizons");
  }
  std::vector<std::vector<double>> out(levels, std::vector<double>(steps));
  std::vector<double> values(parts.size());
  for (size_t l = 0; l < levels; ++l)
    for (size_t h = 0; h < steps; ++h) {
      for (size_t k = 0; k < parts.size(); ++k) values[k] = parts[k][l][h];
      if (rule == CombineRule::mean) {
        double sum = 0;
        for (double v : values) sum += v;
        out[l][h] = sum / static_cast<double>(values.size());
      } else {
        std::sort(values.begin(), values.end());
        const size_t n = values.size();
        out[l][h] = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
      }
    }
  return out;
}

}  // namespace orrery
