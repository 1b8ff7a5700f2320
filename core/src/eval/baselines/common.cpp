#include "common.h"

#include <cmath>
#include <string>

#include "orrery/error.h"
#include "orrery/host/scoring.h"

namespace orrery::baselines {

std::vector<double> fill_missing(const std::vector<double>& history, const char* who) {
  std::vector<double> y;
  y.reserve(history.size());
  // As GluonTS's LastValueImputation, which GIFT-Eval's baselines run first: a missing value
  // takes the last observed one; leading missing values take the first observed one.
  size_t leading = 0;
  for (double v : history) {
    if (std::isfinite(v)) {
      if (y.empty()) y.assign(leading, v);
      y.push_back(v);
    } else if (!y.empty()) {
      y.push_back(y.back());
    } else {
      ++leading;
    }
  }
  if (y.empty())
    throw Error(std::string(who) + " needs at least one observed value in the history (got " +
                std::to_string(history.size()) + " values, none finite)");
  return y;
}

int64_t usable_season(int64_t season, size_t length) {
  return season < 1 || season > static_cast<int64_t>(length) ? 1 : season;
}

double squared_deviations(const std::vector<double>& v) {
  double mean = 0, ss = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) ss += (x - mean) * (x - mean);
  return ss;
}

bool is_constant(const std::vector<double>& y) {
  for (double v : y)
    if (v != y.front()) return false;
  return true;
}

void check_request(const char* who, int64_t horizon, const std::vector<double>& levels) {
  if (horizon < 0)
    throw Error(std::string(who) + ": the horizon must not be negative, got " + std::to_string(horizon));
  for (double q : levels)
    if (!(q > 0 && q < 1))
      throw Error(std::string(who) + ": quantile levels must lie strictly between 0 and 1, got " +
                  std::to_string(q));
}

std::vector<std::vector<double>> normal_quantiles(const std::vector<double>& point,
                                                  const std::vector<double>& sigma,
                                                  const std::vector<double>& levels) {
  std::vector<std::vector<double>> q(levels.size(), std::vector<double>(point.size()));
  for (size_t i = 0; i < levels.size(); ++i) {
    const double z = normal_quantile(levels[i]);
    for (size_t h = 0; h < point.size(); ++h) q[i][h] = point[h] + z * sigma[h];
  }
  return q;
}

}  // namespace orrery::baselines
