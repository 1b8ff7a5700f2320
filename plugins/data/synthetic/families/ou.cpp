// Mean-reverting and wandering paths: TempoPFN's regime-switching Ornstein-Uhlenbeck process
// (80%) and random walks (20%, standing in for TempoPFN's volatility-driven audio generators).
#include <algorithm>
#include <cmath>

#include "../family.h"
#include "../noise.h"

namespace orrery::synth {

namespace {

// A slow change of a parameter over the series, g(u) with u = t / T in [0, 1) and t in steps
// where TempoPFN gives slopes per step. Types and weights are TempoPFN's; the forms of the
// exponential, logistic, sinusoidal and polynomial types are ours (their sizes are not in
// the reference), kept to a few units like the linear one. 0-3 smoothed structural breaks of
// size U(1, 5) (random sign) come on top.
class Drift {
 public:
  Drift(Rng& rng, size_t T) : T_(static_cast<double>(T)) {
    static constexpr double kWeights[] = {0.3, 0.15, 0.15, 0.1, 0.15, 0.1, 0.05};
    type_ = rng.pick(kWeights);
    a_ = rng.uniform(-0.01, 0.01), first_slope_ = rng.uniform(-0.02, 0.02);
    b_ = rng.uniform(-3, 3), c_ = rng.uniform(0.2, 0.8);
    amp_ = rng.uniform(0.5, 3) * (rng.chance(0.5) ? 1 : -1);
    for (double& k : poly_) k = rng.normal(0, 1);
    for (int64_t i = rng.integer(2, 5) - 1; i > 0; --i) knots_.push_back({rng.uniform(0, 1), rng.uniform(-0.02, 0.02)});
    std::sort(knots_.begin(), knots_.end());
    for (int64_t i = rng.integer(0, 3); i > 0; --i)
      breaks_.push_back({rng.uniform(0, T_), rng.uniform(1, 5) * (rng.chance(0.5) ? 1 : -1), rng.uniform(2, 30)});
  }

  double at(double t) const {
    const double u = t / T_;
    double g = 0;
    switch (type_) {
      case 0: break;                                                          // none
      case 1: g = a_ * t; break;                                              // linear
      case 2: g = amp_ * (std::exp(b_ * u) - 1) / std::max(1.0, std::exp(std::fabs(b_)) - 1); break;
      case 3: g = amp_ / (1 + std::exp(-10 * b_ * (u - c_))); break;          // logistic
      case 4: g = amp_ * std::sin(2 * M_PI * (1 + std::fabs(b_)) * u + c_ * 2 * M_PI); break;
      case 5: {  // piecewise linear: first_slope_ up to the first knot, then each knot's slope
        double start = 0, slope = first_slope_;
        for (const auto& [knot, next_slope] : knots_) {
          const double k = knot * T_;
          if (t <= k) break;
          g += slope * (k - start);
          start = k;
          slope = next_slope;
        }
        g += slope * (t - start);
        break;
      }
      default: g = amp_ * (poly_[0] * u + poly_[1] * u * u + poly_[2] * u * u * u) / 3;  // polynomial
    }
    for (const auto& [where, size, width] : breaks_) g += size / (1 + std::exp(-(t - where) / width));
    return g;
  }

