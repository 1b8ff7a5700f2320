// The data plugins `synthetic` and `observability`: reproducible from their seeds alone,
// safe to call from several threads, finite, and each family or kind recognisable by a
// statistic of its own. Seeds are fixed, so every statistic below is computed on the same
// series each run; the thresholds leave wide margins all the same.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <thread>
#include <vector>

#include "orrery/data_source.h"
#include "orrery/error.h"
#include "orrery/host/registry.h"
#include "state_space.h"
#include "../core/src/eval/baselines/ets_model.h"  // fit_ets: the fit that should recover a draw

using orrery::Batch;
using orrery::DataContext;
using orrery::Json;

namespace {

std::unique_ptr<orrery::DataSource> source(const std::string& name, const Json& options = Json::object(),
                                           DataContext ctx = {}) {
  return orrery::Registry::global().create<orrery::PluginKind::data>(name, options, ctx);
}

bool same(const Batch& a, const Batch& b) {
  return at::equal(a.values, b.values) && at::equal(a.observed, b.observed) &&
         at::equal(a.series_ids, b.series_ids) && a.season == b.season;
}

// Every (sample, variate) row of a batch as doubles.
std::vector<std::vector<double>> rows(const Batch& b) {
  const at::Tensor v = b.values.to(at::kDouble).reshape({-1, b.values.size(2)}).contiguous();
  std::vector<std::vector<double>> out;
  for (int64_t i = 0; i < v.size(0); ++i) {
    const double* p = v[i].data_ptr<double>();
    out.emplace_back(p, p + v.size(1));
  }
  return out;
}

bool all_finite(const Batch& b) { return at::isfinite(b.values).all().item<bool>(); }

// Autocorrelation at `lag` of y with its least-squares line removed, normalised over the
// overlapping pairs so long lags are not shrunk towards zero.
double acf(const std::vector<double>& y, size_t lag) {
  const size_t n = y.size();
  const double tm = (n - 1) / 2.0;
  double ym = 0, sxy = 0, sxx = 0;
  for (double v : y) ym += v / n;
  for (size_t t = 0; t < n; ++t) sxy += (t - tm) * (y[t] - ym), sxx += (t - tm) * (t - tm);
  const double slope = sxy / sxx;
  std::vector<double> r(n);
  for (size_t t = 0; t < n; ++t) r[t] = y[t] - ym - slope * (t - tm);
  double var = 0, cov = 0;
  for (double v : r) var += v * v / n;
  for (size_t t = 0; t + lag < n; ++t) cov += r[t] * r[t + lag] / (n - lag);
  return var > 0 ? cov / var : 0;
}

// The period (in steps, 4 to T/2) of the strongest line of the detrended periodogram.
size_t dominant_period(const std::vector<double>& y) {
  const size_t n = y.size();
  std::vector<double> r(n);
  const double tm = (n - 1) / 2.0;
  double ym = 0, sxy = 0, sxx = 0;
  for (double v : y) ym += v / n;
  for (size_t t = 0; t < n; ++t) sxy += (t - tm) * (y[t] - ym), sxx += (t - tm) * (t - tm);
  for (size_t t = 0; t < n; ++t) r[t] = y[t] - ym - sxy / sxx * (t - tm);
  double best = -1;
  size_t period = n / 2;
  for (size_t k = 2; k <= n / 4; ++k) {
    double re = 0, im = 0;
    for (size_t t = 0; t < n; ++t) re += r[t] * std::cos(2 * M_PI * k * t / n), im += r[t] * std::sin(2 * M_PI * k * t / n);
    if (re * re + im * im > best) best = re * re + im * im, period = static_cast<size_t>(std::lround(double(n) / k));
  }
  return period;
}

// A series is periodic here when it correlates clearly more with itself one dominant period
// later than half a period later (a sine: +1 against -1).
bool periodic(const std::vector<double>& y) {
  const size_t p = dominant_period(y);
  return acf(y, p) > 0.3 && acf(y, p) > acf(y, p / 2) + 0.3;
}

template <class F>
double share(const std::vector<std::vector<double>>& series, F&& f) {
  double n = 0;
  for (const auto& y : series) n += f(y) ? 1 : 0;
  return n / series.size();
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

double spread(const std::vector<double>& y) {
  const auto [lo, hi] = std::minmax_element(y.begin(), y.end());
  return *hi - *lo;
}

const std::vector<std::string> kFamilies = {"classic", "kernel_synth", "waves", "steps",        "spikes",
                                            "ou",      "intermittent", "ets",   "arima", "kernel_trend", "trend_breaks"};
const std::vector<std::string> kKinds = {"utilisation", "memory", "rate", "latency", "errors", "counter"};

Batch family_batch(const std::string& family, int64_t length = 1024, uint64_t seed = 7) {
  return source("synthetic", {{"families", {{family, 1}}}, {"missing_prob", 0}})->sample({64, length, seed});
}

Batch kind_batch(const std::string& kind, const Json& extra = Json::object(), int64_t length = 1024) {
  Json o = {{"kinds", {{kind, 1}}}, {"missing_prob", 0}};
  o.update(extra);
  return source("observability", o)->sample({64, length, 11});
}

}  // namespace

TEST_CASE("a batch is a function of its seeds: same seeds, same batch; any other seed, another") {
  for (const std::string name : {"synthetic", "observability"}) {
    INFO(name);
    const Json o = {{"variates", 2}};
    auto s = source(name, o);
    const Batch a = s->sample({8, 256, 5});
    CHECK(same(a, s->sample({8, 256, 5})));
    CHECK(same(a, source(name, o)->sample({8, 256, 5})));
    CHECK_FALSE(same(a, s->sample({8, 256, 6})));
    Json other = o;
    other["seed"] = 1;
    CHECK_FALSE(same(a, source(name, other)->sample({8, 256, 5})));
    CHECK_FALSE(same(a, source(name, o, DataContext{3})->sample({8, 256, 5})));
    // Not the rank: data-parallel ranks draw different batches by their numbers (trainer.h), and
    // batch k must be the same whichever rank draws it.
    DataContext rank1;
    rank1.rank = 1, rank1.world_size = 2;
    CHECK(same(a, source(name, o, rank1)->sample({8, 256, 5})));
  }
}

TEST_CASE("a batch does not depend on what was drawn before it or beside it on other threads") {
  for (const std::string name : {"synthetic", "observability"}) {
    INFO(name);
    const Json o = {{"variates", 2}, {"missing_prob", 0.5}};
    const Batch fresh = source(name, o)->sample({16, 512, 5});
    auto s = source(name, o);
    s->sample({16, 512, 1});
    s->sample({3, 100, 2});
    CHECK(same(fresh, s->sample({16, 512, 5})));

    std::vector<Batch> drawn(4);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < drawn.size(); ++i)
      threads.emplace_back([&, i] { drawn[i] = s->sample({16, 512, 5}); });
    for (auto& t : threads) t.join();
    for (const auto& b : drawn) CHECK(same(fresh, b));
  }
}

