#include "ets_model.h"

#include <cmath>

namespace orrery::baselines {
namespace {
// statsforecast's guards: a near-zero divisor becomes a huge ratio rather than a division by 0.
constexpr double kTiny = 1e-10, kHuge = 1e10;

double ratio(double a, double b) { return std::fabs(b) < kTiny ? kHuge : a / b; }
}  // namespace

std::string EtsForm::name() const {
  auto letter = [](Component c) { return c == Component::none ? "N" : c == Component::additive ? "A" : "M"; };
  return std::string(letter(error)) + letter(trend) + (damped ? "d" : "") + letter(season);
}

EtsRun ets_run(const std::vector<double>& y, const EtsForm& form, const EtsParams& p, EtsState x) {
  const bool trend = form.trend != Component::none;
  const double phi = form.damped ? p.phi : 1.0;
  const size_t m = x.season.size();
  size_t head = 0;  // the season is a ring: x.season[head] is next
  double sse = 0, log_f = 0;
  for (double yt : y) {
    const double q = trend ? x.level + phi * x.slope : x.level;
    double f = q, adjusted = yt;
    if (form.season == Component::additive) f = q + x.season[head], adjusted = yt - x.season[head];
    if (form.season == Component::multiplicative) f = q * x.season[head], adjusted = ratio(yt, x.season[head]);
    const double e = form.error == Component::additive
                         ? yt - f
                         : (yt - f) / (std::fabs(f) < kTiny ? f + kTiny : f);
    sse += e * e;
    log_f += std::log(std::fabs(f) > 0 ? std::fabs(f) : 1e-8);
    const double level = q + p.alpha * (adjusted - q);
    if (trend) x.slope = phi * x.slope + (p.beta / p.alpha) * (level - x.level - phi * x.slope);
    if (m > 0) {
      double& s = x.season[head];
      const double target = form.season == Component::additive ? yt - q : ratio(yt, q);
      s += p.gamma * (target - s);
      head = (head + 1) % m;
    }
    x.level = level;
  }
  // Rotate the ring so that season[0] is the next step's again.
  std::vector<double> season(m);
  for (size_t j = 0; j < m; ++j) season[j] = x.season[(head + j) % m];
  x.season = std::move(season);
  const double n = static_cast<double>(y.size());
  double lik = n * std::log(sse > 0 ? sse : sse + 1e-8);
  if (form.error == Component::multiplicative) lik += 2 * log_f;
  return {lik, sse, std::move(x)};
}

std::vector<double> ets_point(const EtsForm& form, const EtsParams& p, const EtsState& x,
                              int64_t horizon) {
  const double phi = form.damped ? p.phi : 1.0;
  std::vector<double> f(horizon);
  double phi_sum = phi;  // phi + phi^2 + ... + phi^h multiplies the slope at step h
  for (int64_t h = 0; h < horizon; ++h) {
    double v = form.trend == Component::none ? x.level : x.level + phi_sum * x.slope;
    if (!x.season.empty()) {
      const double s = x.season[h % x.season.size()];
      v = form.season == Component::additive ? v + s : v * s;
    }
    f[h] = v;
    phi_sum += std::fabs(phi - 1.0) < kTiny ? 1.0 : std::pow(phi, static_cast<double>(h + 1));
  }
  return f;
}

}  // namespace orrery::baselines
