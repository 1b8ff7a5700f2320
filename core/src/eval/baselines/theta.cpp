// The "theta" baseline: statsforecast's AutoTheta (Fiorucci, Pellegrini, Louzada, Petropoulos
// and Koehler 2016, "Models for optimising the theta method and their relationship to state
// space models").
//   1. Seasonal test (decompose.h); if seasonal, divide out a classical multiplicative
//      decomposition (additive when the data are not all positive or a factor falls below 0.01).
//   2. Fit the standard (theta = 2) and optimised theta models, static and dynamic (STM, OTM,
//      DSTM, DOTM), by minimising the in-sample squared one-step errors from the fourth step on
//      (Nelder-Mead from statsforecast's start: level y_1 / 2, alpha 0.5, theta 2, within
//      alpha in [0.1, 0.99], theta >= 1); keep the lowest.
//   3. Forecast and put the season back: the last m seasonal factors repeat.
// statsforecast's intervals are quantiles of 200 simulated paths of the dynamic recursion below
// (its sampler refits the line at every step even for the static models) with normal errors (sigma: the standard deviation of the residuals from the fourth on, taken
// after they are multiplied back by the seasonal factors). Every quantity in that recursion is
// linear in the simulated errors, so its paths are exactly normal: we take the limit of many
// paths, mean plus z times the exact standard deviation, instead of 200 random ones (whose
// quantiles scatter by about 0.12 standard deviations), centred on the point forecast (the
// simulated mean differs from it by far less than that scatter).
#include <algorithm>
#include <cmath>
#include <limits>

#include "common.h"
#include "decompose.h"
#include "nelder_mead.h"