TEST_CASE("synthetic: shapes, one series id per variate, finite values, missing stretches") {
  const Batch b = source("synthetic", {{"variates", 3}, {"missing_prob", 0.5}})->sample({32, 700, 3});
  CHECK(b.values.sizes() == at::IntArrayRef({32, 3, 700}));
  CHECK(b.values.scalar_type() == at::kFloat);
  CHECK(b.observed.sizes() == b.values.sizes());
  CHECK(b.observed.scalar_type() == at::kBool);
  CHECK(at::equal(b.series_ids, at::arange(3, at::kLong).repeat({32, 1})));
  CHECK(b.season == 1);
  CHECK(all_finite(b));
  const double seen = b.observed.to(at::kDouble).mean().item<double>();
  CHECK(seen < 0.99);
  CHECK(seen > 0.8);
  // Short and odd lengths too, every family.
  for (int64_t length : {0, 1, 2, 17, 64}) {
    INFO(length);
    CHECK(all_finite(source("synthetic", {{"variates", 2}})->sample({64, length, 9})));
  }
}

TEST_CASE("synthetic: every family can be drawn alone, finite at every length") {
  for (const auto& f : kFamilies)
    for (int64_t length : {2, 96, 2048, 3000}) {
      INFO(f << " at " << length);
      const Batch b = source("synthetic", {{"families", {{f, 1}}}})->sample({16, length, 4});
      CHECK(all_finite(b));
      CHECK(b.values.abs().max().item<double>() < 1e12);  // far from float32 overflow
    }
}

