#pragma once
// Forecast combinations: a model's quantile forecast pooled with classical forecasters fitted on
// the same window (the M-competitions' lesson that a combination beats its parts on low-frequency
// data). One rule for every front end: `orrery eval --combine`, `orrery forecast --combine` and
// orrery.eval{combine = ...}.
#include <cstdint>
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

// A combination checked per series (`combine_check`), as Box-Cox is: the series' last `horizon`
// steps are held out, the model alone and the combination forecast them from the steps before,
// and the combination is kept only where its pinball loss there is the lower (summed over the
// last `check_origins` horizons, each held out in turn, where there are several). Where the model
// reads a series better than the classical forecasters, pooling with them costs it; the check
// keeps the model's forecast there.
//
// Whether a history can be checked so: `horizon` finite values before its last `horizon` steps,
// and one among those. One that cannot keeps the model's forecast alone.
bool combination_checkable(const std::vector<double>& history, int64_t horizon);
// The horizons a check scores (ForecastOptions::check_origins, for this check and Box-Cox's): at
// least 1, else an error that starts with `what`.
void check_origins_count(int64_t origins, const std::string& what);
// The mean pinball loss of quantiles[level][step] against actual[step] over the levels and the
// finite actual values; +inf where there are none.
double pinball_loss(const std::vector<std::vector<double>>& quantiles, const std::vector<double>& levels,
                    const std::vector<double>& actual);

}  // namespace orrery