namespace orrery::baselines {
namespace {

enum class Kind { stm, otm, dstm, dotm };

struct State {
  double level, mean_y, a, b, mu;  // smoothed level, running mean, line intercept and slope, forecast
};

struct Model {
  Kind kind;
  double level0, alpha, theta;
  bool dynamic() const { return kind == Kind::dstm || kind == Kind::dotm; }
};

// One step at time index i (the state is before observing y_i): mu is the forecast of y_i; the
// line (a, b) is refitted on the way in the dynamic models and fixed in the static ones.
State step(const State& s, size_t i, const Model& md, double y, bool use_forecast) {
  const double di = static_cast<double>(i), decay = 1 - md.alpha;
  State r = s;
  r.mu = s.level + (1 - 1 / md.theta) *
                       (s.a * std::pow(decay, di) + s.b * (1 - std::pow(decay, di + 1)) / md.alpha);
  if (use_forecast) y = r.mu;
  r.level = md.alpha * y + decay * s.level;
  r.mean_y = (di * s.mean_y + y) / (di + 1);
  if (md.dynamic()) {
    r.b = ((di - 1) * s.b + 6 * (y - s.mean_y) / (di + 1)) / (di + 2);
    r.a = r.mean_y - r.b * (di + 2) / 2;
  }
  return r;
}

State initial(const std::vector<double>& y, const Model& md) {
  const double n = static_cast<double>(y.size());
  State s{md.alpha * y[0] + (1 - md.alpha) * md.level0, y[0], y[0], 0.0, y[0]};
  if (!md.dynamic()) {  // least-squares line through the whole series
    double mean = 0, weighted = 0;
    for (size_t t = 0; t < y.size(); ++t) mean += y[t], weighted += static_cast<double>(t + 1) * y[t];
    mean /= n, weighted /= n;
    s.b = 6 * (2 * weighted - (n + 1) * mean) / (n * n - 1);
    s.a = mean - (n + 1) * s.b / 2;
    s.mu = md.level0 + (1 - 1 / md.theta) * (s.a + s.b);
  }
  return s;
}

struct Run {
  double objective;            // sum_{t>=3} e_t^2 / mean |y|
  std::vector<double> errors;  // one-step errors e_t
  State last;                  // after the last observation
};

Run run(const std::vector<double>& y, const Model& md) {
  Run r{0, std::vector<double>(y.size()), initial(y, md)};
  r.errors[0] = y[0] - r.last.mu;
  for (size_t i = 1; i < y.size(); ++i) {
    r.errors[i] = y[i] - step(r.last, i, md, 0, true).mu;
    r.last = step(r.last, i, md, y[i], false);
  }
  double abs_mean = 0;
  for (double v : y) abs_mean += std::fabs(v);
  abs_mean = std::max(abs_mean / static_cast<double>(y.size()), 1e-10);
  for (size_t i = 3; i < y.size(); ++i) r.objective += r.errors[i] * r.errors[i];
  r.objective /= abs_mean;
  return r;
}

Model fit(const std::vector<double>& y, Kind kind) {
  const bool optimise_theta = kind == Kind::otm || kind == Kind::dotm;
  std::vector<double> x0 = {y[0] / 2, 0.5}, lower = {-1e10, 0.1}, upper = {1e10, 0.99};
  if (optimise_theta) x0.push_back(2.0), lower.push_back(1.0), upper.push_back(1e10);
  auto model_of = [&](const std::vector<double>& v) {
    return Model{kind, v[0], v[1], optimise_theta ? v[2] : 2.0};
  };
  auto objective = [&](const std::vector<double>& v) { return std::max(run(y, model_of(v)).objective, -1e10); };
  return model_of(nelder_mead(objective, x0, lower, upper, 1e-4, 1000).x);
}

// Standard deviations of statsforecast's simulated paths at steps 1..horizon: the recursion
// of its sampler (the dynamic line update, whatever the model) with each state carried as its
// coefficients on the simulated errors e_1..e_h (its constant parts do not move the spread).
std::vector<double> path_sd(size_t n, const Model& md, double sigma, size_t horizon) {
  using Lin = std::vector<double>;  // coefficients on e_1..e_h
  Lin level(horizon, 0.0), mean_y(horizon, 0.0), a(horizon, 0.0), b(horizon, 0.0), sample(horizon);
  std::vector<double> sd(horizon);
  const double c = 1 - 1 / md.theta, decay = 1 - md.alpha;
  for (size_t j = 0; j < horizon; ++j) {
    const double i = static_cast<double>(n + j);
    const double wa = c * std::pow(decay, i), wb = c * (1 - std::pow(decay, i + 1)) / md.alpha;
    double var = 0;
    for (size_t k = 0; k < horizon; ++k) {
      sample[k] = level[k] + wa * a[k] + wb * b[k] + (k == j ? 1.0 : 0.0);
      var += sample[k] * sample[k];
    }
    sd[j] = sigma * std::sqrt(var);
    for (size_t k = 0; k < horizon; ++k) {
      level[k] = md.alpha * sample[k] + decay * level[k];
      mean_y[k] = (i * mean_y[k] + sample[k]) / (i + 1);
      b[k] = ((i - 1) * b[k] + 6 * (sample[k] - mean_y[k]) / (i + 1)) / (i + 2);
      a[k] = mean_y[k] - b[k] * (i + 2) / 2;
    }
  }
  return sd;
}

double sample_sd(const std::vector<double>& v) {
  return std::sqrt(squared_deviations(v) / static_cast<double>(v.size() - 1));
}

class Theta : public Baseline {
 public:
  std::string name() const override { return "theta"; }
  std::vector<std::vector<double>> forecast(const std::vector<double>& history, int64_t season,
                                            int64_t horizon,
                                            const std::vector<double>& levels) const override {
    check_request("theta", horizon, levels);
    const std::vector<double> filled = fill_missing(history, "theta");
    std::vector<double> y = filled;
    if (is_constant(y))
      return normal_quantiles(std::vector<double>(horizon, y.front()), std::vector<double>(horizon, 0.0), levels);
    const size_t n = y.size();
    // statsforecast does not fit three points or fewer; GIFT-Eval then uses SeasonalNaive.
    if (n <= 3) return make_seasonal_naive()->forecast(y, season, horizon, levels);
    const int64_t m = usable_season(season, n);

    std::vector<double> seasonal;  // empty: no decomposition
    bool multiplicative = true;
    if (seasonality_test(y, m)) {
      multiplicative = *std::min_element(y.begin(), y.end()) > 0;
      seasonal = seasonal_component(y, m, multiplicative);
      if (multiplicative && *std::min_element(seasonal.begin(), seasonal.end()) < 0.01)
        multiplicative = false, seasonal = seasonal_component(y, m, false);
      for (size_t t = 0; t < n; ++t) y[t] = multiplicative ? y[t] / seasonal[t] : y[t] - seasonal[t];
    }

    Model best{};
    Run best_run{std::numeric_limits<double>::infinity(), {}, {}};
    for (Kind kind : {Kind::stm, Kind::otm, Kind::dstm, Kind::dotm}) {
      const Model md = fit(y, kind);
      Run r = run(y, md);
      if (r.objective < best_run.objective) best = md, best_run = std::move(r);
    }
    if (!std::isfinite(best_run.objective))  // nothing fitted (overflowing data)
      return make_seasonal_naive()->forecast(filled, season, horizon, levels);

    // Residuals on the data's scale. (statsforecast also adds the seasonal component to them in
    // the additive case, which inflates sigma by the season's spread; we leave them as they are.)
    std::vector<double> resid(best_run.errors.begin() + (n >= 5 ? 3 : 0), best_run.errors.end());
    if (!seasonal.empty() && multiplicative)
      for (size_t t = 0; t < resid.size(); ++t) resid[t] *= seasonal[t + (n >= 5 ? 3 : 0)];
    const double sigma = sample_sd(resid);

    std::vector<double> point(horizon);
    State s = best_run.last;
    for (int64_t h = 0; h < horizon; ++h) {
      s = step(s, n + static_cast<size_t>(h), best, 0, true);
      point[h] = s.mu;
    }
    std::vector<double> sd = path_sd(n, best, sigma, static_cast<size_t>(horizon));
    auto q = normal_quantiles(point, sd, levels);
    if (!seasonal.empty())
      for (int64_t h = 0; h < horizon; ++h) {
        const double f = seasonal[n - m + static_cast<size_t>(h % m)];
        for (auto& row : q) row[h] = multiplicative ? row[h] * f : row[h] + f;
      }
    return q;
  }
};

}  // namespace

std::unique_ptr<Baseline> make_theta() { return std::make_unique<Theta>(); }

}  // namespace orrery::baselines
