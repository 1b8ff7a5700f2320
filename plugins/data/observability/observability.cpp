// Metric-like series as a monitoring system records them: one host or service per sample,
// sampled every 10 s, 60 s or 5 min (option `intervals`), its metrics driven by one latent
// load with daily and weekly cycles and bursts (load.cpp). With variates > 1 the variates
// of a sample are related metrics of that host (each of a kind drawn by weight) and share one
// series id. Scrape gaps (the whole host missed) and dropped points mark the observed mask.
//
// Default kind weights follow BOOM's metric types (2,807 Datadog series: gauge 1,296, rate
// 954, distribution 466, count 91): gauges split as utilisation 0.26 and memory 0.2, rate
// 0.34, distribution as latency 0.17, count as errors 0.03; raw monotone counters, which
// reach Datadog as rates, get 0.03 of our own so a model sees them too.
//
// Randomness as in the synthetic source: each sample draws from an Rng seeded by (option
// seed, run seed, batch seed, sample), each variate from one of its own. Not the rank: the
// ranks of a data-parallel run draw different batches by their numbers.
#include <ATen/ATen.h>

#include <array>
#include <cmath>
#include <string>

#include "metric.h"
#include "../common/named_weights.h"
#include "orrery/error.h"
#include "orrery/plugin.h"

namespace {
using namespace orrery;
using obs::Kind;
using obs::Rng;

constexpr std::array<Kind, 6> kKinds{{
    {"utilisation", 0.26, "CPU or disk utilisation in %, saturating at 100", obs::utilisation},
    {"memory", 0.2, "memory in bytes: load, leaks and restarts, GC sawtooth", obs::memory},
    {"rate", 0.34, "per-second rate of a counter (reset-aware, or the naive derivative)", obs::rate},
    {"latency", 0.17, "a latency percentile (p50/p90/p95/p99) in ms, heavy-tailed", obs::latency},
    {"errors", 0.03, "errors counted per interval, mostly zero, incidents", obs::errors},
    {"counter", 0.03, "a monotone counter with resets", obs::counter},
}};

// The kinds and their default weights, as the `kinds` option reads them.
data::NamedParts kind_parts() {
  data::NamedParts p{"data plugin 'observability'", "kinds", "kind", {}, {}};
  for (const auto& x : kKinds) p.names.emplace_back(x.name), p.defaults.push_back(x.weight);
  return p;
}

class Observability final : public DataSource {
 public:
  Observability(const Json& o, const DataContext& ctx)
      : variates_(o["variates"]), missing_prob_(o["missing_prob"]),
        intervals_(o["intervals"].get<std::vector<double>>()),
        weights_(kind_parts().weights(o["kinds"])),
        // Not the rank: the ranks of a data-parallel run draw different batches by their
        // numbers (trainer.h), so a batch is the same whoever draws it.
        base_(mix_seed(mix_seed(o["seed"].get<uint64_t>(), ctx.seed), 0)) {
    if (intervals_.empty()) throw Error("data plugin 'observability': option 'intervals' must not be empty");
    for (double s : intervals_)
      if (!(s >= 1 && s <= 86400))
        throw Error("data plugin 'observability': every interval must be 1 to 86400 seconds, got " +
                    std::to_string(s));
  }

