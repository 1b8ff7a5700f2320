// Scaling-law fits recover the laws that made synthetic losses: L(N) = E + A N^-alpha and
// Chinchilla's L(N, D) = E + A N^-alpha + B D^-beta, with noise, inside their bootstrap
// intervals, and the law fitted without the largest size predicts it.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "orrery/error.h"
#include "orrery/host/bootstrap.h"
#include "orrery/host/scaling_fit.h"
#include "orrery/host/search/parzen_estimator.h"

namespace scaling = orrery::scaling;

namespace {
// A standard normal draw (Box-Muller) from the search's portable stream.
double normal(orrery::search::Rng& rng) {
  const double u = 1 - rng.uniform(), v = rng.uniform();
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
}
}  // namespace

namespace {
const double kE = 0.35, kA = 12.0, kAlpha = 0.37;  // a size law
// Besiroglu et al.'s refit of Chinchilla (arXiv 2404.10102).
const double kCE = 1.8172, kCA = 482.01, kCB = 2085.43, kCAlpha = 0.3478, kCBeta = 0.3658;

std::vector<scaling::Point> size_points(uint64_t seed, double noise) {
  orrery::search::Rng rng(seed);
  std::vector<scaling::Point> pts;
  for (double n : {1e5, 3e5, 1e6, 3e6, 1e7, 3e7, 1e8})
    for (int s = 0; s < 3; ++s)
      pts.push_back({n, 0, (kE + kA * std::pow(n, -kAlpha)) * std::exp(noise * normal(rng)),
                     std::to_string(n) + "/" + std::to_string(s)});
  return pts;
}

// 8 sizes x 6 budgets over Chinchilla's range.
std::vector<scaling::Point> chinchilla_points(uint64_t seed, double noise) {
  orrery::search::Rng rng(seed);
  std::vector<scaling::Point> pts;
  for (double n = 7e7; n < 2e10; n *= 2.2)
    for (double d = 5e9; d < 1e12; d *= 2.5)
      pts.push_back({n, d, (kCE + kCA * std::pow(n, -kCAlpha) + kCB * std::pow(d, -kCBeta)) * std::exp(noise * normal(rng)), ""});
  return pts;
}

bool covers(const scaling::FitReport& r, const char* name, double truth) {
  return r.intervals.at(name).lo <= truth && truth <= r.intervals.at(name).hi;
}
}  // namespace

TEST_CASE("L(N) = E + A N^-alpha: the fit recovers the law, its interval covers it, the largest size is predicted") {
  for (uint64_t seed = 0; seed < 5; ++seed) {  // little noise: the estimate itself is checked
    const auto law = scaling::fit(size_points(seed, 0.001), false);
    INFO("seed " << seed << ": E " << law.E << " A " << law.A << " alpha " << law.alpha);
    CHECK(law.alpha == Approx(kAlpha).margin(0.01));
    CHECK(law.E == Approx(kE).margin(0.003));
  }
  int alpha_in = 0, e_in = 0;  // 1% noise: the 90% interval covers the truth about 9 times in 10
  for (uint64_t seed = 0; seed < 10; ++seed) {
    const auto r = scaling::fit_with_intervals(size_points(100 + seed, 0.01), false, 60, seed);
    alpha_in += covers(r, "alpha", kAlpha), e_in += covers(r, "E", kE);
    CHECK(r.bootstrap_fits > 55);
    REQUIRE(r.holdout_error);
    CHECK(*r.holdout_error < 0.02);  // the 1e8 model's loss from the six smaller sizes
  }
  CHECK(alpha_in >= 7);
  CHECK(e_in >= 7);
}

TEST_CASE("Chinchilla's approach 3 recovers Besiroglu et al.'s refit, inside its intervals", "[slow]") {
  for (uint64_t seed = 0; seed < 5; ++seed) {  // 0.2% log-noise: exponents within 0.02
    const auto law = scaling::fit(chinchilla_points(seed, 0.002), true);
    INFO("seed " << seed << ": E " << law.E << " alpha " << law.alpha << " beta " << law.beta);
    CHECK(law.alpha == Approx(kCAlpha).margin(0.02));
    CHECK(law.beta == Approx(kCBeta).margin(0.02));
    CHECK(law.E == Approx(kCE).margin(0.03));
  }
  // 1% log-noise over 48 runs identifies the exponents to about +-0.05; the intervals say so.
  int in[3] = {0, 0, 0};
  for (uint64_t seed = 0; seed < 10; ++seed) {
    const auto r = scaling::fit_with_intervals(chinchilla_points(100 + seed, 0.01), true, 40, seed, false);
    in[0] += covers(r, "alpha", kCAlpha), in[1] += covers(r, "beta", kCBeta), in[2] += covers(r, "E", kCE);
  }
  INFO("covered: alpha " << in[0] << ", beta " << in[1] << ", E " << in[2] << " of 10");
  for (int c : in) CHECK(c >= 7);
}

