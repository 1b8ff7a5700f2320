// Fitting and forecasting a regression with seasonal ARIMA errors; see arima_model.h. The
// numbered steps follow R's stats::arima (and statsforecast's arima, which ports it), so the
// estimates agree with theirs where the likelihood has one maximum.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "arima_model.h"
#include "arima_poly.h"
#include "bfgs.h"
#include "least_squares.h"
#include "orrery/error.h"

namespace orrery::baselines {
namespace {

constexpr double kDiffuse = 1e6;  // the variance of the differenced states' unknown start

// The expanded polynomials of the errors: phi (AR times seasonal AR) and theta (MA times seasonal
// MA), from coef in R's order. `transformed`: the AR blocks are in PACF (atanh) coordinates.
void expand(const std::vector<double>& coef, const ArimaOrder& o, bool transformed, std::vector<double>& phi,
            std::vector<double>& theta) {
  const auto block = [&](size_t at, int n) { return std::vector<double>(coef.begin() + at, coef.begin() + at + n); };
  std::vector<double> ar = block(0, o.p), ma = block(o.p, o.q), sar = block(o.p + o.q, o.P),
                      sma = block(o.p + o.q + o.P, o.Q);
  if (transformed) ar = from_pacf(ar), sar = from_pacf(sar);
  const size_t m = static_cast<size_t>(o.m);
  phi.assign(o.p + m * o.P, 0.0);
  theta.assign(o.q + m * o.Q, 0.0);
  for (int i = 0; i < o.p; ++i) phi[i] = ar[i];
  for (int i = 0; i < o.q; ++i) theta[i] = ma[i];
  for (int j = 0; j < o.P; ++j) {
    phi[(j + 1) * m - 1] += sar[j];
    for (int i = 0; i < o.p; ++i) phi[(j + 1) * m + i] -= ar[i] * sar[j];
  }
  for (int j = 0; j < o.Q; ++j) {
    theta[(j + 1) * m - 1] += sma[j];
    for (int i = 0; i < o.q; ++i) theta[(j + 1) * m + i] += ma[i] * sma[j];
  }
}

// The differencing operator (1-B)^d (1-B^m)^D as the coefficients delta of y_t = sum delta_k
// y_{t-k} + w_t.
std::vector<double> differencing(const ArimaOrder& o) {
  std::vector<double> poly = {1.0};
  const auto times = [&](size_t lag) {
    std::vector<double> out(poly.size() + lag, 0.0);
    for (size_t i = 0; i < poly.size(); ++i) out[i] += poly[i], out[i + lag] -= poly[i];
    poly = out;
  };
  for (int i = 0; i < o.d; ++i) times(1);
  for (int i = 0; i < o.D; ++i) times(static_cast<size_t>(o.m));
  std::vector<double> delta(poly.begin() + 1, poly.end());
  for (double& v : delta) v = -v;
  return delta;
}

std::vector<double> difference(std::vector<double> v, const ArimaOrder& o) {
  const auto once = [&](size_t lag) {
    if (v.size() <= lag) return v.clear();
    for (size_t t = v.size() - 1; t >= lag; --t) v[t] -= v[t - lag];
    v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lag));
  };
  for (int i = 0; i < o.d; ++i) once(1);
  for (int i = 0; i < o.D; ++i) once(static_cast<size_t>(o.m));
  return v;
}

