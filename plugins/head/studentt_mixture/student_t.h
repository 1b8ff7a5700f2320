#pragma once
// Student-T distributions and their mixtures, elementwise over tensors (float64 inside).
// ATen has no incomplete beta function, so the CDF is computed here from its continued fraction.
#include <ATen/core/Tensor.h>

namespace orrery::student_t {

// log density of Student-T(df, loc, scale) at y.
at::Tensor log_pdf(const at::Tensor& y, const at::Tensor& df, const at::Tensor& loc,
                   const at::Tensor& scale);

// CDF of Student-T(df, loc, scale) at y, in float64 (the normal CDF beyond df = 1e5).
at::Tensor cdf(const at::Tensor& y, const at::Tensor& df, const at::Tensor& loc,
               const at::Tensor& scale);

// Regularised incomplete beta function I_x(a, b), elementwise.
at::Tensor incomplete_beta(const at::Tensor& a, const at::Tensor& b, const at::Tensor& x);

// A mixture over the last dimension (k components) with log weights `log_w`.
struct Mixture {
  at::Tensor df, loc, scale, log_w;  // (..., k)
  at::Tensor log_pdf(const at::Tensor& y) const;  // y: (...)
  at::Tensor cdf(const at::Tensor& y) const;
  at::Tensor mean() const;  // finite because df > 2 (the head keeps it so)
  // The u-quantile for each u in `levels` (L): (L, ...). Numeric inversion of the CDF by
  // safeguarded Newton steps inside a shrinking bracket, to |F(x) - u| < 1e-9.
  at::Tensor quantiles(const std::vector<double>& levels) const;
};

}  // namespace orrery::student_t
