// KernelSynth (Chronos' kernel-synth.py; TempoPFN's kernel_synth.py): one path of a zero-mean
// Gaussian process whose kernel is 1 to 5 kernels drawn with replacement from a bank of 33,
// folded left with + or x (probability 1/2 each). The bank, as scikit-learn defines its
// kernels (d = |x - x'|, x = t / T so the series spans [0, 1), other parameters default):
//   ExpSineSquared  exp(-2 sin^2(pi d / p) / l^2), l = 1, period p steps for p in 21 values;
//   DotProduct      s0^2 + x x', s0 in {0, 1, 10};
//   RBF             exp(-d^2 / (2 l^2)), l in {0.1, 1, 10};
//   RationalQuad.   (1 + d^2 / (2 a l^2))^-a, l = 1, a in {0.1, 1, 10};
//   White           noise * [x == x'], noise in {0.1, 1};
//   Constant        1.
// The period is in steps (TempoPFN's periodicity p / length), the other scales relative to
// the whole series.
//
// Sampling N(0, K) by one Cholesky of the full T x T matrix costs T^3 / 3 per series (about
// 55 ms at T = 1024 here, 64 series a batch), so the path is built from the kernel's
// structure instead, exactly in distribution up to the two approximations named below:
//  - Products distribute over sums, so the folded kernel is a sum of product terms, and a sum
//    of kernels is a sum of independent GPs: each term is sampled on its own.
//  - A term with a White factor is diagonal: independent noise with variance k(x, x).
//  - The periodic factors of a term multiply into a stationary kernel with a discrete
//    spectrum: ExpSineSquared with l = 1 is sum_k w_k cos(2 pi k d / p) with w_k from the
//    modified Bessel functions I_k(1) (a product of cosines is a sum of cosines at the sums and
//    differences of their frequencies). Dropping lines below 1e-8 of the variance, and all but
//    the 64 strongest of a product's lines (the variance kept), is the first approximation.
//  - The rest of the term (DotProduct, RBF, RQ, Constant) is smooth on the scale of the
//    series (length scales >= 0.1 of it), so a GP with that kernel is drawn by Cholesky on a
//    coarse grid of at most 256 points (about 24 points per length scale) and interpolated
//    linearly to T points: the second approximation, far below the noise.
//  - A periodic x smooth term is sum_j sqrt(w_j) (cos(w_j t) g_j(x) + sin(w_j t) h_j(x)) with
//    g_j, h_j independent draws of the smooth GP; its covariance is P(t - s) S(x, x').
// So the periods keep their exact length in steps and white noise stays white at any T. (The
// empirical covariance of 20,000 such paths matched the exact kernel matrix within Monte-Carlo
// error for periodic x RBF, periodic x periodic, periodic x DotProduct x RQ, RBF^3, White x DotProduct.)
#include <algorithm>
#include <cmath>

#include "../cholesky.h"
#include "../family.h"

namespace orrery::synth {

namespace {

enum class Kind { periodic, dot, rbf, rq, white, constant };
struct Kernel {
  Kind kind;
  double param;  // period in steps | s0 | length scale | alpha | noise level | value
};

const std::vector<Kernel>& bank() {
  static const std::vector<Kernel> kernels = [] {
    std::vector<Kernel> k;
    for (double p : {24, 48, 96, 168, 336, 672, 7, 14, 30, 60, 365, 730, 4, 26, 52, 4, 6, 12, 4, 40, 10})
      k.push_back({Kind::periodic, p});
    for (double s0 : {0, 1, 10}) k.push_back({Kind::dot, s0});
    for (double l : {0.1, 1.0, 10.0}) k.push_back({Kind::rbf, l});
    for (double a : {0.1, 1.0, 10.0}) k.push_back({Kind::rq, a});
    for (double n : {0.1, 1.0}) k.push_back({Kind::white, n});
    k.push_back({Kind::constant, 1});
    return k;
  }();
  return kernels;
}

// One product of bank kernels, grouped by what the sampler does with each.
struct Term {
  double constant = 1;         // product of Constant factors
  double white = 0;            // product of White noise levels; 0 = no White factor
  std::vector<double> periods, sigma0s, lengths, alphas;

  void multiply(const Kernel& k) {
    switch (k.kind) {
      case Kind::periodic: periods.push_back(k.param); break;
      case Kind::dot: sigma0s.push_back(k.param); break;
      case Kind::rbf: lengths.push_back(k.param); break;
      case Kind::rq: alphas.push_back(k.param); break;
      case Kind::white: white = white == 0 ? k.param : white * k.param; break;
      case Kind::constant: constant *= k.param; break;
    }
  }
  bool smooth() const { return !sigma0s.empty() || !lengths.empty() || !alphas.empty(); }