// Conditional sum of squares: the innovations of the differenced series, the first p + mP (after
// the differences) taken as zero. Returns ssq / count, and the innovations (0 before the start).
double css(const std::vector<double>& y, const ArimaOrder& o, const std::vector<double>& phi,
           const std::vector<double>& theta, std::vector<double>* innovations = nullptr) {
  std::vector<double> w = y;
  const size_t n = w.size(), m = static_cast<size_t>(o.m);
  for (int i = 0; i < o.d; ++i)
    for (size_t t = n - 1; t >= 1; --t) w[t] -= w[t - 1];
  for (int i = 0; i < o.D; ++i)
    for (size_t t = n - 1; t >= m; --t) w[t] -= w[t - m];
  const size_t start = static_cast<size_t>(o.d) + static_cast<size_t>(o.D) * m + phi.size();
  std::vector<double> e(n, 0.0);
  double ssq = 0;
  size_t count = 0;
  for (size_t t = start; t < n; ++t) {
    double v = w[t];
    for (size_t j = 0; j < phi.size(); ++j) v -= phi[j] * w[t - j - 1];
    for (size_t j = 0; j < std::min(t - start, theta.size()); ++j) v -= theta[j] * e[t - j - 1];
    e[t] = v;
    if (!std::isnan(v)) ssq += v * v, ++count;
  }
  if (innovations) *innovations = e;
  return count ? ssq / static_cast<double>(count) : std::numeric_limits<double>::infinity();
}

// The Kalman filter over the state (r ARMA states, then one per lag of the differences).
struct StateSpace {
  std::vector<double> phi, theta, delta;
  size_t r = 0, rd = 0;
  std::vector<double> a, P;  // the filtered state and its covariance (rd x rd, row-major)
  // The nonzero lags of phi, delta and R = (1, theta): seasonal polynomials are mostly zeros.
  std::vector<size_t> phi_at, delta_at, R_at;

  StateSpace(std::vector<double> phi_, std::vector<double> theta_, std::vector<double> delta_)
      : phi(std::move(phi_)), theta(std::move(theta_)), delta(std::move(delta_)) {
    r = std::max(phi.size(), theta.size() + 1);
    rd = r + delta.size();
    for (size_t i = 0; i < phi.size(); ++i)
      if (phi[i] != 0) phi_at.push_back(i);
    for (size_t k = 0; k < delta.size(); ++k)
      if (delta[k] != 0) delta_at.push_back(k);
    for (size_t i = 0; i < r; ++i)
      if (R(i) != 0) R_at.push_back(i);
  }
  double R(size_t i) const { return i == 0 ? 1.0 : (i - 1 < theta.size() ? theta[i - 1] : 0.0); }

  // out = T X for an rd x rd X, row by row: row i < r of T is phi_i e_0 + e_{i+1} (the AR
  // companion), row r is e_0 + sum_k delta_k e_{r+k} (the newest level), rows below shift the lags.
  void times_T(const double* X, double* out) const {
    const auto row = [&](size_t i) { return X + i * rd; };
    for (size_t i = 0; i < r; ++i) {
      double* o = out + i * rd;
      if (i + 1 < r) std::copy(row(i + 1), row(i + 1) + rd, o);
      else std::fill(o, o + rd, 0.0);
    }
    for (size_t i : phi_at)
      for (size_t j = 0; j < rd; ++j) out[i * rd + j] += phi[i] * X[j];
    if (delta.empty()) return;
    double* o = out + r * rd;
    std::copy(row(0), row(0) + rd, o);
    for (size_t k : delta_at)
      for (size_t j = 0; j < rd; ++j) o[j] += delta[k] * row(r + k)[j];
    for (size_t k = 1; k < delta.size(); ++k) std::copy(row(r + k - 1), row(r + k - 1) + rd, out + (r + k) * rd);
  }
  void predict_state(std::vector<double>& a_next) const {
    for (size_t i = 0; i < r; ++i) a_next[i] = (i < phi.size() ? phi[i] * a[0] : 0.0) + (i + 1 < r ? a[i + 1] : 0.0);
    if (!delta.empty()) {
      double v = a[0];
      for (size_t k = 0; k < delta.size(); ++k) v += delta[k] * a[r + k];
      a_next[r] = v;
      for (size_t k = 1; k < delta.size(); ++k) a_next[r + k] = a[r + k - 1];
    }
  }
  // out = X T', row by row: each row of X is mapped as T maps a state (predict_state's rule).
  void times_T_right(const double* X, double* out) const {
    for (size_t i = 0; i < rd; ++i) {
      const double* x = X + i * rd;
      double* o = out + i * rd;
      std::copy(x + 1, x + r, o);
      o[r - 1] = 0;
      for (size_t j : phi_at) o[j] += phi[j] * x[0];
      if (delta.empty()) continue;
      double v = x[0];
      for (size_t k : delta_at) v += delta[k] * x[r + k];
      o[r] = v;
      std::copy(x + r, x + rd - 1, o + r + 1);
    }
  }
  // T P T' + R R'.
  void predict_covariance(std::vector<double>& P_next, std::vector<double>& work) const {
    times_T(P.data(), work.data());
    times_T_right(work.data(), P_next.data());
    for (size_t i : R_at)
      for (size_t j : R_at) P_next[i * rd + j] += R(i) * R(j);
  }
  double observe(const std::vector<double>& s) const {  // Z s: the series is w plus its differenced lags
    double v = s[0];
    for (size_t k = 0; k < delta.size(); ++k) v += delta[k] * s[r + k];
    return v;
  }
};