  Batch sample(const SampleRequest& r) const override {
    const int64_t B = r.batch, V = variates_, T = r.length;
    at::Tensor values = at::empty({B, V, T}, at::kFloat);
    at::Tensor observed = at::ones({B, V, T}, at::kBool);
    float* out = values.data_ptr<float>();
    bool* seen = observed.data_ptr<bool>();
    std::vector<double> y(static_cast<size_t>(T));
    std::vector<bool> gap(static_cast<size_t>(T));
    const uint64_t batch_seed = mix_seed(base_, r.seed);
    for (int64_t b = 0; b < B; ++b) {
      const uint64_t sample_seed = mix_seed(batch_seed, static_cast<uint64_t>(b));
      Rng rng(mix_seed(sample_seed, 0));
      const double interval = intervals_[rng.index(intervals_.size())];
      const obs::Host host = obs::make_host(rng, interval, static_cast<size_t>(T));
      scrape_gaps(rng, gap);
      for (int64_t c = 0; c < V; ++c) {
        Rng own(mix_seed(sample_seed, static_cast<uint64_t>(c) + 1));
        kKinds[own.pick(weights_)].generate(own, host, y);
        // Points this metric alone lost (a dropped sample), 0.5% of them when the host has gaps.
        const double drop = missing_prob_ > 0 && own.chance(missing_prob_) ? 0.005 : 0;
        const int64_t row = (b * V + c) * T;
        for (int64_t t = 0; t < T; ++t) {
          const bool missing = gap[static_cast<size_t>(t)] || (drop > 0 && own.chance(drop));
          // A monitoring system has no value for a missed scrape: 0, as a data loader fills it.
          out[row + t] = missing ? 0.0f : static_cast<float>(y[static_cast<size_t>(t)]);
          seen[row + t] = !missing;
        }
      }
    }
    Batch batch;
    batch.values = values;
    batch.observed = observed;
    batch.series_ids = at::zeros({B, V}, at::kLong);  // the variates of a sample: one host
    // Batch.season is one number for the whole batch, and samples drawn at different
    // intervals have different days (8640, 1440, 288 steps): a wrong season would mislead
    // whatever uses it (seasonal baselines, MASE scaling). So the day is given only when every
    // sample has the same interval (a single entry in `intervals`) and a day fits in the series.
    const double day = 86400 / intervals_[0];
    bool one_interval = true;
    for (double s : intervals_) one_interval = one_interval && s == intervals_[0];
    if (one_interval && day == std::floor(day) && day <= static_cast<double>(T))
      batch.season = static_cast<int64_t>(day);
    return batch;
  }

  Json describe() const override {
    double total = 0;
    for (double w : weights_) total += w;
    Json kinds = Json::object();
    for (size_t i = 0; i < kKinds.size(); ++i)
      if (weights_[i] > 0) kinds[kKinds[i].name] = weights_[i] / total;
    return {{"kinds", kinds}, {"intervals", intervals_}};
  }

 private:
  // With probability missing_prob the host misses 1-3 stretches of scrapes, mostly short
  // (log-uniform 1 step to 10% of the series).
  void scrape_gaps(Rng& rng, std::vector<bool>& gap) const {
    std::fill(gap.begin(), gap.end(), false);
    const auto T = static_cast<int64_t>(gap.size());
    if (T == 0 || !rng.chance(missing_prob_)) return;
    for (int64_t n = rng.integer(1, 3); n > 0; --n) {
      const auto len = static_cast<int64_t>(rng.log_uniform(1, std::max(2.0, 0.1 * static_cast<double>(T))));
      const int64_t at = rng.integer(0, T - 1);
      for (int64_t t = at; t < std::min(T, at + len); ++t) gap[static_cast<size_t>(t)] = true;
    }
  }

  int64_t variates_;
  double missing_prob_;
  std::vector<double> intervals_;
  std::vector<double> weights_;
  uint64_t base_;
};

OptionSchema schema() {
  return OptionSchema{}
      .integer("seed", 0, "generator seed (combined with the run seed)", 0)
      .integer("variates", 1, "metrics per sample, all of one host driven by one load, sharing a series id", 1, 1024)
      .number_list("intervals", {10, 60, 300}, "sampling intervals in seconds, one drawn per sample")
      .number("missing_prob", 0.1, "probability that a sample has scrape gaps", 0.0, 1.0)
      .table("kinds",
             "metric kind = weight, e.g. {latency = 1}: only the kinds named are drawn. Default (BOOM's metric "
             "types): utilisation 0.26, memory 0.2, rate 0.34, latency 0.17, errors 0.03, counter 0.03");
}

std::unique_ptr<DataSource> make(const Json& o, const DataContext& ctx) {
  return std::make_unique<Observability>(o, ctx);
}

}  // namespace

ORRERY_PLUGIN(data, "observability", "0.1.0",
              "Monitoring metrics at 10 s / 1 min / 5 min: daily and weekly load, bursts, utilisation, "
              "latency percentiles, counters and rates, scrape gaps; variates of one host share a series id",
              schema, make)
