// Forecast variances of the ETS models (Hyndman, Koehler, Ord and Snyder 2008, ch. 6).
// Classes 1 and 2 share the coefficients c_j = alpha + beta phi_j + gamma d_j, with
// phi_j = phi + ... + phi^j (j when undamped) and d_j = 1 when j is a multiple of m:
//   class 1 (additive error):  v_h = sigma2 (1 + sum_{j<h} c_j^2);
//   class 2 (multiplicative error, no multiplicative season):  v_h = (1 + sigma2) theta_h - mu_h^2,
//     theta_h = mu_h^2 + sigma2 sum_{j<h} c_j^2 theta_{h-j}.
// (statsforecast 2.1 writes c_j = alpha beta j + gamma d_j for MAA, a typo that narrows those
// intervals, by 28% at 12 steps on co2; we use the book's coefficient.)
// Class 3 (multiplicative error and season) has no closed form; we propagate the exact first
// and second moments of the states instead (below), which statsforecast sets out to do too
// but without advancing the mean between steps.
#include <array>
#include <cmath>

#include "ets_model.h"

namespace orrery::baselines {
namespace {

std::vector<double> coefficients(const EtsForm& form, const EtsParams& p, size_t m, int64_t horizon) {
  std::vector<double> c(horizon);
  double phi_j = 0, phi_pow = 1;
  for (int64_t j = 1; j < horizon; ++j) {
    phi_pow *= form.damped ? p.phi : 1.0;
    phi_j += phi_pow;
    double v = p.alpha;
    if (form.trend != Component::none) v += p.beta * phi_j;
    if (m > 0 && j % static_cast<int64_t>(m) == 0) v += p.gamma;
    c[j] = v;
  }
  return c;  // c[0] unused
}

// 2 x 2 blocks: the level-and-slope part of the state (the slope row is zero without a trend).
using Mat = std::array<std::array<double, 2>, 2>;
using Vec = std::array<double, 2>;

Mat operator+(const Mat& a, const Mat& b) {
  Mat r;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) r[i][j] = a[i][j] + b[i][j];
  return r;
}
Mat operator*(double s, const Mat& a) {
  Mat r;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) r[i][j] = s * a[i][j];
  return r;
}
// P S Q^T
Mat sandwich(const Mat& P, const Mat& S, const Mat& Q) {
  Mat PS{}, r{};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 2; ++k) PS[i][j] += P[i][k] * S[k][j];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 2; ++k) r[i][j] += PS[i][k] * Q[j][k];
  return r;
}
Vec times(const Mat& A, const Vec& x) { return {A[0][0] * x[0] + A[0][1] * x[1], A[1][0] * x[0] + A[1][1] * x[1]}; }

