#pragma once
// Forecast combinations: a model's quantile forecast pooled with classical forecasters fitted on
// the same window (the M-competitions' lesson that a combination beats its parts on low-frequency
// data). One rule for every front end: `orrery eval --combine`, `orrery forecast --combine` and
// orrery.eval{combine = ...}.
#include <string>
#include <vector>

namespace orrery {

enum class CombineRule {
  mean,    // each level and step: the average of the forecasters' quantiles (Vincentization)
  median,  // each level and step: the median of the forecasters' quantiles
};

// "mean" or "median"; anything else is an error naming `what` (a flag or an option).
CombineRule parse_combine_rule(const std::string& name, const std::string& what);
const char* combine_rule_name(CombineRule rule);

// parts[forecaster][level][step], all of one shape (else an error): the pooled [level][step].
// Levels stay ordered: a mean or a median of ordered quantiles is ordered.
std::vector<std::vector<double>> combine_quantiles(const std::vector<std::vector<std::vector<double>>>& parts,
                                                   CombineRule rule);

}  // namespace orrery
