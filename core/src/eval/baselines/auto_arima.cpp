// The automatic ARIMA order (Hyndman and Khandakar 2008, as statsforecast's AutoARIMA runs it
// with its defaults); see arima_model.h. Where statsforecast differs from R's auto.arima this
// follows statsforecast.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "arima_model.h"
#include "common.h"
#include "least_squares.h"
#include "stl.h"

namespace orrery::baselines {
namespace {

std::vector<double> lag_difference(const std::vector<double>& v, size_t lag) {
  std::vector<double> out;
  for (size_t t = lag; t < v.size(); ++t) out.push_back(v[t] - v[t - lag]);
  return out;
}

double variance(const std::vector<double>& v) {
  return squared_deviations(v) / static_cast<double>(v.size() - 1);
}

// KPSS (level) at 5%: sum of the squared partial sums of the deviations over n^2 times a
// Bartlett long-run variance with floor(3 sqrt(n) / 13) lags, against its 5% point 0.463.
bool kpss_rejects(const std::vector<double>& x) {
  const size_t n = x.size();
  if (n < 2) return false;
  double mean = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(n);
  double partial = 0, eta = 0, s = 0;
  for (double v : x) partial += v - mean, eta += partial * partial, s += (v - mean) * (v - mean);
  const size_t lags = std::min(n - 1, static_cast<size_t>(std::floor(3 * std::sqrt(static_cast<double>(n)) / 13)));
  for (size_t i = 1; i <= lags; ++i) {
    double c = 0;
    for (size_t t = i; t < n; ++t) c += (x[t] - mean) * (x[t - i] - mean);
    s += 2 * (1 - static_cast<double>(i) / static_cast<double>(lags + 1)) * c;
  }
  if (!(s > 0)) return false;
  return eta / (static_cast<double>(n) * static_cast<double>(n)) / (s / static_cast<double>(n)) > 0.463;
}

// How many first differences make x level-stationary by KPSS (at most 2).
int ndiffs(std::vector<double> x) {
  x.erase(std::remove_if(x.begin(), x.end(), [](double v) { return std::isnan(v); }), x.end());
  int d = 0;
  if (x.empty() || is_constant(x)) return 0;
  while (d < 2 && kpss_rejects(x)) {
    ++d;
    x = lag_difference(x, 1);
    if (!x.empty()) x.erase(x.begin());  // statsforecast's ndiffs drops one more step a difference
    if (x.empty() || is_constant(x)) return d;
  }
  return d;
}

// Whether to take one seasonal difference: seasonal strength 1 - var(remainder) / var(remainder +
// seasonal) of an STL decomposition above 0.64 (Wang, Smith and Hyndman 2006). statsforecast's
// STL refuses gaps, and its test then says no.
int nsdiffs(const std::vector<double>& x, int64_t m) {
  if (is_constant(x) || m >= static_cast<int64_t>(x.size())) return 0;
  for (double v : x)
    if (!std::isfinite(v)) return 0;
  const StlParts parts = stl(x, m);
  std::vector<double> rem_season(x.size());
  for (size_t t = 0; t < x.size(); ++t) rem_season[t] = parts.remainder[t] + parts.seasonal[t];
  if (!(variance(rem_season) > 0)) return 0;
  return 1 - variance(parts.remainder) / variance(rem_season) > 0.64 ? 1 : 0;
}

struct Candidate {
  int p, q, P, Q;
  bool constant;
  bool operator==(const Candidate&) const = default;
};

ArimaFit search(const std::vector<double>& y_in, const Regressors& x_in, int64_t m, std::vector<size_t>& kept,
                const Interrupt* interrupt) {
  // Leading gaps carry nothing; the regressors lose the same steps.
  size_t first = 0;
  while (first < y_in.size() && std::isnan(y_in[first])) ++first;
  const std::vector<double> y(y_in.begin() + static_cast<std::ptrdiff_t>(first), y_in.end());
  Regressors x;
  for (size_t j = 0; j < x_in.size(); ++j) {
    std::vector<double> col(x_in[j].begin() + static_cast<std::ptrdiff_t>(first),
                            x_in[j].begin() + static_cast<std::ptrdiff_t>(y_in.size()));
    if (!is_constant(col)) x.push_back(std::move(col)), kept.push_back(j);  // a constant column is the intercept's
  }
  const int64_t length = static_cast<int64_t>(std::count_if(y.begin(), y.end(), [](double v) { return !std::isnan(v); }));
  m = std::max<int64_t>(1, m);
  if (length == 0) return {};
  if (is_constant(y)) return fit_arima(y, {}, ArimaOrder{0, 0, 0, 0, 0, 0, m}, true, ArimaMethod::css_ml);
  int max_p = std::min<int64_t>(5, length / 3), max_q = max_p;
  int max_P = static_cast<int>(std::min<int64_t>(2, length / 3 / m)), max_Q = max_P;
  // What the differences are tested on: the target less its regression on the covariates.
  std::vector<double> xx = y;
  if (!x.empty()) {  // ordinary least squares with an intercept, then the residuals
    Regressors with_one = x;
    with_one.insert(with_one.begin(), std::vector<double>(y.size(), 1.0));
    const std::vector<double> beta = least_squares(y, with_one);
    if (beta.empty()) return {};  // the covariates are collinear
    for (size_t t = 0; t < y.size(); ++t) {
      double v = 0;
      for (size_t j = 0; j < with_one.size(); ++j) v += beta[j] * with_one[j][t];
      if (std::isfinite(xx[t])) xx[t] -= v;
    }
  }
  ArimaOrder o;
  o.m = m;
  if (m == 1) max_P = max_Q = 0;
  else if (static_cast<int64_t>(xx.size()) > 2 * m) o.D = nsdiffs(xx, m);
  // Seasonal AR and MA terms put m P + p states in the filter, and the stationary covariance
  // costs their cube at every likelihood evaluation: past m = 24 (10-minute, 5-minute data) only
  // the seasonal difference is considered. statsforecast has no such limit.
  if (m > 24) max_P = max_Q = 0;
  std::vector<double> dx = o.D ? lag_difference(xx, static_cast<size_t>(m)) : xx;
  o.d = ndiffs(dx);
  if (o.d > 0 && !x.empty()) {  // a covariate its differences make constant (a trend) cannot be estimated
    for (const auto& c : x) {
      std::vector<double> dc = o.D ? lag_difference(c, static_cast<size_t>(m)) : c;
      for (int i = 0; i < o.d; ++i) dc = lag_difference(dc, 1);
      if (is_constant(dc)) {
        --o.d;
        break;
      }
    }
  }
  for (int i = 0; i < o.d; ++i) dx = lag_difference(dx, 1);
  if (dx.empty()) return {};
  if (is_constant(dx)) return fit_arima(y, x, o, o.d + o.D <= 1, ArimaMethod::css_ml);
  if (m > 1) max_p = std::min<int>(max_p, static_cast<int>(m - 1)), max_q = std::min<int>(max_q, static_cast<int>(m - 1));
  const bool approximate = y.size() > 150 || m > 12;
  double offset = 0;
  if (approximate) {
    const ArimaFit base = fit_arima(y, x, o, true, ArimaMethod::css);
    if (base.variance > 0 && base.nobs > 0) {
      const double nu = static_cast<double>(base.nobs);
      offset = (nu - static_cast<double>(length)) * std::log(base.variance) + nu * (1 + std::log(2 * std::numbers::pi));
    }
  }
  const bool may_drift = o.d + o.D == 1, may_mean = o.d + o.D == 0;
  bool constant = may_drift || may_mean;
  const auto score = [&](const ArimaFit& f) {
    if (!f.usable) return std::numeric_limits<double>::infinity();
    return length <= 3 ? f.aic : f.aicc;
  };
  struct Tried {
    Candidate c;
    double ic;
  };
  std::vector<Tried> tried;
  ArimaFit best;
  double best_ic = std::numeric_limits<double>::infinity();
  const auto attempt = [&](Candidate c) {
    if (tried.size() >= 94) return false;
    for (const auto& t : tried)
      if (t.c == c) return false;
    check_interrupt(interrupt);
    ArimaOrder oo = o;
    oo.p = c.p, oo.q = c.q, oo.P = c.P, oo.Q = c.Q;
    ArimaFit f = fit_arima(y, x, oo, c.constant, approximate ? ArimaMethod::css : ArimaMethod::css_ml);
    if (approximate && f.usable) {  // CSS fits are compared on offset + n* log(sigma^2) + 2k, and its AICc
      const double npar = static_cast<double>(c.p + c.q + c.P + c.Q + f.beta.size()) + 1;
      const double nstar = static_cast<double>(length - o.d - o.D * m);
      f.aic = offset + nstar * std::log(f.variance) + 2 * npar;
      f.aicc = nstar - npar - 1 != 0 ? f.aic + 2 * npar * (npar + 1) / (nstar - npar - 1)
                                     : std::numeric_limits<double>::infinity();
    }
    const double ic = score(f);
    tried.push_back({c, ic});
    if (ic < best_ic) {
      best_ic = ic, best = std::move(f);
      return true;
    }
    return false;
  };
  int p = std::min(y.size() < 10 ? 1 : 2, max_p), q = std::min(y.size() < 10 ? 1 : 2, max_q);
  int P = std::min(y.size() < 10 ? 0 : 1, max_P), Q = std::min(y.size() < 10 ? 0 : 1, max_Q);
  attempt({p, q, P, Q, constant});
  if (attempt({0, 0, 0, 0, constant})) p = q = P = Q = 0;
  if (max_p > 0 || max_P > 0) {
    const int p1 = max_p > 0, P1 = m > 1 && max_P > 0;
    if (attempt({p1, 0, P1, 0, constant})) p = p1, P = P1, q = Q = 0;
  }
  if (max_q > 0 || max_Q > 0) {
    const int q1 = max_q > 0, Q1 = m > 1 && max_Q > 0;
    if (attempt({0, q1, 0, Q1, constant})) p = P = 0, q = q1, Q = Q1;
  }
  if (constant && attempt({0, 0, 0, 0, false})) p = q = P = Q = 0;
  // The walk: from the best so far, try its neighbours in a fixed order and move to the first
  // that improves; stop when none does.
  for (bool moved = true; moved && tried.size() < 94;) {
    moved = false;
    struct Step {
      int dp, dq, dP, dQ;
      bool flip;
    };
    static const Step steps[] = {{0, 0, -1, 0, false}, {0, 0, 0, -1, false}, {0, 0, 1, 0, false},
                                 {0, 0, 0, 1, false},  {0, 0, -1, -1, false}, {0, 0, -1, 1, false},
                                 {0, 0, 1, -1, false}, {0, 0, 1, 1, false},  {-1, 0, 0, 0, false},
                                 {0, -1, 0, 0, false}, {1, 0, 0, 0, false},  {0, 1, 0, 0, false},
                                 {-1, -1, 0, 0, false}, {-1, 1, 0, 0, false}, {1, -1, 0, 0, false},
                                 {1, 1, 0, 0, false},  {0, 0, 0, 0, true}};
    for (const Step& s : steps) {
      const int np = p + s.dp, nq = q + s.dq, nP = P + s.dP, nQ = Q + s.dQ;
      if (np < 0 || nq < 0 || nP < 0 || nQ < 0 || np > max_p || nq > max_q || nP > max_P || nQ > max_Q) continue;
      if (s.flip && !(may_drift || may_mean)) continue;
      const bool nc = s.flip ? !constant : constant;
      if (attempt({np, nq, nP, nQ, nc})) {
        p = np, q = nq, P = nP, Q = nQ, constant = nc;
        moved = true;
        break;
      }
    }
  }
  if (approximate) {  // refit the candidates by maximum likelihood, best CSS score first
    std::stable_sort(tried.begin(), tried.end(), [](const Tried& a, const Tried& b) { return a.ic < b.ic; });
    best = ArimaFit{};
    for (const auto& t : tried) {  // all of them, those the CSS score ruled out last
      check_interrupt(interrupt);
      ArimaOrder oo = o;
      oo.p = t.c.p, oo.q = t.c.q, oo.P = t.c.P, oo.Q = t.c.Q;
      ArimaFit f = fit_arima(y, x, oo, t.c.constant, ArimaMethod::css_ml);
      if (f.usable) {
        best = std::move(f);
        break;
      }
    }
  }
  return best;
}

}  // namespace

ArimaFit auto_arima(const std::vector<double>& y_in, const Regressors& x_in, int64_t m, const Interrupt* interrupt) {
  std::vector<size_t> kept;
  ArimaFit fit = search(y_in, x_in, m, kept, interrupt);
  for (size_t& c : fit.columns) c = kept[c];  // back to the caller's numbering
  return fit;
}

}  // namespace orrery::baselines