  // The non-periodic, non-white part of the kernel: its stationary factors at distance d
  // (with the constant) times its DotProduct factors at x, x'.
  double stationary(double d) const {
    double k = constant;
    for (double l : lengths) k *= std::exp(-d * d / (2 * l * l));
    for (double a : alphas) k *= std::pow(1 + d * d / (2 * a), -a);
    return k;
  }
  double dots(double x, double x2) const {
    double k = 1;
    for (double s0 : sigma0s) k *= s0 * s0 + x * x2;
    return k;
  }
};

// Draws 1-5 bank kernels and folds them left with + or x into a sum of product terms
// (the right operand of each fold is one kernel, so there are at most 5 terms).
std::vector<Term> draw_kernel(Rng& rng) {
  const auto& k = bank();
  const int64_t n = rng.integer(1, 5);
  std::vector<Term> terms(1);
  terms[0].multiply(k[rng.index(k.size())]);
  for (int64_t i = 1; i < n; ++i) {
    const Kernel& next = k[rng.index(k.size())];
    if (rng.chance(0.5)) {
      terms.emplace_back().multiply(next);
    } else {
      for (auto& t : terms) t.multiply(next);
    }
  }
  return terms;
}

// Spectral weights of ExpSineSquared with l = 1: exp(-1) I_0(1) at k = 0 and 2 exp(-1) I_k(1)
// above, cut where they fall below 1e-8 and renormalised to sum 1 (the kernel at d = 0).
const std::vector<double>& harmonic_weights() {
  static const std::vector<double> w = [] {
    std::vector<double> out;
    for (int k = 0; k < 20; ++k) {
      double ik = 0, term = std::pow(0.5, k) / std::tgamma(k + 1.0);  // (z/2)^k / k!, z = 1
      for (int m = 0; m < 30; ++m) {
        ik += term;
        term *= 0.25 / ((m + 1.0) * (m + 1.0 + k));
      }
      const double wk = (k == 0 ? 1 : 2) * std::exp(-1.0) * ik;
      if (wk < 1e-8) break;
      out.push_back(wk);
    }
    double total = 0;
    for (double v : out) total += v;
    for (double& v : out) v /= total;
    return out;
  }();
  return w;
}

struct Atom {
  double omega;   // radians per step
  double weight;
};

// The discrete spectrum of the product of the term's periodic factors (one atom at 0 when
// there are none), merged and cut to the 64 largest atoms, renormalised to keep the variance.
std::vector<Atom> spectrum(const std::vector<double>& periods) {
  std::vector<Atom> atoms{{0, 1}};
  const auto& w = harmonic_weights();
  for (double p : periods) {
    std::vector<Atom> next;
    for (const Atom& a : atoms)
      for (size_t k = 0; k < w.size(); ++k) {
        const double omega = 2 * M_PI * static_cast<double>(k) / p, weight = a.weight * w[k];
        if (k == 0 || a.omega == 0) {
          next.push_back({a.omega + omega, weight});
        } else {  // cos(a) cos(b) = (cos(a + b) + cos(a - b)) / 2
          next.push_back({a.omega + omega, weight / 2});
          next.push_back({std::fabs(a.omega - omega), weight / 2});
        }
      }
    std::sort(next.begin(), next.end(), [](const Atom& x, const Atom& y) { return x.omega < y.omega; });
    atoms.clear();
    for (const Atom& a : next) {
      if (!atoms.empty() && std::fabs(atoms.back().omega - a.omega) < 1e-12) atoms.back().weight += a.weight;
      else atoms.push_back(a);
    }
    double total = 0;
    for (const Atom& a : atoms) total += a.weight;
    std::sort(atoms.begin(), atoms.end(), [](const Atom& x, const Atom& y) { return x.weight > y.weight; });
    while (atoms.size() > 64 || (atoms.size() > 1 && atoms.back().weight < 1e-8 * total)) atoms.pop_back();
    double kept = 0;
    for (const Atom& a : atoms) kept += a.weight;
    for (Atom& a : atoms) a.weight *= total / kept;
  }
  return atoms;
}

// Draws of the term's smooth GP on a coarse grid, interpolated to the series' T steps.
class SmoothDraws {
 public:
  // False when K + jitter is not positive definite even at the largest jitter.
  bool prepare(const Term& term, size_t T) {
    T_ = T;
    double inv_l2 = 0;  // curvature at d = 0 of the stationary factors sets the grid
    for (double l : term.lengths) inv_l2 += 1 / (l * l);
    inv_l2 += static_cast<double>(term.alphas.size());  // RQ with l = 1
    const double want = std::clamp(24 * std::sqrt(inv_l2), 64.0, 256.0);
    n_ = std::max<size_t>(1, std::min(T, static_cast<size_t>(want)));
    x_.resize(n_);
    for (size_t i = 0; i < n_; ++i)  // grid points at steps i (T-1)/(n-1), as x = t / T
      x_[i] = n_ == 1 ? 0 : static_cast<double>(i) * static_cast<double>(T - 1) / static_cast<double>(n_ - 1) / T;
    // The grid is even, so the stationary factors depend on i - j only: n evaluations of
    // exp and pow instead of n^2 / 2.
    std::vector<double> by_lag(n_);
    for (size_t d = 0; d < n_; ++d) by_lag[d] = term.stationary(x_[d] - x_[0]);
    std::vector<double> k(n_ * n_);
    double mean_diag = 0;
    for (size_t i = 0; i < n_; ++i) {
      for (size_t j = 0; j <= i; ++j) k[i * n_ + j] = by_lag[i - j] * term.dots(x_[i], x_[j]);
      mean_diag += k[i * n_ + i] / static_cast<double>(n_);
    }
    // Smooth kernels on a fine grid are numerically singular: add relative jitter, growing
    // tenfold on each failure (1e-6 of the variance adds noise of sd 1e-3, invisible).
    for (double jitter = 1e-6; jitter <= 1e-2; jitter *= 10) {
      l_ = k;
      for (size_t i = 0; i < n_; ++i) l_[i * n_ + i] += jitter * mean_diag;
      if (cholesky(l_, n_)) return true;
    }
    return false;
  }