TEST_CASE("synthetic families: each has the statistics of its kind") {
  SECTION("classic: scales from 0.1 to 1e4") {
    std::vector<double> range;
    for (const auto& y : rows(family_batch("classic"))) range.push_back(spread(y));
    CHECK(*std::max_element(range.begin(), range.end()) > 100 * *std::min_element(range.begin(), range.end()));
  }
  SECTION("kernel_synth: mostly smooth Gaussian-process paths, often periodic") {
    const auto series = rows(family_batch("kernel_synth"));
    std::vector<double> lag1;
    for (const auto& y : series) lag1.push_back(acf(y, 1));
    CHECK(median(lag1) > 0.6);
    CHECK(share(series, periodic) > 0.3);
  }
  SECTION("waves: periodic nearly always") {
    CHECK(share(rows(family_batch("waves")), periodic) > 0.8);
  }
  SECTION("steps: level shifts far larger than the step-to-step noise") {
    CHECK(share(rows(family_batch("steps")), [](const std::vector<double>& y) {
            std::vector<double> d;
            for (size_t t = 1; t < y.size(); ++t) d.push_back(std::fabs(y[t] - y[t - 1]));
            return *std::max_element(d.begin(), d.end()) > 20 * median(d);
          }) > 0.9);
  }
  SECTION("spikes: a flat baseline most of the time, far excursions") {
    CHECK(share(rows(family_batch("spikes")), [](const std::vector<double>& y) {
            const double m = median(y), r = spread(y);
            double near = 0;
            for (double v : y) near += std::fabs(v - m) < 0.1 * r ? 1 : 0;
            return r > 0 && near > 0.5 * y.size();
          }) > 0.9);
  }
  SECTION("ou: continuous paths") {
    std::vector<double> lag1;
    for (const auto& y : rows(family_batch("ou"))) lag1.push_back(acf(y, 1));
    CHECK(median(lag1) > 0.8);
  }
  SECTION("intermittent: whole non-negative counts, mostly zero") {
    const Batch b = family_batch("intermittent");
    CHECK((b.values >= 0).all().item<bool>());
    CHECK(at::equal(b.values, b.values.round()));
    CHECK((b.values == 0).to(at::kDouble).mean().item<double>() > 0.5);
  }
  SECTION("the families differ: waves are periodic far more often than ou or intermittent") {
    CHECK(share(rows(family_batch("ou")), periodic) < 0.3);
    CHECK(share(rows(family_batch("intermittent")), periodic) < 0.3);
  }
}

TEST_CASE("synthetic: families is a table of known names; describe() gives the normalised weights") {
  try {
    source("synthetic", {{"families", {{"wavez", 1}}}});
    FAIL("no error");
  } catch (const orrery::Error& e) {
    const std::string m = e.what();
    CHECK(m.find("unknown family 'wavez'") != std::string::npos);
    CHECK(m.find("did you mean 'waves'") != std::string::npos);
    for (const auto& f : kFamilies) CHECK(m.find(f) != std::string::npos);
  }
  CHECK_THROWS_AS(source("synthetic", {{"families", {{"waves", -1}}}}), orrery::Error);
  CHECK_THROWS_AS(source("synthetic", {{"families", {{"waves", 0}}}}), orrery::Error);
  CHECK_THROWS_AS(source("synthetic", {{"periods", Json::array()}}), orrery::Error);

  const Json all = source("synthetic")->describe()["families"];
  REQUIRE(all.size() == kFamilies.size() - 4);  // ets, arima, kernel_trend and trend_breaks are drawn only when named
  CHECK(!all.contains("ets"));
  CHECK(!all.contains("arima"));
  CHECK(!all.contains("kernel_trend"));
  CHECK(!all.contains("trend_breaks"));
  double total = 0;
  for (const auto& f : kFamilies) total += all.value(f, 0.0);
  CHECK(total == Approx(1));
  CHECK(all["kernel_synth"].get<double>() == Approx(3 / 14.2));
  CHECK(all["ou"].get<double>() == Approx(3.2 / 14.2));
  const Json two = source("synthetic", {{"families", {{"waves", 1}, {"ou", 3}}}})->describe()["families"];
  CHECK(two == Json{{"ou", 0.75}, {"waves", 0.25}});
}

