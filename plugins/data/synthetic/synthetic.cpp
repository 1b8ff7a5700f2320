// A seeded generator of plausible series: level + trend (with an optional kink) + up to three
// seasonal components (harmonic shapes, amplitude that may grow with the level, as in airline
// data) + AR(1) noise + level shifts + rare spikes, on scales from 0.1 to 1e4, with missing
// stretches in the observed mask. Every draw comes from one std::mt19937_64 seeded by
// (seed, rank), so runs repeat exactly and ranks see different data.
#include <ATen/ATen.h>

#include <cmath>
#include <random>

#include "orrery/plugin.h"

namespace {
using namespace orrery;

class Synthetic final : public DataSource {
 public:
  Synthetic(const Json& o, const DataContext& ctx)
      : variates_(o["variates"]), missing_prob_(o["missing_prob"]), shift_rate_(o["shift_rate"]),
        noise_max_(o["noise_max"]), rng_(o["seed"].get<uint64_t>() * 1000003u + ctx.seed * 7919u +
                                         static_cast<uint64_t>(ctx.rank)) {
    for (double p : o["periods"].get<std::vector<double>>()) periods_.push_back(p);
  }

  Batch sample(int64_t batch, int64_t length) override {
    at::Tensor values = at::empty({batch, variates_, length}, at::kFloat);
    at::Tensor observed = at::ones({batch, variates_, length}, at::kBool);
    auto v = values.accessor<float, 3>();
    auto m = observed.accessor<bool, 3>();
    std::vector<double> y(length);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t c = 0; c < variates_; ++c) {
        series(y);
        for (int64_t t = 0; t < length; ++t) v[b][c][t] = static_cast<float>(y[t]);
        if (uniform(0, 1) < missing_prob_) {  // one or two missing stretches
          const int gaps = 1 + (uniform(0, 1) < 0.5);
          for (int g = 0; g < gaps; ++g) {
            const int64_t len = 1 + static_cast<int64_t>(uniform(0, 0.15) * length);
            const int64_t at = static_cast<int64_t>(uniform(0, 1) * length);
            for (int64_t t = at; t < std::min(length, at + len); ++t) m[b][c][t] = false;
          }
        }
      }
    Batch out;
    out.values = values;
    out.observed = observed;
    out.series_ids = at::arange(variates_, at::kLong).repeat({batch, 1});
    return out;
  }

 private:
  double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng_); }
  double normal() { return std::normal_distribution<double>(0, 1)(rng_); }
  double log_uniform(double a, double b) { return std::exp(uniform(std::log(a), std::log(b))); }

  void series(std::vector<double>& y) {
    const int64_t T = static_cast<int64_t>(y.size());
    const double unit = log_uniform(0.1, 1e4);       // the series' natural scale
    const double level = normal() * unit * uniform(0, 5);
    const double slope = normal() * uniform(0, 3) * unit / T;
    const int64_t kink = static_cast<int64_t>(uniform(0.2, 0.9) * T);
    const double slope2 = uniform(0, 1) < 0.3 ? normal() * uniform(0, 3) * unit / T : slope;
    const bool growing = uniform(0, 1) < 0.3;        // seasonal amplitude grows with the trend

    struct Season { double period, phase, amp; double h[3]; };
    std::vector<Season> seasons;
    const int count = static_cast<int>(uniform(0, 1) < 0.15 ? 0 : 1 + uniform(0, 3));
    for (int k = 0; k < std::min(count, 3); ++k) {
      Season s;
      s.period = uniform(0, 1) < 0.7 ? periods_[static_cast<size_t>(uniform(0, periods_.size()))]
                                     : log_uniform(3, std::max(4.0, T / 3.0));
      s.phase = uniform(0, 2 * M_PI);
      s.amp = unit * std::exp(0.7 * normal());
      for (double& h : s.h) h = normal() / (1 + (&h - s.h));
      seasons.push_back(s);
    }
    const double noise_sd = unit * log_uniform(0.01, noise_max_);
    const double phi = uniform(0, 0.9);
    const double shift_p = shift_rate_ / T;
    double ar = 0, shift = 0;
    for (int64_t t = 0; t < T; ++t) {
      const double trend = t < kink ? slope * t : slope * kink + slope2 * (t - kink);
      const double grow = growing ? std::max(0.2, 1 + 2 * (trend + level) / (unit * 5 + std::fabs(level))) : 1.0;
      double s = 0;
      for (const auto& z : seasons)
        for (int h = 0; h < 3; ++h)
          s += z.amp * z.h[h] * std::sin(2 * M_PI * (h + 1) * t / z.period + z.phase);
      ar = phi * ar + noise_sd * normal();
      if (uniform(0, 1) < shift_p) shift += normal() * unit * 2;
      double spike = uniform(0, 1) < 0.002 ? normal() * unit * 5 : 0;
      y[t] = level + trend + s * grow + ar + shift + spike;
    }
  }

  int64_t variates_;
  double missing_prob_, shift_rate_, noise_max_;
  std::vector<double> periods_;
  std::mt19937_64 rng_;
};

OptionSchema schema() {
  return OptionSchema{}
      .integer("seed", 0, "generator seed (combined with the run seed and the rank)", 0)
      .integer("variates", 1, "variates per sample (independent series)", 1, 1024)
      .number_list("periods", {4, 7, 12, 24, 52, 96, 168},
                   "seasonal periods drawn 70% of the time (otherwise log-uniform)")
      .number("missing_prob", 0.1, "probability that a series has missing stretches", 0.0, 1.0)
      .number("shift_rate", 0.3, "expected level shifts per series", 0.0)
      .number("noise_max", 0.5, "largest noise std relative to the series scale", 0.01);
}

std::unique_ptr<DataSource> make(const Json& o, const DataContext& ctx) {
  return std::make_unique<Synthetic>(o, ctx);
}

}  // namespace

ORRERY_PLUGIN(data, "synthetic", "0.1.0",
              "Seeded synthetic series: trend, seasonalities, AR noise, level shifts, missing values",
              schema, make)