TEST_CASE("a scaling fit refuses points that cannot determine a law") {
  std::vector<scaling::Point> two = {{1e6, 0, 1.0, ""}, {1e7, 0, 0.9, ""}, {1e6, 0, 1.01, ""}};
  CHECK_THROWS_WITH(scaling::fit(two, false), Catch::Contains("at least 3 model sizes"));
  std::vector<scaling::Point> bad = {{1e6, 0, 1.0, ""}, {0, 0, 0.9, ""}, {1e8, 0, 0.8, ""}};
  CHECK_THROWS_WITH(scaling::fit(bad, false), Catch::Contains("params > 0"));
  std::vector<scaling::Point> no_tokens = {{1e6, 0, 1.0, ""}, {1e7, 0, 0.9, ""}, {1e8, 0, 0.8, ""}};
  CHECK_THROWS_WITH(scaling::fit(no_tokens, true), Catch::Contains("tokens > 0"));
  std::vector<scaling::Point> nan = {{1e6, 0, NAN, ""}, {1e7, 0, 0.9, ""}, {1e8, 0, 0.8, ""}};
  CHECK_THROWS_WITH(scaling::fit(nan, false), Catch::Contains("finite"));
}

TEST_CASE("the percentile bootstrap: type-7 quantiles, and a 90% interval of a mean that covers it about 90% of the time") {
  using orrery::bootstrap::quantile;
  CHECK(quantile({1, 2, 3, 4, 5}, 0.5) == 3);
  CHECK(quantile({1, 2, 3, 4, 5}, 0.05) == Approx(1.2));
  CHECK(quantile({7}, 0.95) == 7);
  CHECK(std::isnan(quantile({}, 0.5)));
  // 200 samples of 20 standard normals: the interval of the mean should cover 0 about 90% of
  // the time (the percentile bootstrap runs a little narrow at n = 20: about 88%).
  std::mt19937_64 gen(3);
  std::normal_distribution<double> normal;
  int covered = 0;
  for (int k = 0; k < 200; ++k) {
    std::vector<double> x(20);
    for (double& v : x) v = normal(gen);
    const auto d = orrery::bootstrap::resample(
        x.size(), [&](const std::vector<size_t>& picks) -> std::optional<double> {
          double t = 0;
          for (size_t i : picks) t += x[i];
          return t / static_cast<double>(picks.size());
        }, 400, static_cast<uint64_t>(k));
    CHECK(d.values.size() == 400);
    covered += d.lo < 0 && 0 < d.hi;
  }
  CHECK(covered >= 160);  // 90% of 200 with a binomial sd of 4.2: far below 160 is a broken resampler
  CHECK(covered <= 195);
  CHECK_THROWS(orrery::bootstrap::resample(0, [](const auto&) { return std::optional<double>(1.0); }));
}

TEST_CASE("a bootstrap skips and counts the resamples whose statistic is NaN or infinite") {
  // The statistic is undefined when unit 0 is drawn in every pick (a ratio over nothing).
  const auto d = orrery::bootstrap::resample(
      3, [](const std::vector<size_t>& picks) -> std::optional<double> {
        if (picks[0] == 0) return std::nan("");
        if (picks[0] == 1) return std::numeric_limits<double>::infinity();
        return 1.0;
      }, 300, 7);
  CHECK(d.skipped > 0);
  CHECK(d.values.size() + d.skipped == 300);
  for (double v : d.values) CHECK(v == 1.0);
  CHECK(d.lo == 1.0);
  CHECK(d.hi == 1.0);
}

TEST_CASE("a scaling law needs positive losses, and says when the loss does not fall with size") {
  using orrery::scaling::Point;
  CHECK_THROWS_WITH(orrery::scaling::fit({{1e3, 0, 0.5}, {1e4, 0, 0}, {1e5, 0, 0.3}}, false),
                    Catch::Contains("needs losses above 0") && Catch::Contains("params 10000 has loss 0"));
  const auto rising = orrery::scaling::fit_with_intervals({{1e3, 0, 1.0}, {1e4, 0, 1.1}, {1e5, 0, 1.2}}, false, 5);
  CHECK(rising.law.A == 0);
  CHECK_THAT(rising.warning, Catch::Contains("does not fall with size"));
  const auto falling = orrery::scaling::fit_with_intervals({{1e3, 0, 2.0}, {1e4, 0, 1.5}, {1e5, 0, 1.2}}, false, 5);
  CHECK(falling.warning.empty());
}