TEST_CASE("observability: the variates of a sample are one host, with one series id") {
  const Batch b = source("observability", {{"variates", 4}})->sample({16, 512, 2});
  CHECK(b.values.sizes() == at::IntArrayRef({16, 4, 512}));
  CHECK(at::equal(b.series_ids, at::zeros({16, 4}, at::kLong)));
  CHECK(all_finite(b));
  for (int64_t length : {0, 1, 2, 17}) {
    INFO(length);
    CHECK(all_finite(source("observability", {{"variates", 3}, {"missing_prob", 1}})->sample({32, length, 9})));
  }
  // Driven by one load, a host's CPU and request rate rise together.
  const Batch both = source("observability", {{"variates", 2}, {"kinds", {{"utilisation", 1}, {"rate", 1}}},
                                              {"intervals", {300}}, {"missing_prob", 0}})
                         ->sample({64, 2048, 3});
  const auto series = rows(both);
  std::vector<double> corr;
  for (size_t i = 0; i + 1 < series.size(); i += 2) {
    const auto& x = series[i];
    const auto& y = series[i + 1];
    const double mx = std::accumulate(x.begin(), x.end(), 0.0) / x.size();
    const double my = std::accumulate(y.begin(), y.end(), 0.0) / y.size();
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t t = 0; t < x.size(); ++t)
      sxy += (x[t] - mx) * (y[t] - my), sxx += (x[t] - mx) * (x[t] - mx), syy += (y[t] - my) * (y[t] - my);
    corr.push_back(sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0);
  }
  CHECK(median(corr) > 0.3);
}

TEST_CASE("observability kinds: each has the statistics of its kind") {
  SECTION("utilisation: within 0-100%, saturating at 100 on some hosts") {
    const Batch b = kind_batch("utilisation");
    CHECK(b.values.min().item<double>() >= 0);
    CHECK(b.values.max().item<double>() <= 100);
    CHECK(share(rows(b), [](const std::vector<double>& y) { return *std::max_element(y.begin(), y.end()) == 100; }) > 0.05);
  }
  SECTION("counter: never decreases between resets, at most 3 resets") {
    for (const auto& y : rows(kind_batch("counter"))) {
      int resets = 0;
      for (size_t t = 1; t < y.size(); ++t) resets += y[t] < y[t - 1];
      CHECK(resets <= 3);
    }
  }
  SECTION("rate: non-negative except at the resets of a naive derivative") {
    const Batch b = kind_batch("rate");
    CHECK((b.values < 0).to(at::kDouble).mean().item<double>() < 0.001);
  }
  SECTION("latency, memory: positive") {
    CHECK(kind_batch("latency").values.min().item<double>() > 0);
    CHECK(kind_batch("memory").values.min().item<double>() > 0);
  }
  SECTION("errors: whole counts, often zero") {
    const Batch b = kind_batch("errors");
    CHECK((b.values >= 0).all().item<bool>());
    CHECK(at::equal(b.values, b.values.round()));
    CHECK((b.values == 0).to(at::kDouble).mean().item<double>() > 0.2);
  }
  SECTION("a day is 288 steps at 5 min: series correlate more a day apart than half a day") {
    const auto series = rows(kind_batch("rate", {{"intervals", {300}}}, 2048));
    CHECK(share(series, [](const std::vector<double>& y) { return acf(y, 288) > acf(y, 144); }) > 0.6);
  }
}