// The stationary covariance of the ARMA block: P = T P T' + R R', by doubling (P <- P + A P A',
// A <- A A). Empty when it does not settle (an AR part on or outside the unit circle).
std::vector<double> stationary_covariance(const StateSpace& s) {
  const size_t r = s.r;
  std::vector<double> A(r * r, 0.0), P(r * r), tmp(r * r), next(r * r);
  for (size_t i = 0; i < r; ++i) {
    if (i < s.phi.size()) A[i * r] = s.phi[i];
    if (i + 1 < r) A[i * r + i + 1] = 1;
    for (size_t j = 0; j < r; ++j) P[i * r + j] = s.R(i) * s.R(j);
  }
  // C = X Y by rows (C_i = sum_k X_ik Y_k), which vectorises.
  const auto mul = [r](const std::vector<double>& X, const std::vector<double>& Y, std::vector<double>& C) {
    std::fill(C.begin(), C.end(), 0.0);
    for (size_t i = 0; i < r; ++i)
      for (size_t k = 0; k < r; ++k) {
        const double x = X[i * r + k];
        if (x == 0) continue;
        double* __restrict c = C.data() + i * r;
        const double* __restrict y = Y.data() + k * r;
        for (size_t j = 0; j < r; ++j) c[j] += x * y[j];
      }
  };
  std::vector<double> tmp_t(r * r);
  for (int it = 0; it < 80; ++it) {
    mul(A, P, tmp);  // A P; its transpose is P A', P being symmetric
    for (size_t i = 0; i < r; ++i)
      for (size_t j = 0; j < r; ++j) tmp_t[j * r + i] = tmp[i * r + j];
    mul(A, tmp_t, next);  // A P A'
    double change = 0, size = 0;
    for (size_t i = 0; i < r * r; ++i) change = std::max(change, std::fabs(next[i])), size = std::max(size, std::fabs(P[i]));
    for (size_t i = 0; i < r * r; ++i) P[i] += next[i];
    if (!std::isfinite(size) || size > 1e30) return {};
    if (change <= 1e-16 * size) return P;
    mul(A, A, tmp);
    A.swap(tmp);
  }
  return {};
}

struct Likelihood {
  double ssq = 0, sumlog = 0;
  size_t count = 0;
  bool ok = false;
};

