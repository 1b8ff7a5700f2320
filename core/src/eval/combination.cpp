#include "orrery/host/combination.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

bool combination_checkable(const std::vector<double>& history, int64_t horizon) {
  const auto H = static_cast<size_t>(horizon);
  if (horizon < 1 || history.size() < 2 * H) return false;
  const auto finite = [](double v) { return std::isfinite(v); };
  return static_cast<size_t>(std::count_if(history.begin(), history.end() - H, finite)) >= H &&
         std::any_of(history.end() - H, history.end(), finite);
}

void check_origins_count(int64_t origins, const std::string& what) {
  if (origins < 1) throw Error(what + " must be at least 1 (the horizons a check scores), got " + std::to_string(origins));
}

double pinball_loss(const std::vector<std::vector<double>>& quantiles, const std::vector<double>& levels,
                    const std::vector<double>& actual) {
  if (quantiles.size() != levels.size()) throw Error("pinball loss: one row of quantiles a level");
  double sum = 0;
  size_t n = 0;
  for (size_t l = 0; l < levels.size(); ++l) {
    if (quantiles[l].size() != actual.size()) throw Error("pinball loss: the quantiles and the actual values differ in length");
    for (size_t h = 0; h < actual.size(); ++h) {
      if (!std::isfinite(actual[h])) continue;
      const double e = actual[h] - quantiles[l][h];
      sum += std::max(levels[l] * e, (levels[l] - 1) * e), ++n;
    }
  }
  return n ? sum / static_cast<double>(n) : std::numeric_limits<double>::infinity();
}

}  // namespace orrery