TEST_CASE("observability: scrape gaps hit every metric of a host; season is the day when it is known") {
  const Batch b = source("observability", {{"variates", 3}, {"missing_prob", 1}})->sample({16, 512, 8});
  const at::Tensor missing = b.observed.logical_not();
  CHECK(missing.any().item<bool>());
  CHECK(at::equal(b.values.masked_select(missing), at::zeros({missing.sum().item<int64_t>()})));
  // Points missing from all three metrics at once are gaps of the host, most of the missing.
  const double host = missing.all(1).sum().item<double>() * 3, any = missing.sum().item<double>();
  CHECK(host > 0.5 * any);

  CHECK(source("observability")->sample({2, 2048, 1}).season == 1);  // 10 s, 60 s and 5 min mixed
  CHECK(source("observability", {{"intervals", {300}}})->sample({2, 512, 1}).season == 288);
  CHECK(source("observability", {{"intervals", {300}}})->sample({2, 256, 1}).season == 1);
  CHECK(source("observability", {{"intervals", {60}}})->sample({2, 2048, 1}).season == 1440);
}

TEST_CASE("observability: kinds is a table of known names; describe() gives the normalised weights") {
  try {
    source("observability", {{"kinds", {{"latncy", 1}}}});
    FAIL("no error");
  } catch (const orrery::Error& e) {
    const std::string m = e.what();
    CHECK(m.find("unknown kind 'latncy'") != std::string::npos);
    CHECK(m.find("did you mean 'latency'") != std::string::npos);
    for (const auto& k : kKinds) CHECK(m.find(k) != std::string::npos);
  }
  CHECK_THROWS_AS(source("observability", {{"intervals", {0}}}), orrery::Error);
  const Json d = source("observability")->describe();
  REQUIRE(d["kinds"].size() == kKinds.size());
  double total = 0;
  for (const auto& k : kKinds) total += d["kinds"][k].get<double>();
  CHECK(total == Approx(1));
  CHECK(d["intervals"] == Json{10, 60, 300});
}

