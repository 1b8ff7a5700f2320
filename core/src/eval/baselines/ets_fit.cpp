// AutoETS as statsforecast 2.1 does it: the candidates, their starting values, the box the
// optimiser searches, the likelihood and the AICc. Where statsforecast has a habit that moves
// the result, we keep it and say so, so that the same series selects the same model:
//   - the search is Nelder-Mead over smoothing parameters and initial states together, 1000
//     iterations at most (nelder_mead.h); seasonal fits usually stop there, unconverged;
//   - only the box constrains it (alpha, beta, gamma in [1e-4, 0.9999], phi in [0.8, 0.98], the
//     narrowing below) and multiplicative seasonal states must stay >= 0; unlike R's ets there
//     is no admissibility test during the search;
//   - sigma2 = sum e^2 / (n - k - 1) with k the parameter count including sigma (R divides by
//     n - k, one degree of freedom more).
#include <algorithm>
#include <cmath>
#include <limits>

#include "decompose.h"
#include "ets_model.h"
#include "least_squares.h"
#include "orrery/error.h"
#include "nelder_mead.h"

namespace orrery::baselines {
namespace {

constexpr double kLower = 1e-4, kUpper = 0.9999, kPhiLower = 0.8, kPhiUpper = 0.98;

// Least squares on the first `rows` rows (columns here: 1, t and at most a sine and a cosine).
std::vector<double> least_squares(const std::vector<std::vector<double>>& columns,
                                  const std::vector<double>& y, size_t rows) {
  std::vector<std::vector<double>> head;
  for (const auto& c : columns) head.emplace_back(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(rows));
  std::vector<double> c =
      baselines::least_squares(std::vector<double>(y.begin(), y.begin() + static_cast<std::ptrdiff_t>(rows)), head);
  if (c.empty()) throw Error("ets: the initial states' regression has collinear columns over " + std::to_string(rows) + " steps");
  return c;
}

// Initial states as statsforecast (after R's forecast::ets) sets them, in its layout:
// level, slope if any, then m - 1 seasonal states from the oldest-but-one phase backwards
// (the m-th is implied: the seasonal states sum to m, or 0 when additive).
std::vector<double> initial_states(const std::vector<double>& y, int64_t m, const EtsForm& form) {
  const size_t n = y.size();
  std::vector<double> out(1 + (form.trend != Component::none ? 1 : 0), 0.0);
  std::vector<double> adjusted = y;
  const bool mult = form.season == Component::multiplicative;
  if (form.season != Component::none) {
    std::vector<double> seasonal;
    if (static_cast<int64_t>(n) < 3 * m) {
      // Too short to decompose: one Fourier pair and a line, the seasonal part what is left.
      std::vector<std::vector<double>> cols(3, std::vector<double>(n));
      for (size_t t = 0; t < n; ++t) {
        const double tt = static_cast<double>(t + 1);
        cols[0][t] = 1, cols[1][t] = tt, cols[2][t] = std::cos(2 * M_PI * tt / static_cast<double>(m));
      }
      if (m != 2) {  // sin(pi t) = 0 for m = 2
        cols.emplace_back(n);
        for (size_t t = 0; t < n; ++t) cols[3][t] = std::sin(2 * M_PI * static_cast<double>(t + 1) / static_cast<double>(m));
      }
      const std::vector<double> c = least_squares(cols, y, n);
      seasonal.resize(n);
      for (size_t t = 0; t < n; ++t) {
        const double line = c[0] + c[1] * static_cast<double>(t + 1);
        seasonal[t] = mult ? y[t] / line : y[t] - line;
      }
    } else {
      seasonal = seasonal_component(y, m, mult);
    }
    std::vector<double> init(seasonal.begin() + 1, seasonal.begin() + m);
    std::reverse(init.begin(), init.end());
    if (mult) {
      double sum = 0;
      for (double& s : init) sum += (s = std::max(s, 1e-2));
      if (sum > static_cast<double>(m)) {
        double total = 0;
        for (double s : init) total += s + 1e-2;
        for (double& s : init) s /= total;
      }
      for (size_t t = 0; t < n; ++t) adjusted[t] = y[t] / std::max(seasonal[t], 1e-2);
    } else {
      for (size_t t = 0; t < n; ++t) adjusted[t] = y[t] - seasonal[t];
    }
    out.insert(out.end(), init.begin(), init.end());
  } else {
    m = 1;
  }
  const size_t first = std::min<size_t>(std::max<int64_t>(10, 2 * m), n);
  if (form.trend == Component::none) {
    double s = 0;
    for (size_t t = 0; t < first; ++t) s += adjusted[t];
    out[0] = s / static_cast<double>(first);
  } else {  // a line through the first seasonally adjusted values
    std::vector<std::vector<double>> cols(2, std::vector<double>(first, 1.0));
    for (size_t t = 0; t < first; ++t) cols[1][t] = static_cast<double>(t + 1);
    const std::vector<double> c = least_squares(cols, adjusted, first);
    out[0] = c[0], out[1] = c[1];
    if (std::fabs(out[0] + out[1]) < 1e-8) out[0] *= 1 + 1e-3, out[1] *= 1 - 1e-3;
  }
  return out;
}

// The full seasonal ring from the m - 1 free states (statsforecast's layout: newest first) and
// the implied m-th; EtsState wants them by when they are next used, the implied one first.
EtsState unpack(const double* states, const EtsForm& form, int64_t m) {
  EtsState x;
  x.level = states[0];
  const int off = form.trend != Component::none ? 2 : 1;
  if (off == 2) x.slope = states[1];
  if (form.season != Component::none) {
    double sum = 0;
    for (int64_t j = 0; j < m - 1; ++j) sum += states[off + j];
    x.season.resize(m);
    x.season[0] = (form.season == Component::multiplicative ? static_cast<double>(m) : 0.0) - sum;
    for (int64_t j = 1; j < m; ++j) x.season[j] = states[off + m - 1 - j];
  }
  return x;
}

struct Candidate {
  EtsFit fit;
  bool ok = false;
};

// One form fitted by maximum likelihood. `beta_upper` and `gamma_upper` persist across the
// candidates of one series: statsforecast narrows its shared upper-bound array in place when it
// picks starting values (beta <= the starting alpha, gamma <= 1 - the starting alpha), so every
// later candidate is searched in the narrowed box. We narrow ours the same way and in the same
// order, which is what makes the same forms win on the same series.
Candidate fit_form(const std::vector<double>& y, int64_t m, const EtsForm& form,
                   double& beta_upper, double& gamma_upper) {
  const bool trend = form.trend != Component::none, season = form.season != Component::none;
  const int64_t mm = season ? m : 1;
  const double alpha = kLower + 0.2 * (kUpper - kLower) / static_cast<double>(mm);
  std::vector<double> x0 = {alpha}, lower = {kLower}, upper = {kUpper};
  if (trend) {
    beta_upper = std::min(beta_upper, alpha);
    double beta = kLower + 0.1 * (beta_upper - kLower);
    if (beta < 0 || beta > alpha) beta = alpha - 1e-3;
    x0.push_back(beta), lower.push_back(kLower), upper.push_back(beta_upper);
  }
  if (season) {
    gamma_upper = std::min(gamma_upper, 1 - alpha);
    double gamma = kLower + 0.05 * (gamma_upper - kLower);
    if (gamma < 0 || gamma > 1 - alpha) gamma = 1 - alpha - 1e-3;
    x0.push_back(gamma), lower.push_back(kLower), upper.push_back(gamma_upper);
  }
  if (form.damped)
    x0.push_back(kPhiLower + 0.99 * (kPhiUpper - kPhiLower)), lower.push_back(kPhiLower), upper.push_back(kPhiUpper);
  const size_t n_smooth = x0.size();
  const std::vector<double> init = initial_states(y, mm, form);
  x0.insert(x0.end(), init.begin(), init.end());
  const double inf = std::numeric_limits<double>::infinity();
  lower.resize(x0.size(), -inf), upper.resize(x0.size(), inf);
  const size_t k = x0.size();
  if (k + 1 >= y.size()) return {};  // more parameters than the data can carry

  auto params_of = [&](const std::vector<double>& v) {
    EtsParams p;
    size_t j = 0;
    p.alpha = v[j++];
    if (trend) p.beta = v[j++];
    if (season) p.gamma = v[j++];
    if (form.damped) p.phi = v[j++];
    return p;
  };
  auto objective = [&](const std::vector<double>& v) {
    const EtsState x = unpack(v.data() + n_smooth, form, mm);
    if (form.season == Component::multiplicative)
      for (double s : x.season)
        if (s < 0) return inf;
    return std::max(ets_run(y, form, params_of(v), x).neg2loglik, -1e10);
  };
  const Minimum best = nelder_mead(objective, x0, lower, upper, 1e-4, 1000);

  Candidate c;
  c.fit.form = form;
  c.fit.params = params_of(best.x);
  const EtsRun run = ets_run(y, form, c.fit.params, unpack(best.x.data() + n_smooth, form, mm));
  c.fit.last = run.last;
  const double n = static_cast<double>(y.size()), np = static_cast<double>(k + 1);  // + sigma
  c.fit.aicc = n - np - 1 != 0 ? run.neg2loglik + 2 * np + 2 * np * (np + 1) / (n - np - 1) : inf;
  c.fit.sigma2 = run.sse / (n - np - 1);
  c.ok = !std::isnan(c.fit.aicc);
  return c;
}

}  // namespace

std::optional<EtsFit> fit_ets(const std::vector<double>& y, int64_t m, const EtsForm& form) {
  double beta_upper = kUpper, gamma_upper = kUpper;  // a fit of its own: the box unnarrowed
  const Candidate c = fit_form(y, m, form, beta_upper, gamma_upper);
  return c.ok ? std::optional<EtsFit>(c.fit) : std::nullopt;
}

std::optional<EtsFit> auto_ets(const std::vector<double>& y, int64_t m, const Interrupt* interrupt) {
  const size_t n = y.size();
  if (n <= 6) return std::nullopt;  // statsforecast: "tiny datasets" are not fitted
  const bool seasonal = m > 1 && static_cast<int64_t>(n) > m;
  const bool positive = *std::min_element(y.begin(), y.end()) > 0;
  double beta_upper = kUpper, gamma_upper = kUpper;
  std::optional<EtsFit> best;
  // statsforecast's order and restrictions: no additive error with a multiplicative season,
  // multiplicative parts only for positive data, no multiplicative trend.
  for (Component error : {Component::additive, Component::multiplicative})
    for (Component trend : {Component::none, Component::additive})
      for (Component season : {Component::none, Component::additive, Component::multiplicative})
        for (bool damped : {true, false}) {
          if (trend == Component::none && damped) continue;
          if (error == Component::additive && season == Component::multiplicative) continue;
          if (!positive && (error == Component::multiplicative || season == Component::multiplicative)) continue;
          if (season != Component::none && !seasonal) continue;
          check_interrupt(interrupt);
          const Candidate c = fit_form(y, m, {error, trend, season, damped}, beta_upper, gamma_upper);
          if (c.ok && c.fit.aicc < (best ? best->aicc : std::numeric_limits<double>::infinity()))
            best = c.fit;
        }
  return best;
}

}  // namespace orrery::baselines