// Class 3. With x = (l, b) and u_j the seasonal factor used j steps after the next, the model is
//   y = (H x) u_0 (1 + e),  x' = (F + G e) x,  u'_j = u_{j+1} (j < m-1),  u'_{m-1} = u_0 (1 + gamma e),
// H = (1, phi), F = [[1, phi], [0, phi]], G = [[alpha, alpha phi], [beta, beta phi]]. The columns
// W_j = x u_j of the product x u^T then evolve linearly:
//   W'_j = (A_j + B_j e + C_j e^2) W_{c(j)},  c(j) = (j + 1) mod m,
// with A_j = F, B_j = G, C_j = 0 for j < m-1 and B = G + gamma F, C = gamma G for j = m-1.
// With e ~ N(0, sigma2) independent of the past (E e^3 = 0, E e^4 = 3 sigma2^2), the means
// M_j = E W_j and second moments S_ij = E W_i W_j^T evolve as
//   M'_j  = (A_j + sigma2 C_j) M_c(j),
//   S'_ij = A_i S A_j^T + sigma2 (A_i S C_j^T + C_i S A_j^T + B_i S B_j^T) + 3 sigma2^2 C_i S C_j^T,
// S = S_c(i)c(j), and Var y_h = (1 + sigma2) H S_00 H^T - (H M_0)^2 at each step h.
std::vector<double> class3_variance(const EtsForm& form, const EtsParams& p, const EtsState& x,
                                    double s2, int64_t horizon) {
  const size_t m = x.season.size();
  const bool trend = form.trend != Component::none;
  const double phi = trend && form.damped ? p.phi : 1.0;
  const Mat F = trend ? Mat{{{1, phi}, {0, phi}}} : Mat{{{1, 0}, {0, 0}}};
  const Mat G = trend ? Mat{{{p.alpha, p.alpha * phi}, {p.beta, p.beta * phi}}} : Mat{{{p.alpha, 0}, {0, 0}}};
  const Vec H = trend ? Vec{1, phi} : Vec{1, 0};
  const Mat zero{};
  std::vector<Mat> A(m, F), B(m, G), C(m, zero);
  B[m - 1] = G + p.gamma * F;
  C[m - 1] = p.gamma * G;

  const Vec x0 = {x.level, trend ? x.slope : 0.0};
  std::vector<Vec> M(m);
  std::vector<Mat> S(m * m);
  for (size_t j = 0; j < m; ++j) M[j] = {x0[0] * x.season[j], x0[1] * x.season[j]};
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < m; ++j)
      for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b) S[i * m + j][a][b] = M[i][a] * M[j][b];

  std::vector<double> v(horizon);
  std::vector<Vec> M2(m);
  std::vector<Mat> S2(m * m);
  for (int64_t h = 0; h < horizon; ++h) {
    const Mat& S00 = S[0];
    double hsh = 0;
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b) hsh += H[a] * S00[a][b] * H[b];
    const double mu = H[0] * M[0][0] + H[1] * M[0][1];
    v[h] = (1 + s2) * hsh - mu * mu;
    if (h + 1 == horizon) break;
    for (size_t j = 0; j < m; ++j) M2[j] = times(A[j] + s2 * C[j], M[(j + 1) % m]);
    for (size_t i = 0; i < m; ++i) {
      const size_t ci = (i + 1) % m;
      for (size_t j = 0; j < m; ++j) {
        const Mat& Sc = S[ci * m + (j + 1) % m];
        Mat r = sandwich(A[i], Sc, A[j]) + s2 * sandwich(B[i], Sc, B[j]);
        if (i == m - 1 || j == m - 1)  // C vanishes elsewhere
          r = r + s2 * (sandwich(A[i], Sc, C[j]) + sandwich(C[i], Sc, A[j])) +
              3 * s2 * s2 * sandwich(C[i], Sc, C[j]);
        S2[i * m + j] = r;
      }
    }
    std::swap(M, M2);
    std::swap(S, S2);
  }
  return v;
}

}  // namespace

std::vector<double> ets_variance(const EtsForm& form, const EtsParams& p, const EtsState& x,
                                 double sigma2, const std::vector<double>& point) {
  const int64_t horizon = static_cast<int64_t>(point.size());
  const size_t m = x.season.size();
  if (form.error == Component::multiplicative && form.season == Component::multiplicative)
    return class3_variance(form, p, x, sigma2, horizon);
  const std::vector<double> c = coefficients(form, p, m, horizon);
  std::vector<double> v(horizon);
  if (form.error == Component::additive) {
    // Class 1. (Additive error with a multiplicative season is not among the forms selected.)
    double sum = 1;
    for (int64_t h = 0; h < horizon; ++h) {
      if (h > 0) sum += c[h] * c[h];
      v[h] = sigma2 * sum;
    }
    return v;
  }
  std::vector<double> theta(horizon);  // class 2
  for (int64_t h = 0; h < horizon; ++h) {
    double sum = 0;
    for (int64_t j = 1; j <= h; ++j) sum += c[j] * c[j] * theta[h - j];
    theta[h] = point[h] * point[h] + sigma2 * sum;
    v[h] = (1 + sigma2) * theta[h] - point[h] * point[h];
  }
  return v;
}

}  // namespace orrery::baselines