// Not asserted: the cost of a 64 x 2048 batch of each family and kind on this thread.
TEST_CASE("data sources: milliseconds per 64 x 2048 batch (printed)") {
  auto time = [](const orrery::DataSource& s) {
    s.sample({4, 2048, 99});  // first touch of the code and the allocator
    double best = 1e30;
    for (uint64_t seed = 0; seed < 3; ++seed) {
      const auto t0 = std::chrono::steady_clock::now();
      s.sample({64, 2048, seed});
      best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  for (const auto& f : kFamilies)
    std::printf("[bench] synthetic %-13s %7.1f ms per 64 x 2048 batch\n", f.c_str(),
                time(*source("synthetic", {{"families", {{f, 1}}}})));
  std::printf("[bench] synthetic %-13s %7.1f ms per 64 x 2048 batch\n", "(default mix)", time(*source("synthetic")));
  for (const auto& k : kKinds)
    std::printf("[bench] observability %-11s %7.1f ms per 64 x 2048 batch\n", k.c_str(),
                time(*source("observability", {{"kinds", {{k, 1}}}})));
  std::printf("[bench] observability %-11s %7.1f ms per 64 x 2048 batch\n", "(default)", time(*source("observability")));
  SUCCEED();
}


namespace {
std::vector<double> simulate(const orrery::synth::EtsModel& m, uint64_t seed, int64_t length) {
  orrery::synth::Rng rng(seed);
  std::vector<double> y(static_cast<size_t>(length));
  orrery::synth::simulate_ets(m, rng, y, 2 * m.period + 20);
  return y;
}

// y_t - y_{t-lag}.
std::vector<double> difference(const std::vector<double>& y, size_t lag) {
  std::vector<double> d;
  for (size_t t = lag; t < y.size(); ++t) d.push_back(y[t] - y[t - lag]);
  return d;
}
}  // namespace

TEST_CASE("ets family: fitting the drawn form recovers the drawn smoothing parameters") {
  using namespace orrery;
  namespace bl = orrery::baselines;
  synth::Settings s;
  s.periods = {4, 12};
  s.ets_log_smoothing = GENERATE(false, true);
  INFO("log-uniform smoothing: " << s.ets_log_smoothing);
  std::vector<double> alpha_err, beta_err, gamma_err;
  int forms_seen[3] = {0, 0, 0};
  for (uint64_t seed = 0; alpha_err.size() < 24 && seed < 200; ++seed) {
    synth::Rng rng(seed);
    const synth::EtsModel m = synth::draw_ets_model(rng, s, 800);
    const std::vector<double> y = simulate(m, seed + 1000, 800);
    if (!std::isfinite(y[0])) continue;  // a path the sampler would redraw
    ++forms_seen[m.season];
    const bl::EtsForm form{m.multiplicative_error ? bl::Component::multiplicative : bl::Component::additive,
                           m.trend ? bl::Component::additive : bl::Component::none,
                           m.season == 0 ? bl::Component::none
                                         : m.season == 1 ? bl::Component::additive : bl::Component::multiplicative,
                           m.damped};
    const auto fit = bl::fit_ets(y, m.period, form);
    REQUIRE(fit);
    alpha_err.push_back(std::fabs(fit->params.alpha - m.alpha));
    if (m.trend) beta_err.push_back(std::fabs(fit->params.beta - m.beta));
    if (m.season) gamma_err.push_back(std::fabs(fit->params.gamma - m.gamma));
  }
  REQUIRE(alpha_err.size() == 24);
  CHECK(forms_seen[0] > 0);
  CHECK(forms_seen[1] > 0);
  CHECK(forms_seen[2] > 0);
  INFO("median |error|: alpha " << median(alpha_err) << ", beta " << median(beta_err) << ", gamma " << median(gamma_err));
  CHECK(median(alpha_err) < 0.05);
  CHECK(median(beta_err) < 0.05);
  CHECK(median(gamma_err) < 0.05);
}

TEST_CASE("ets family: log-uniform smoothing draws half its states slow, uniform few") {
  orrery::synth::Settings s;
  s.periods = {12};
  for (bool log : {false, true}) {
    s.ets_log_smoothing = log;
    int slow_level = 0, slow_season = 0, seasons = 0;
    const int n = 4000;
    for (uint64_t seed = 0; seed < n; ++seed) {
      orrery::synth::Rng rng(seed);
      const auto m = orrery::synth::draw_ets_model(rng, s, 200);
      CHECK(m.alpha >= (log ? 0.005 : 0.05));
      CHECK(m.alpha <= 0.8);
      CHECK(m.beta <= 0.5 * m.alpha);
      CHECK(m.gamma <= 0.5 * (1 - m.alpha));
      slow_level += m.alpha < 0.1;
      if (m.season) ++seasons, slow_season += m.gamma < 0.05 * (1 - m.alpha);
    }
    // alpha below 0.1: log-uniform on [0.005, 0.8] ln(20)/ln(160) = 0.59, uniform on [0.05, 0.8]
    // 0.067; gamma's share below 0.05: ln(25)/ln(250) = 0.58, against 0.0625.
    const double level = static_cast<double>(slow_level) / n, season = static_cast<double>(slow_season) / seasons;
    INFO("log-uniform " << log << ": slow levels " << level << ", slow seasons " << season);
    CHECK(level == Approx(log ? 0.590 : 0.067).margin(0.03));
    CHECK(season == Approx(log ? 0.583 : 0.0625).margin(0.04));
  }
}

TEST_CASE("ets family: ets_max_drift bounds the trend's drift and spreads it log-uniform") {
  orrery::synth::Settings s;
  s.periods = {12};
  for (double max_drift : {0.01, 0.05}) {
    s.ets_max_drift = max_drift;
    int trends = 0, steep = 0;
    for (uint64_t seed = 0; seed < 4000; ++seed) {
      orrery::synth::Rng rng(seed);
      const auto m = orrery::synth::draw_ets_model(rng, s, 200);
      if (!m.trend) continue;
      const double drift = std::fabs(m.slope) / m.level;
      CHECK(drift >= 5e-5);
      CHECK(drift <= max_drift);
      ++trends, steep += drift > 0.002;
    }
    // Above 0.002 per step: ln(max / 0.002) / ln(max / 5e-5) = 0.30 for 0.01, 0.47 for 0.05.
    const double share = static_cast<double>(steep) / trends;
    INFO("max drift " << max_drift << ": share above 0.002 " << share);
    CHECK(share == Approx(max_drift == 0.01 ? 0.304 : 0.466).margin(0.03));
  }
}

TEST_CASE("ets family: a multiplicative model's path stays positive; an additive one centres its season") {
  orrery::synth::EtsModel m;
  m.multiplicative_error = true, m.season = 2, m.period = 12, m.alpha = 0.3, m.gamma = 0.1, m.sigma = 0.05;
  m.seasonal.assign(12, 1.0);
  for (int j = 0; j < 12; ++j) m.seasonal[static_cast<size_t>(j)] = 1 + 0.3 * std::sin(2 * M_PI * j / 12);
  const auto y = simulate(m, 5, 2000);
  CHECK(*std::min_element(y.begin(), y.end()) > 0);
  orrery::synth::Settings s;
  s.periods = {7};
  for (uint64_t seed = 0; seed < 50; ++seed) {
    orrery::synth::Rng rng(seed);
    const auto d = orrery::synth::draw_ets_model(rng, s, 100);
    if (d.season != 1) continue;
    double sum = 0;
    for (double v : d.seasonal) sum += v;
    CHECK(std::fabs(sum) < 1e-9 * d.level);
  }
}

TEST_CASE("arima family: the airline model's differences have its MA autocorrelations; a random walk its drift") {
  using namespace orrery::synth;
  ArimaModel m;
  m.D = 1, m.period = 12, m.theta = -0.4, m.seasonal_theta = -0.6;
  std::vector<double> y(20000);
  Rng rng(3);
  simulate_arima(m, rng, y, 50);
  const auto w = difference(difference(y, 1), 12);
  // (1 + theta B)(1 + Theta B^12): lag 1 theta / (1 + theta^2), lag 12 Theta / (1 + Theta^2).
  CHECK(acf(w, 1) == Approx(-0.4 / 1.16).margin(0.03));
  CHECK(acf(w, 12) == Approx(-0.6 / 1.36).margin(0.03));
  CHECK(std::fabs(acf(w, 5)) < 0.03);
  ArimaModel walk;
  walk.drift = 0.3;
  Rng rng2(4);
  simulate_arima(walk, rng2, y, 0);
  const auto steps = difference(y, 1);
  double mean = 0;
  for (double v : steps) mean += v / static_cast<double>(steps.size());
  CHECK(mean == Approx(0.3).margin(4 / std::sqrt(20000.0)));  // 4 standard errors of sigma 1
}

TEST_CASE("kernel_trend: KernelSynth paths that trend across the series far more often than KernelSynth's") {
  auto trend_share = [](const std::string& family) {
    return share(rows(family_batch(family)), [](const std::vector<double>& y) {
      // |correlation with time| above 0.5: a trend that shapes the whole path.
      const double n = static_cast<double>(y.size());
      double st = 0, sy = 0, stt = 0, syy = 0, sty = 0;
      for (size_t t = 0; t < y.size(); ++t)
        st += t, sy += y[t], stt += double(t) * t, syy += y[t] * y[t], sty += t * y[t];
      const double cov = sty / n - st / n * sy / n, vt = stt / n - st / n * st / n, vy = syy / n - sy / n * sy / n;
      return vy > 0 && std::fabs(cov) / std::sqrt(vt * vy) > 0.5;
    });
  };
  const double trend = trend_share("kernel_trend"), plain = trend_share("kernel_synth");
  INFO("kernel_trend " << trend << ", kernel_synth " << plain);
  CHECK(trend > 2 * plain);
  CHECK(trend > plain + 0.2);
}

TEST_CASE("trend_breaks: trends that show in the series and do not go on as they were") {
  // Least-squares slope and |correlation with time| of y[from, from + n).
  auto line = [](const std::vector<double>& y, size_t from, size_t n) {
    double st = 0, sy = 0, stt = 0, syy = 0, sty = 0;
    for (size_t i = 0; i < n; ++i) {
      const double t = double(i), v = y[from + i];
      st += t, sy += v, stt += t * t, syy += v * v, sty += t * v;
    }
    const double N = double(n), cov = sty / N - st / N * sy / N, vt = stt / N - st / N * st / N,
                 vy = syy / N - sy / N * sy / N;
    return std::pair{cov / vt, vy > 0 ? std::fabs(cov) / std::sqrt(vt * vy) : 0.0};
  };
  std::vector<std::vector<double>> series;  // 256 series: four batches
  for (uint64_t seed : {7, 8, 9, 10})
    for (auto& y : rows(family_batch("trend_breaks", 512, seed))) series.push_back(std::move(y));
  const size_t q = 128;
  // Low noise: the first quarter's trend is what the series shows.
  const double trending = share(series, [&](const std::vector<double>& y) { return line(y, 0, q).second > 0.5; });
  // The slope of the last quarter differs from the first's by over half the larger of the two:
  // faded, stopped, turned or steepened.
  const double changed = share(series, [&](const std::vector<double>& y) {
    const double a = line(y, 0, q).first, b = line(y, y.size() - q, q).first;
    return std::fabs(b - a) > 0.5 * std::max(std::fabs(a), std::fabs(b));
  });
  // Breaks, not damping alone: both quarters trend clearly, and in opposite directions (a fading
  // slope keeps its sign).
  const double reversed = share(series, [&](const std::vector<double>& y) {
    const auto [a, ra] = line(y, 0, q);
    const auto [b, rb] = line(y, y.size() - q, q);
    return ra > 0.5 && rb > 0.5 && a * b < 0;
  });
  INFO("trending " << trending << ", changed " << changed << ", reversed " << reversed);
  CHECK(trending > 0.5);
  CHECK(changed > 0.5);
  CHECK(reversed > 0.05);
}

TEST_CASE("synthetic short_prob: short series of their own, 24 to 500 steps, at the end of the sample") {
  const int64_t T = 1024;
  const Batch b = source("synthetic", {{"short_prob", 1}, {"missing_prob", 0}, {"variates", 2}})->sample({64, T, 3});
  std::vector<int64_t> lengths;
  for (int64_t i = 0; i < 64; ++i) {
    const at::Tensor seen = b.observed[i];
    const int64_t L = seen[0].sum().item<int64_t>();
    CHECK(at::equal(seen[1], seen[0]));  // one length for every variate of a sample
    CHECK(L >= 24);
    CHECK(L <= 500);
    CHECK(seen[0].narrow(0, T - L, L).all().item<bool>());  // observed at the end, all of it
    CHECK((b.values[i].narrow(1, 0, T - L) == 0).all().item<bool>());
    lengths.push_back(L);
  }
  // Log-uniform over [24, 500]: the median near sqrt(24 * 500) = 110.
  CHECK(median(std::vector<double>(lengths.begin(), lengths.end())) == Approx(110).margin(50));
  // Shorter than 24 steps, a sample is the whole length.
  const Batch tiny = source("synthetic", {{"short_prob", 1}})->sample({4, 16, 3});
  CHECK(tiny.observed.sum().item<int64_t>() > 4 * 16 * 8 / 10);
}

TEST_CASE("synthetic: the default mix draws what it drew before the opt-in families and short_prob") {
  // Recorded at e3e4990 (before ets, arima, kernel_trend and short_prob): which steps are
  // missing comes from the generator's integers alone, exactly; the values through libm, to
  // within a relative 1e-6 whatever its variant.
  const Batch b = source("synthetic", {{"variates", 2}})->sample({64, 512, 7});
  const auto v = b.values.to(at::kDouble).contiguous();
  const auto seen = b.observed.contiguous();
  const double* x = v.data_ptr<double>();
  const bool* s = seen.data_ptr<bool>();
  double sum = 0;
  int64_t missing = 0;
  for (int64_t k = 1; k <= v.numel(); ++k) {
    if (!s[k - 1]) ++missing;
    else sum += x[k - 1] * static_cast<double>(k % 97 + 1);
  }
  CHECK(missing == 731);
  CHECK(sum == Approx(-3175239555.2747293).epsilon(1e-6));
}