  // One draw at the T steps into `out`.
  void draw(Rng& rng, std::vector<double>& out) {
    z_.resize(n_), g_.resize(n_), out.resize(T_);
    for (double& v : z_) v = rng.normal();
    lower_times(l_, n_, z_.data(), g_.data());
    if (n_ == T_) {
      std::copy(g_.begin(), g_.end(), out.begin());
      return;
    }
    const double scale = n_ == 1 || T_ == 1 ? 0 : static_cast<double>(n_ - 1) / static_cast<double>(T_ - 1);
    for (size_t t = 0; t < T_; ++t) {
      const double pos = static_cast<double>(t) * scale;
      const size_t i = std::min(static_cast<size_t>(pos), n_ - 1);
      const double f = pos - static_cast<double>(i);
      out[t] = i + 1 < n_ ? g_[i] + f * (g_[i + 1] - g_[i]) : g_[i];
    }
  }

 private:
  size_t n_ = 0, T_ = 0;
  std::vector<double> x_, l_, z_, g_;
};

// Adds amp * (cos(omega t) g(t) + sin(omega t) h(t)); cos and sin advance by rotation,
// recomputed exactly every 64 steps so the rounding error cannot build up.
void add_modulated(std::span<double> y, double omega, double amp, const std::vector<double>& g,
                   const std::vector<double>& h) {
  const double c1 = std::cos(omega), s1 = std::sin(omega);
  double c = 1, s = 0;
  for (size_t t = 0; t < y.size(); ++t) {
    if (t % 64 == 0) c = std::cos(omega * static_cast<double>(t)), s = std::sin(omega * static_cast<double>(t));
    y[t] += amp * (c * g[t] + s * h[t]);
    const double c_next = c * c1 - s * s1;
    s = s * c1 + c * s1;
    c = c_next;
  }
}

// Adds one path of the term's GP to y; false on a Cholesky failure.
bool add_term(Rng& rng, const Term& term, std::span<double> y) {
  const size_t T = y.size();
  if (term.white > 0) {  // White x k: diagonal, variance noise * k(x, x) (periodic, RBF, RQ = 1)
    for (size_t t = 0; t < T; ++t) {
      const double x = static_cast<double>(t) / static_cast<double>(T);
      y[t] += std::sqrt(term.white * term.constant * term.dots(x, x)) * rng.normal();
    }
    return true;
  }
  const std::vector<Atom> atoms = spectrum(term.periods);
  std::vector<double> g(T), h(T);
  if (!term.smooth()) {  // only periodic and constant factors: the coefficients are scalars
    const double sd = std::sqrt(term.constant);
    for (const Atom& a : atoms) {
      std::fill(g.begin(), g.end(), sd * rng.normal());
      std::fill(h.begin(), h.end(), sd * rng.normal());
      add_modulated(y, a.omega, std::sqrt(a.weight), g, h);
    }
    return true;
  }
  SmoothDraws smooth;
  if (!smooth.prepare(term, T)) return false;
  for (const Atom& a : atoms) {
    smooth.draw(rng, g);
    if (a.omega == 0) {
      for (size_t t = 0; t < T; ++t) y[t] += std::sqrt(a.weight) * g[t];
    } else {
      smooth.draw(rng, h);
      add_modulated(y, a.omega, std::sqrt(a.weight), g, h);
    }
  }
  return true;
}

}  // namespace

void kernel_synth(Rng& rng, std::span<double> y, const Settings&) {
  // KernelSynth redraws the kernel on a linear-algebra error; with the jitter above that
  // practically never happens, and after 10 tries an RBF(0.1) path is drawn.
  for (int attempt = 0; attempt < 10; ++attempt) {
    std::fill(y.begin(), y.end(), 0.0);
    bool ok = true;
    for (const Term& term : draw_kernel(rng)) ok = ok && add_term(rng, term, y);
    if (ok) return;
  }
  Term fallback;
  fallback.multiply({Kind::rbf, 0.1});
  std::fill(y.begin(), y.end(), 0.0);
  add_term(rng, fallback, y);
}

}  // namespace orrery::synth