// Runs the filter over w (the target less its regression), leaving the final state in s.
Likelihood filter(StateSpace& s, const std::vector<double>& w, std::vector<double>* std_residuals) {
  Likelihood L;
  const size_t rd = s.rd, r = s.r;
  const std::vector<double> Q0 = stationary_covariance(s);
  if (Q0.empty()) return L;
  std::vector<double> Pn(rd * rd, 0.0), a_next(rd), work(rd * rd), M(rd);
  for (size_t i = 0; i < r; ++i)
    for (size_t j = 0; j < r; ++j) Pn[i * rd + j] = Q0[i * r + j];
  for (size_t k = r; k < rd; ++k) Pn[k * rd + k] = kDiffuse;
  s.a.assign(rd, 0.0);
  s.P.assign(rd * rd, 0.0);
  if (std_residuals) std_residuals->assign(w.size(), std::nan(""));
  for (size_t t = 0; t < w.size(); ++t) {
    if (t > 0) {
      s.predict_state(a_next);
      s.predict_covariance(Pn, work);
    } else {
      std::fill(a_next.begin(), a_next.end(), 0.0);
    }
    if (std::isnan(w[t])) {
      s.a = a_next, s.P = Pn;
      continue;
    }
    const double innovation = w[t] - s.observe(a_next);
    for (size_t i = 0; i < rd; ++i) {
      double v = Pn[i * rd];
      for (size_t k : s.delta_at) v += Pn[i * rd + r + k] * s.delta[k];
      M[i] = v;
    }
    const double gain = s.observe(M);
    if (!(gain > 0) || !std::isfinite(gain)) return L;
    if (gain < 1e4) {  // a step still dominated by the diffuse start carries no information
      ++L.count;
      L.ssq += innovation * innovation / gain;
      L.sumlog += std::log(gain);
    }
    if (std_residuals) (*std_residuals)[t] = innovation / std::sqrt(gain);
    for (size_t i = 0; i < rd; ++i) s.a[i] = a_next[i] + M[i] * innovation / gain;
    for (size_t i = 0; i < rd; ++i) {  // P = Pn - M M' / gain, row by row (restrict: vectorised)
      double* __restrict out = s.P.data() + i * rd;
      const double* __restrict in = Pn.data() + i * rd;
      const double* __restrict m = M.data();
      const double f = m[i] / gain;
      for (size_t j = 0; j < rd; ++j) out[j] = in[j] - f * m[j];
    }
  }
  L.ok = L.count > 0 && std::isfinite(L.ssq);
  return L;
}

std::vector<double> less_regression(const std::vector<double>& y, const Regressors& x, const std::vector<double>& beta,
                                    size_t from) {
  std::vector<double> w = y;
  for (size_t j = 0; j < x.size(); ++j)
    for (size_t t = 0; t < w.size(); ++t) w[t] -= x[j][t] * beta[from + j];
  return w;
}

// The exact log-likelihood with sigma^2 profiled out, as R reports it: n_used (log(2 pi s2) + 1)
// plus the log gains, times -1/2, with s2 = ssq / count.
double gaussian_loglik(const Likelihood& L, double nu) {
  const double count = static_cast<double>(L.count);
  const double objective = 0.5 * (std::log(L.ssq / count) + L.sumlog / count);
  return -0.5 * (2 * nu * objective + nu + nu * std::log(2 * std::numbers::pi));
}

// True when 1 - sum phi_i z^i (or 1 + sum theta_i z^i) has a root within `radius`: the check
// statsforecast applies to every candidate (radius 1.01), only for polynomials of degree >= 2.
bool root_within(const std::vector<double>& coef, double sign, double radius) {
  size_t last = 0;
  bool any = false;
  for (size_t i = 0; i < coef.size(); ++i)
    if (std::fabs(coef[i]) > 1e-8) last = i, any = true;
  if (!any || last == 0) return false;
  std::vector<double> scaled(last + 1);
  for (size_t i = 0; i <= last; ++i) scaled[i] = sign * coef[i] * std::pow(radius, static_cast<double>(i + 1));
  return !is_stationary(scaled);
}

}  // namespace