 private:
  struct Break { double where, size, width; };
  double T_;
  size_t type_;
  double a_, first_slope_, b_, c_, amp_, poly_[3];
  std::vector<std::pair<double, double>> knots_;  // (position in [0, 1), slope after it)
  std::vector<Break> breaks_;
};

// 1-3 sines with periods from {7, 30, 90, 365.25, 182.625} (+-5%) and amplitudes U(0.5, 3).
struct Seasonal {
  explicit Seasonal(Rng& rng) {
    static constexpr double kPeriods[] = {7, 30, 90, 365.25, 182.625};
    for (int64_t i = rng.integer(1, 3); i > 0; --i)
      parts.push_back({kPeriods[rng.integer(0, 4)] * rng.uniform(0.95, 1.05), rng.uniform(0.5, 3),
                       rng.uniform(0, 2 * M_PI)});
  }
  double at(double t) const {
    double s = 0;
    for (const auto& p : parts) s += p.amp * std::sin(2 * M_PI * t / p.period + p.phase);
    return s;
  }
  double peak() const {
    double s = 0;
    for (const auto& p : parts) s += p.amp;
    return s;
  }
  struct Part { double period, amp, phase; };
  std::vector<Part> parts;
};

// Euler-Maruyama with dt = 0.01 of x' = theta (mu - x) + sigma W', switching between a fast
// low regime and a slow, noisier high one by a two-state Markov chain. Time-varying mu (70%),
// theta (20%) and sigma (30%) follow a Drift; mu (60%) and sigma (30%) may be seasonal. theta
// and sigma must stay positive, so their drift and season act on the log scale (ours).
void regime_ou(Rng& rng, std::span<double> y) {
  const double dt = 0.01;
  struct Regime { double theta, mu, sigma, stay; };
  Regime regimes[2] = {
      {rng.uniform(1, 5), rng.normal(-2, 1), rng.log_normal(std::log(0.3), 0.3), rng.uniform(0.85, 0.999)},
      {rng.uniform(0.05, 0.5), rng.normal(2, 1), rng.log_normal(std::log(1.5), 0.5), rng.uniform(0.85, 0.999)}};
  const size_t T = y.size();
  const bool mu_drift = rng.chance(0.7), theta_drift = rng.chance(0.2), sigma_drift = rng.chance(0.3);
  const bool mu_season = rng.chance(0.6), sigma_season = rng.chance(0.3);
  const Drift mu_g(rng, T), theta_g(rng, T), sigma_g(rng, T);
  const Seasonal mu_s(rng), sigma_s(rng);

  int state = rng.chance(0.5) ? 1 : 0;
  double x = rng.normal(0, 2);
  for (size_t i = 0; i < T; ++i) {
    const double t = static_cast<double>(i);
    const Regime& r = regimes[state];
    double mu = r.mu, theta = r.theta, sigma = r.sigma;
    if (mu_drift) mu += mu_g.at(t);
    if (mu_season) mu += mu_s.at(t);
    if (theta_drift) theta *= std::exp(std::clamp(0.3 * theta_g.at(t), -2.0, 2.0));
    if (sigma_drift) sigma *= std::exp(std::clamp(0.3 * sigma_g.at(t), -2.0, 2.0));
    if (sigma_season) sigma *= std::exp(0.5 * sigma_s.at(t) / sigma_s.peak());
    y[i] = x;
    x += theta * (mu - x) * dt + sigma * std::sqrt(dt) * rng.normal();
    if (!rng.chance(r.stay)) state = 1 - state;
  }
  const double level = rng.uniform(-100, 100), scale = rng.uniform(0.1, 50);
  for (double& v : y) v = level + scale * v;
  const double noise = rng.uniform(0, 0.1) * scale;
  if (noise > 0) add_noise(rng, y, noise);
}

// Random walks: Gaussian steps with a drift (40%), Student-t steps (30%), or steps whose
// volatility clusters (30%, a log-volatility AR(1) as in asset returns); half are
// exponentiated into a positive, price-like path.
void random_walk(Rng& rng, std::span<double> y) {
  const double u = rng.uniform();
  const double drift = rng.normal(0, 0.05), df = rng.uniform(2.5, 6);
  const double phi = rng.uniform(0.9, 0.995), vol = rng.uniform(0.2, 0.8);
  double x = 0, h = 0;
  for (double& v : y) {
    v = x;
    double step;
    if (u < 0.4) {
      step = drift + rng.normal();
    } else if (u < 0.7) {
      step = drift + std::clamp(rng.student_t(df), -50.0, 50.0);
    } else {
      h = phi * h + vol * std::sqrt(1 - phi * phi) * rng.normal();
      step = drift + std::exp(h) * rng.normal();
    }
    x += step;
  }
  if (rng.chance(0.5)) {  // a price: log-returns of sd 0.5-3% a step
    const double sd = rng.uniform(0.005, 0.03), start = rng.log_uniform(1, 1000);
    for (double& v : y) v = start * std::exp(std::clamp(sd * v, -8.0, 8.0));  // within 3000x
  } else {
    const double level = rng.uniform(-100, 100);
    for (double& v : y) v += level;
  }
}

}  // namespace

void ou(Rng& rng, std::span<double> y, const Settings&) {
  if (rng.chance(0.8)) regime_ou(rng, y);
  else random_walk(rng, y);
}

}  // namespace orrery::synth
