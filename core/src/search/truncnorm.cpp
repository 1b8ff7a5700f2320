#include "orrery/host/search/truncnorm.h"

#include <cfloat>
#include <cmath>
#include <limits>

namespace orrery::search::truncnorm {
namespace {

const double kSqrt2 = std::sqrt(2.0);
const double kLogSqrt2Pi = std::log(std::sqrt(2 * M_PI));
const double kLogisticScale = std::sqrt(3.0) / M_PI;  // Phi(x) ~ 1 / (1 + exp(-pi x / sqrt 3))

double ndtr(double a) {
  const double x = a / kSqrt2;
  if (x < -1 / kSqrt2) return 0.5 * std::erfc(-x);
  if (x < 1 / kSqrt2) return 0.5 + 0.5 * std::erf(x);
  return 1.0 - 0.5 * std::erfc(x);
}

// Phi as the central mass uses it (Optuna's array form: through erf alone).
double ndtr_central(double a) { return 0.5 + 0.5 * std::erf(a / kSqrt2); }

double log_sum(double p, double q) {  // log(e^p + e^q)
  if (p == -INFINITY) return q;
  if (q == -INFINITY) return p;
  const double m = std::max(p, q);
  return m + std::log1p(std::exp(-std::abs(p - q)));
}

double log_diff(double p, double q) { return p + std::log1p(-std::exp(q - p)); }  // log(e^p - e^q)

// x with log Phi(x) = y (y <= 0), by Newton's method from an asymptotic or logistic guess.
double ndtri_exp(double y) {
  // Near 0, solve for -x through log(1 - Phi(x)) instead, where the precision is.
  const bool flipped = y > -1e-2;
  const double z = flipped ? std::log(-std::expm1(y)) : y;
  double x = z < -5 ? -std::sqrt(-2.0 * (z + kLogSqrt2Pi)) : -kLogisticScale * std::log(std::expm1(-z));
  for (int i = 0; i < 100; ++i) {
    const double log_ndtr_x = log_ndtr(x);
    const double log_pdf_x = -0.5 * x * x - kLogSqrt2Pi;
    const double dx = (log_ndtr_x - z) * std::exp(log_ndtr_x - log_pdf_x);
    x -= dx;
    if (std::abs(dx) < 1e-8 * std::abs(x)) break;
  }
  return flipped ? -x : x;
}

}  // namespace

double log_ndtr(double a) {
  if (a > 6) return -ndtr(-a);
  if (a > -20) return std::log(ndtr(a));
  // log Phi(a) = -a^2/2 - ln(-a) - ln sqrt(2 pi) + ln(1 - 1/a^2 + 3/a^4 - 15/a^6 ...)
  const double log_lhs = -0.5 * a * a - std::log(-a) - kLogSqrt2Pi;
  double last = 0, rhs = 1, numerator = 1, denominator = 1, sign = 1;
  const double d = 1 / (a * a);
  for (int i = 1; std::abs(last - rhs) > DBL_EPSILON; ++i) {
    last = rhs;
    sign = -sign;
    denominator *= d;
    numerator *= 2 * i - 1;
    rhs += sign * numerator * denominator;
  }
  return log_lhs + std::log(rhs);
}

double log_gauss_mass(double a, double b) {
  // The right tail is computed as the mirrored left tail, where log Phi is accurate.
  if (b <= 0) return log_diff(log_ndtr(b), log_ndtr(a));
  if (a > 0) return log_diff(log_ndtr(-a), log_ndtr(-b));
  return std::log1p(-ndtr_central(a) - ndtr_central(-b));
}

double ppf(double q, double a, double b) {
  if (a == b) return std::numeric_limits<double>::quiet_NaN();
  if (q == 1) return b;
  if (q == 0) return a;
  const double log_mass = log_gauss_mass(a, b);
  if (a < 0) return ndtri_exp(log_sum(log_ndtr(a), std::log(q) + log_mass));
  return -ndtri_exp(log_sum(log_ndtr(-b), std::log1p(-q) + log_mass));
}

double log_pdf(double x, double a, double b, double loc, double scale) {
  if (a == b) return std::numeric_limits<double>::quiet_NaN();
  const double z = (x - loc) / scale;
  if (z < a || z > b) return -INFINITY;
  return -z * z / 2.0 - kLogSqrt2Pi - log_gauss_mass(a, b) - std::log(scale);
}

}  // namespace orrery::search::truncnorm