ArimaFit fit_arima(const std::vector<double>& y, const Regressors& given, const ArimaOrder& o, bool constant,
                   ArimaMethod method) {
  ArimaFit fit;
  fit.order = o;
  fit.y = y;
  const size_t n = y.size(), narma = static_cast<size_t>(o.p + o.q + o.P + o.Q);
  const int diffs = o.d + o.D;
  if (o.m < 1 || (o.m == 1 && (o.P || o.D || o.Q))) return fit;  // no season to act at
  const std::vector<double> delta = differencing(o);
  if (n <= delta.size()) return fit;
  // 1. The regressors: a drift (1..n) with one difference, an intercept with none, then the given.
  fit.constant = constant && diffs <= 1;
  if (fit.constant) {
    std::vector<double> c(n, 1.0);
    if (diffs == 1)
      for (size_t t = 0; t < n; ++t) c[t] = static_cast<double>(t + 1);
    fit.x.push_back(std::move(c));
  }
  // A regressor the differences wipe out (a dummy of period m under a seasonal difference, a line
  // under a first one) has no coefficient the likelihood can fix: it is left out, as a zero.
  for (size_t j = 0; j < given.size(); ++j) {
    double peak = 0, left = 0;
    for (double v : given[j])
      if (std::isfinite(v)) peak = std::max(peak, std::fabs(v));
    for (double v : difference(given[j], o))
      if (std::isfinite(v)) left = std::max(left, std::fabs(v));
    if (left > 1e-9 * peak) fit.x.push_back(given[j]), fit.columns.push_back(j);
  }
  bool gaps = false;
  for (size_t t = 0; t < n; ++t) {
    bool row = std::isfinite(y[t]);
    for (const auto& c : fit.x) row = row && std::isfinite(c[t]);
    gaps = gaps || !row;
  }
  // 2. Start values: ARMA at zero, the regression by least squares on the differenced data.
  std::vector<double> init(narma, 0.0);
  if (!fit.x.empty()) {
    Regressors dx;
    for (const auto& c : fit.x) dx.push_back(difference(c, o));
    const std::vector<double> beta = least_squares(difference(y, o), dx);
    if (beta.empty()) return fit;
    init.insert(init.end(), beta.begin(), beta.end());
  }
  int64_t used = 0;
  for (size_t t = 0; t < n; ++t) {
    bool row = std::isfinite(y[t]);
    for (const auto& c : fit.x) row = row && std::isfinite(c[t]);
    used += row;
  }
  used -= static_cast<int64_t>(delta.size());
  if (used <= 0) return fit;
  // The optimiser sees each regression coefficient scaled by its column's spread, so that a drift
  // (1..n) and a price in pence move on comparable steps; the optimum is the same.
  // In units of the target's own spread too, so that a series in units of 1e-40 is fitted as the
  // same series in units of 1.
  double y_spread = 0;
  {
    size_t c = 0;
    for (double v : difference(y, o))
      if (std::isfinite(v)) y_spread += v * v, ++c;
    y_spread = c && y_spread > 0 ? std::sqrt(y_spread / static_cast<double>(c)) : 1.0;
  }
  std::vector<double> unit(init.size(), 1.0);
  for (size_t j = 0; j < fit.x.size(); ++j) {
    const std::vector<double> d = difference(fit.x[j], o);
    double ss = 0;
    size_t c = 0;
    for (double v : d)
      if (std::isfinite(v)) ss += v * v, ++c;
    unit[narma + j] = (c && ss > 0) ? y_spread * std::sqrt(static_cast<double>(c) / ss) : 1.0;
  }
  const auto scaled = [&](std::vector<double> v, bool to) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = to ? v[i] / unit[i] : v[i] * unit[i];
    return v;
  };
  std::vector<double> phi, theta;
  const auto css_objective = [&](const std::vector<double>& s) {
    const std::vector<double> c = scaled(s, false);
    expand(c, o, false, phi, theta);
    const double v = css(less_regression(y, fit.x, c, narma), o, phi, theta);
    if (std::isinf(v)) return std::numeric_limits<double>::max();
    return v > 0 ? 0.5 * std::log(v) : -std::numeric_limits<double>::infinity();
  };
  // 3. Conditional sum of squares: the start (or, for method css, the answer). Gaps break its
  // recursion, so with gaps maximum likelihood starts from the least-squares start, as R's does.
  if (gaps && method == ArimaMethod::css) return fit;
  BfgsResult c{scaled(init, true), 0.0, 0, true};
  if (!gaps) c = bfgs(css_objective, c.x);
  std::vector<double> coef = scaled(c.x, false);
  double objective = c.value;
  if (method == ArimaMethod::css_ml) {
    if (c.hit_limit) coef = init;  // as R: a CSS fit that ran out of iterations is not a start
    // 4. Maximum likelihood, the AR blocks in PACF coordinates so every trial is stationary.
    std::vector<double> start = coef;
    const std::vector<double> ar = to_pacf(std::vector<double>(coef.begin(), coef.begin() + o.p)),
                              sar = to_pacf(std::vector<double>(coef.begin() + o.p + o.q, coef.begin() + o.p + o.q + o.P));
    if (ar.size() != static_cast<size_t>(o.p) || sar.size() != static_cast<size_t>(o.P)) return fit;  // CSS left the stationary region
    std::copy(ar.begin(), ar.end(), start.begin());
    std::copy(sar.begin(), sar.end(), start.begin() + o.p + o.q);
    const auto ml_objective = [&](const std::vector<double>& s) {
      const std::vector<double> c2 = scaled(s, false);
      expand(c2, o, true, phi, theta);
      StateSpace ss(phi, theta, delta);
      const Likelihood L = filter(ss, less_regression(y, fit.x, c2, narma), nullptr);
      if (!L.ok) return std::numeric_limits<double>::infinity();
      const double s2 = L.ssq / static_cast<double>(L.count);
      if (!(s2 > 0)) return std::numeric_limits<double>::quiet_NaN();
      return 0.5 * (std::log(s2) + L.sumlog / static_cast<double>(L.count));
    };
    const BfgsResult ml = bfgs(ml_objective, scaled(start, true));
    coef = scaled(ml.x, false);
    objective = ml.value;
    const std::vector<double> ar2 = from_pacf(std::vector<double>(coef.begin(), coef.begin() + o.p)),
                              sar2 = from_pacf(std::vector<double>(coef.begin() + o.p + o.q, coef.begin() + o.p + o.q + o.P));
    std::copy(ar2.begin(), ar2.end(), coef.begin());
    std::copy(sar2.begin(), sar2.end(), coef.begin() + o.p + o.q);
  }
  if (!(objective < std::numeric_limits<double>::max())) return fit;  // bfgs reads non-finite values as the largest
  // 5. The fitted model: its coefficients, the filter's final state, the information criteria.
  fit.ar.assign(coef.begin(), coef.begin() + o.p);
  fit.ma.assign(coef.begin() + o.p, coef.begin() + o.p + o.q);
  fit.sar.assign(coef.begin() + o.p + o.q, coef.begin() + o.p + o.q + o.P);
  fit.sma.assign(coef.begin() + o.p + o.q + o.P, coef.begin() + static_cast<std::ptrdiff_t>(narma));
  fit.beta.assign(coef.begin() + static_cast<std::ptrdiff_t>(narma), coef.end());
  expand(coef, o, false, phi, theta);
  const std::vector<double> w = less_regression(y, fit.x, coef, narma);
  std::vector<double> residuals;
  const double npar_fit = static_cast<double>(coef.size());
  const double nu = static_cast<double>(used);
  size_t first = 0, last = n;
  while (first < n && std::isnan(y[first])) ++first;
  while (last > first && std::isnan(y[last - 1])) --last;
  double observed = 0;
  for (size_t t = first; t < last; ++t) observed += !std::isnan(y[t]);
  const double nstar = observed - o.d - static_cast<double>(o.D * o.m), npar = npar_fit + 1;
  if (method == ArimaMethod::css_ml) {
    StateSpace ss(phi, theta, delta);
    const Likelihood L = filter(ss, w, &residuals);
    if (!L.ok) return fit;
    fit.variance = L.ssq / static_cast<double>(L.count);
    fit.loglik = gaussian_loglik(L, nu);
    fit.aic = -2 * fit.loglik + 2 * npar;
  } else {
    const double s2 = fit.variance = css(w, o, phi, theta, &residuals);
    fit.loglik = std::nan("");  // CSS has no likelihood; auto_arima scores it on sigma2
    fit.aic = s2 > 0 ? nstar * std::log(s2) + 2 * npar : -std::numeric_limits<double>::infinity();
  }
  fit.nobs = used;
  fit.bic = fit.aic + npar * (std::log(nstar) - 2);
  fit.aicc = nstar - npar - 1 != 0 ? fit.aic + 2 * npar * (npar + 1) / (nstar - npar - 1)
                                   : std::numeric_limits<double>::infinity();
  double ss = 0;
  for (double e : residuals)
    if (!std::isnan(e)) ss += e * e;
  fit.sigma2 = ss / (nstar - npar + 1);
  // Unusable: no information criterion, no residual degrees of freedom left for sigma2 (more
  // coefficients than steps), or a root within 1.01 of the unit circle (statsforecast's rule).
  fit.usable = std::isfinite(fit.aic) && nstar - npar + 1 > 0 && std::isfinite(fit.sigma2) && fit.sigma2 >= 0 &&
               !root_within(phi, 1.0, 1.01) && !root_within(theta, -1.0, 1.01);
  return fit;
}

