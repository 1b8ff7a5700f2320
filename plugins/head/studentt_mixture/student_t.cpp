#include "student_t.h"

#include <ATen/ATen.h>

#include <cmath>

namespace orrery::student_t {

at::Tensor log_pdf(const at::Tensor& y, const at::Tensor& df, const at::Tensor& loc,
                   const at::Tensor& scale) {
  at::Tensor z = (y - loc) / scale;
  return at::lgamma((df + 1) / 2) - at::lgamma(df / 2) - 0.5 * at::log(df * M_PI) - at::log(scale) -
         (df + 1) / 2 * at::log1p(z * z / df);
}

// Continued fraction of I_x(a, b) (modified Lentz), accurate where x < (a + 1)/(a + b + 2):
//   I_x(a,b) = x^a (1-x)^b / (a B(a,b)) * 1/(1 + d1/(1 + d2/(1 + ...))),
//   d_{2m} = m(b-m)x / ((a+2m-1)(a+2m)),  d_{2m+1} = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)).
// Iterates until every element has converged (checked every 8 steps) or 300 steps.
static at::Tensor beta_fraction(const at::Tensor& a, const at::Tensor& b, const at::Tensor& x) {
  constexpr double tiny = 1e-300, tol = 1e-14;
  auto guard = [&](const at::Tensor& t) { return at::where(t.abs() < tiny, at::full({}, tiny, t.options()), t); };
  at::Tensor c = at::ones_like(x);
  at::Tensor d = at::reciprocal(guard(1 - (a + b) * x / (a + 1)));
  at::Tensor h = d.clone();
  for (int m = 1; m <= 300; ++m) {
    at::Tensor delta;
    for (int odd = 0; odd < 2; ++odd) {
      at::Tensor aa = odd == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                               : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
      d = at::reciprocal(guard(1 + aa * d));
      c = guard(1 + aa / c);
      delta = d * c;
      h = h * delta;
    }
    if (m % 8 == 0 && ((delta - 1).abs() < tol).all().item<bool>()) break;
  }
  return h;
}

at::Tensor incomplete_beta(const at::Tensor& a_in, const at::Tensor& b_in, const at::Tensor& x_in) {
  const at::Tensor a = a_in.to(at::kDouble), b = b_in.to(at::kDouble), x = x_in.to(at::kDouble);
  // I_x(a,b) = 1 - I_{1-x}(b,a): use whichever side the continued fraction converges on.
  at::Tensor swap = x > (a + 1) / (a + b + 2);
  at::Tensor aa = at::where(swap, b, a), bb = at::where(swap, a, b), xx = at::where(swap, 1 - x, x);
  at::Tensor xc = xx.clamp(1e-300, 1.0);
  at::Tensor log_front = aa * at::log(xc) + bb * at::log1p(-xx) -
                         (at::lgamma(aa) + at::lgamma(bb) - at::lgamma(aa + bb)) - at::log(aa);
  at::Tensor part = at::where(xx > 0, at::exp(log_front) * beta_fraction(aa, bb, xx), at::zeros_like(xx));
  return at::where(swap, 1 - part, part);
}

at::Tensor cdf(const at::Tensor& y, const at::Tensor& df, const at::Tensor& loc, const at::Tensor& scale) {
  // With t = (y - loc)/scale: P(T <= t) = 1 - I_{df/(df+t^2)}(df/2, 1/2)/2 for t >= 0, by symmetry.
  at::Tensor t = ((y - loc) / scale).to(at::kDouble);
  // Beyond df = 1e5 the continued fraction needs ~sqrt(df) steps, and the distribution is normal
  // to within 1e-5: those elements take the normal CDF (and a harmless df in the fraction).
  constexpr double kNormalDf = 1e5;
  at::Tensor normal = df.to(at::kDouble) > kNormalDf;
  at::Tensor d = at::where(normal, at::full({}, 3.0, t.options()), df.to(at::kDouble));
  at::Tensor tail = 0.5 * incomplete_beta(d / 2, at::full({}, 0.5, t.options()).expand_as(d), d / (d + t * t));
  at::Tensor student = at::where(t >= 0, 1 - tail, tail);
  return at::where(normal, 0.5 * at::erfc(-t / std::sqrt(2.0)), student);
}

at::Tensor Mixture::log_pdf(const at::Tensor& y) const {
  return at::logsumexp(log_w + student_t::log_pdf(y.unsqueeze(-1), df, loc, scale), -1);
}

at::Tensor Mixture::cdf(const at::Tensor& y) const {
  return (at::exp(log_w) * student_t::cdf(y.unsqueeze(-1), df, loc, scale)).sum(-1);
}

at::Tensor Mixture::mean() const { return (at::exp(log_w) * loc).sum(-1); }

at::Tensor Mixture::quantiles(const std::vector<double>& levels) const {
  const int64_t Q = static_cast<int64_t>(levels.size());
  auto opts = loc.options().dtype(at::kDouble);
  // Everything gets a leading level axis: (Q, ..., k) parameters, (Q, ...) values.
  std::vector<int64_t> shape{Q};
  for (int64_t s : loc.sizes()) shape.push_back(s);
  Mixture m{df.to(at::kDouble).unsqueeze(0).expand(shape), loc.to(at::kDouble).unsqueeze(0).expand(shape),
            scale.to(at::kDouble).unsqueeze(0).expand(shape), log_w.to(at::kDouble).unsqueeze(0).expand(shape)};
  std::vector<int64_t> view(shape.size() - 1, 1);
  view[0] = Q;
  at::Tensor u = at::tensor(levels, opts).view(view);
  // A bracket every component's heavy tail respects: at 1e3 scales from the outermost location
  // a Student-T with df >= 2 keeps less than 5e-7 of its mass outside.
  at::Tensor spread = m.scale.amax(-1) * 1e3;
  at::Tensor lo = m.loc.amin(-1) - spread, hi = m.loc.amax(-1) + spread;
  at::Tensor x = m.mean();
  for (int it = 0; it < 200; ++it) {
    at::Tensor F = m.cdf(x) - u;
    if ((F.abs() < 1e-9).all().item<bool>()) break;
    lo = at::where(F < 0, x, lo);
    hi = at::where(F >= 0, x, hi);
    at::Tensor newton = x - F / at::exp(m.log_pdf(x)).clamp_min(1e-300);
    x = at::where((newton > lo) & (newton < hi), newton, (lo + hi) / 2);
    if (((hi - lo) <= 1e-12 * (1 + x.abs())).all().item<bool>()) break;
  }
  return x.to(loc.scalar_type());
}

}  // namespace orrery::student_t