double arima_loglik(const ArimaFit& fit) {
  std::vector<double> coef = fit.ar;
  for (const auto* part : {&fit.ma, &fit.sar, &fit.sma, &fit.beta}) coef.insert(coef.end(), part->begin(), part->end());
  std::vector<double> phi, theta;
  expand(coef, fit.order, false, phi, theta);
  StateSpace s(phi, theta, differencing(fit.order));
  const Likelihood L = filter(s, less_regression(fit.y, fit.x, coef, coef.size() - fit.beta.size()), nullptr);
  return L.ok ? gaussian_loglik(L, static_cast<double>(fit.nobs)) : std::nan("");
}

ArimaForecast forecast_arima(const ArimaFit& fit, const Regressors& future, int64_t h) {
  const ArimaOrder& o = fit.order;
  ArimaForecast out{std::vector<double>(static_cast<size_t>(h), 0.0), std::vector<double>(static_cast<size_t>(h), 0.0)};
  std::vector<double> coef = fit.ar;
  for (const auto* part : {&fit.ma, &fit.sar, &fit.sma, &fit.beta}) coef.insert(coef.end(), part->begin(), part->end());
  const size_t narma = coef.size() - fit.beta.size();
  std::vector<double> phi, theta;
  expand(coef, o, false, phi, theta);
  StateSpace s(phi, theta, differencing(o));
  if (!filter(s, less_regression(fit.y, fit.x, coef, narma), nullptr).ok)
    throw Error("arima: the fitted model's filter fails on its own history (an unusable fit forecast?)");
  std::vector<double> a_next(s.rd), P_next(s.rd * s.rd), work(s.rd * s.rd);
  const size_t given = fit.constant ? 1 : 0;
  for (int64_t k = 0; k < h; ++k) {
    s.predict_state(a_next);
    s.predict_covariance(P_next, work);
    s.a = a_next, s.P = P_next;
    double reg = 0;
    for (size_t j = 0; j < fit.beta.size(); ++j) {
      double xj;
      if (j < given) xj = o.d + o.D == 1 ? static_cast<double>(fit.y.size() + static_cast<size_t>(k) + 1) : 1.0;
      else xj = future[fit.columns[j - given]][static_cast<size_t>(k)];
      reg += fit.beta[j] * xj;
    }
    out.mean[k] = s.observe(s.a) + reg;
    // Var(Z a) = Z P Z'.
    std::vector<double> Pz(s.rd);
    for (size_t i = 0; i < s.rd; ++i) {
      double v = s.P[i * s.rd];
      for (size_t q = 0; q < s.delta.size(); ++q) v += s.P[i * s.rd + s.r + q] * s.delta[q];
      Pz[i] = v;
    }
    out.sd[k] = std::sqrt(std::max(0.0, s.observe(Pz) * fit.sigma2));
  }
  return out;
}

}  // namespace orrery::baselines
