// A seeded prior of synthetic series in the spirit of TempoPFN and KernelSynth: each series
// is drawn from one family, chosen by weight (option `families`), with missing stretches in
// the observed mask. The families live in families/*.cpp; this file holds the registry, the
// options and the batch assembly.
//
// Default weights: TempoPFN's generator_proportions (configs/example.yaml), each generator
// mapped onto the family here that is closest to it:
//   classic       1    forecast_pfn (trend x calendar seasonality x noise)
//   kernel_synth  3    kernel 1 + gp 1 + cauker_univariate 1 (all GP-path priors)
//   waves         2.5  sinewave 1 + sawtooth 1 + audio_stochastic_rhythm 0.5
//   steps         1    step
//   spikes        2.5  spike 1 + anomaly 1 + audio_network_topology 0.5 (bursts)
//   ou            3.2  ou_process 3 + audio_financial_volatility 0.1 + audio_multi_scale_fractal 0.1
//   intermittent  1    not in TempoPFN: ours, for the zero-inflated series of GIFT-Eval and BOOM
//   ets           0    classical state-space families, and KernelSynth on a trend (CauKer's
//   arima         0    mean functions): drawn only when named, until their effect on the
//   kernel_trend  0    zero-shot benchmark is measured
//   trend_breaks  0    trends that fade and break: measured, no help (docs/results/decision)
// TempoPFN's augmented_per_sample_2048 (2) and augmented_temp_batch_2048 (2) augment other
// generators' series rather than generate their own; they have no family here, so their
// share goes to the others by normalisation.
//
// Randomness: every series has its own Rng seeded by (option seed, run seed, batch seed,
// sample, variate), so a batch depends only on its request, whatever the thread, the order of
// calls or the rank (data-parallel ranks draw different batches by their numbers), and the
// source keeps no state.
#include <ATen/ATen.h>

#include <array>
#include <cmath>
#include <string>

#include "covariate_task.h"
#include "family.h"
#include "../common/named_weights.h"
#include "orrery/error.h"
#include "orrery/plugin.h"

namespace {
using namespace orrery;
using synth::Family;
using synth::Rng;

constexpr std::array<Family, 11> kFamilies{{
    {"classic", 1, false, "trend, up to three harmonic seasonalities, AR(1) noise, shifts, spikes", synth::classic},
    {"kernel_synth", 3, true, "Gaussian-process paths from KernelSynth's kernel bank", synth::kernel_synth},
    {"waves", 2.5, true, "sine (AM/FM), sawtooth and square waves", synth::waves},
    {"steps", 1, true, "change points and level shifts (TempoPFN's step patterns)", synth::steps},
    {"spikes", 2.5, true, "spikes and periodic anomalies on a flat baseline", synth::spikes},
    {"ou", 3.2, true, "regime-switching Ornstein-Uhlenbeck processes and random walks", synth::ou},
    {"intermittent", 1, false, "zero-inflated Poisson / negative-binomial counts", synth::intermittent},
    // Appended with weight 0, so the default mix draws exactly the series it drew before.
    {"ets", 0, true, "exponential-smoothing state-space paths: A/M error and season, N/A/Ad trend", synth::ets},
    {"arima", 0, true, "random walks with drift, ARIMA(1,1,1), the airline model; trend breaks", synth::arima},
    {"kernel_trend", 0, true, "KernelSynth paths on a linear, quadratic, exponential, logistic or random-walk mean",
     synth::kernel_trend},
    {"trend_breaks", 0, true, "trends that fade (damped) and break: to flat, reversed, or a fifth to twice themselves; low noise",
     synth::trend_breaks},
}};

// The families and their default weights, as the `families` option reads them.
data::NamedParts family_parts() {
  data::NamedParts p{"data plugin 'synthetic'", "families", "family", {}, {}};
  for (const auto& x : kFamilies) p.names.emplace_back(x.name), p.defaults.push_back(x.weight);
  return p;
}

// The effects of covariate tasks, all equally likely by default.
data::NamedParts effect_parts() {
  data::NamedParts p{"data plugin 'synthetic'", "effects", "effect", {}, {}};
  for (const char* name : synth::kEffectNames) p.names.emplace_back(name), p.defaults.push_back(1);
  return p;
}

class Synthetic final : public DataSource {
 public:
  Synthetic(const Json& o, const DataContext& ctx)
      : variates_(o["variates"]), missing_prob_(o["missing_prob"]), short_prob_(o["short_prob"]),
        weights_(family_parts().weights(o["families"])),
        // Not the rank: the ranks of a data-parallel run draw different batches by their
        // numbers (trainer.h), so a batch is the same whoever draws it.
        base_(mix_seed(mix_seed(o["seed"].get<uint64_t>(), ctx.seed), 0)) {
    settings_.periods = o["periods"].get<std::vector<double>>();
    settings_.shift_rate = o["shift_rate"];
    settings_.noise_max = o["noise_max"];
    settings_.ets_log_smoothing = o["ets_smoothing"] == "log_uniform";
    settings_.ets_max_drift = o["ets_max_drift"];
    if (settings_.periods.empty()) throw Error("data plugin 'synthetic': option 'periods' must not be empty");
    covariate_prob_ = o["covariate_prob"];
    tasks_.max_covariates = o["max_covariates"];
    tasks_.future_prob = o["future_prob"];
    tasks_.noise_prob = o["noise_covariates"];
    tasks_.max_effect = o["max_effect"];
    tasks_.max_lag = o["max_lag"];
    tasks_.effects = effect_parts().weights(o["effects"]);
    for (double p : settings_.periods)
      if (!(p >= 2))
        throw Error("data plugin 'synthetic': every period must be at least 2 steps, got " + std::to_string(p));
  }

  Batch sample(const SampleRequest& r) const override {
    // With covariate tasks every sample has room for a target and its most covariates; rows a
    // sample does not fill are unobserved, each its own series.
    const int64_t V = covariate_prob_ > 0 ? std::max<int64_t>(variates_, 1 + tasks_.max_covariates) : variates_;
    const int64_t B = r.batch, T = r.length;
    at::Tensor values = at::empty({B, V, T}, at::kFloat);
    at::Tensor observed = at::ones({B, V, T}, at::kBool);
    at::Tensor ids = at::arange(V, at::kLong).repeat({B, 1});  // every variate its own series
    at::Tensor roles = covariate_prob_ > 0 ? at::zeros({B, V}, at::kLong) : at::Tensor();
    float* out = values.data_ptr<float>();
    bool* seen = observed.data_ptr<bool>();
    std::vector<double> y(static_cast<size_t>(T));
    const uint64_t batch_seed = mix_seed(base_, r.seed);
    for (int64_t b = 0; b < B; ++b) {
      const uint64_t sample_seed = mix_seed(batch_seed, static_cast<uint64_t>(b));
      // A short series of its own (its length scales relative to it), or the whole length.
      int64_t L = T;
      if (short_prob_ > 0) {
        Rng srng(mix_seed(sample_seed, kShortStream));
        if (srng.uniform() < short_prob_ && T > kShortest)
          L = std::min<int64_t>(T, static_cast<int64_t>(std::llround(srng.log_uniform(kShortest, kShortLongest))));
      }
      // A covariate task, on a stream of its own (covariate_prob = 0 draws what it always drew).
      synth::CovariateTask task;
      Rng trng(mix_seed(sample_seed, kTaskStream));
      if (covariate_prob_ > 0 && trng.chance(covariate_prob_)) {
        task = synth::covariate_task(trng, L, tasks_, [this](Rng& g, std::span<double> s) { draw(g, s); });
        for (size_t c = 0; c < task.rows.size(); ++c) {  // one series: the target and its covariates
          ids.data_ptr<int64_t>()[b * V + static_cast<int64_t>(c)] = 0;
          roles.data_ptr<int64_t>()[b * V + static_cast<int64_t>(c)] = task.roles[c];
        }
      }
      const int64_t rows = task.rows.empty() ? variates_ : static_cast<int64_t>(task.rows.size());
      for (int64_t c = 0; c < V; ++c) {
        Rng rng(mix_seed(sample_seed, static_cast<uint64_t>(c)));
        const int64_t row = (b * V + c) * T;
        if (c >= rows) {  // room left for another sample's covariates
          for (int64_t t = 0; t < T; ++t) out[row + t] = 0, seen[row + t] = false;
          continue;
        }
        if (task.rows.empty()) draw(rng, std::span<double>(y).subspan(0, static_cast<size_t>(L)));
        else std::copy(task.rows[static_cast<size_t>(c)].begin(), task.rows[static_cast<size_t>(c)].end(), y.begin());
        for (int64_t t = 0; t < T - L; ++t) out[row + t] = 0, seen[row + t] = false;
        for (int64_t t = T - L; t < T; ++t) out[row + t] = static_cast<float>(y[static_cast<size_t>(t - (T - L))]);
        const bool known_ahead = !task.roles.empty() && task.roles[static_cast<size_t>(c)] == 2;  // never missing
        if (rng.uniform() < missing_prob_ && !known_ahead) {  // one or two missing stretches of up to 15% of the series
          const int gaps = 1 + (rng.uniform() < 0.5);
          for (int g = 0; g < gaps; ++g) {
            const int64_t len = 1 + static_cast<int64_t>(rng.uniform(0, 0.15) * static_cast<double>(L));
            const int64_t at = (T - L) + static_cast<int64_t>(rng.uniform() * static_cast<double>(L));
            for (int64_t t = at; t < std::min(T, at + len); ++t) seen[row + t] = false;
          }
        }
      }
    }
    Batch batch;
    batch.values = values;
    batch.observed = observed;
    batch.series_ids = ids;
    batch.roles = roles;
    return batch;  // season stays 1: families and periods differ from series to series
  }

  Json describe() const override {
    double total = 0;
    for (double w : weights_) total += w;
    Json families = Json::object();
    for (size_t i = 0; i < kFamilies.size(); ++i)
      if (weights_[i] > 0) families[kFamilies[i].name] = weights_[i] / total;
    Json d = {{"families", families}};
    if (covariate_prob_ > 0) {
      double sum = 0;
      for (double w : tasks_.effects) sum += w;
      Json effects = Json::object();
      for (int i = 0; i < synth::kEffects; ++i)
        if (tasks_.effects[static_cast<size_t>(i)] > 0) effects[synth::kEffectNames[i]] = tasks_.effects[static_cast<size_t>(i)] / sum;
      d["covariate_tasks"] = {{"share", covariate_prob_}, {"max_covariates", tasks_.max_covariates},
                              {"future_prob", tasks_.future_prob}, {"noise_covariates", tasks_.noise_prob},
                              {"max_effect", tasks_.max_effect}, {"max_lag", tasks_.max_lag}, {"effects", effects}};
    }
    return d;
  }

 private:
  // One series: a family by weight, its path, a random scale for the families that come in
  // fixed units (log-uniform 0.01 to 1000, as varied as the classic family's 0.1 to 1e4).
  // A path that is not finite or beyond 1e30 is redrawn from the same family (TempoPFN
  // rejects such series too): ets marks a path NaN where its multiplicative model leaves the
  // positive values it is defined on.
  void draw(Rng& rng, std::span<double> y) const {
    const Family& family = kFamilies[rng.pick(weights_)];
    for (int attempt = 0; attempt < 10; ++attempt) {
      family.generate(rng, y, settings_);
      if (family.rescale) {
        const double scale = rng.log_uniform(0.01, 1000);
        for (double& v : y) v *= scale;
      }
      bool ok = true;
      for (double v : y) ok = ok && std::fabs(v) < 1e30;  // false for NaN and inf too
      if (ok) return;
    }
    std::fill(y.begin(), y.end(), 0.0);
  }

  // Short series: log-uniform lengths over what evaluation presents (24 to 500 steps), drawn
  // on a stream of their own so that short_prob = 0 draws what it always drew.
  static constexpr int64_t kShortest = 24, kShortLongest = 500;
  static constexpr uint64_t kShortStream = 0x73686f7274;
  static constexpr uint64_t kTaskStream = 0x636f766172;

  int64_t variates_;
  double missing_prob_, short_prob_;
  std::vector<double> weights_;
  uint64_t base_;
  synth::Settings settings_;
  double covariate_prob_ = 0;
  synth::CovariateTaskSettings tasks_;
};

OptionSchema schema() {
  return OptionSchema{}
      .integer("seed", 0, "generator seed (combined with the run seed)", 0)
      .integer("variates", 1, "variates per sample (independent series, each of its own family)", 1, 1024)
      .table("families",
             "family name = weight, e.g. {waves = 1, ou = 2}: only the families named are drawn. Default "
             "(TempoPFN's generator mix): classic 1, kernel_synth 3, waves 2.5, steps 1, spikes 2.5, ou 3.2, "
             "intermittent 1; ets, arima (classical state-space paths), kernel_trend and trend_breaks are drawn only when named")
      .number_list("periods", {4, 7, 12, 24, 52, 96, 168},
                   "seasonal periods in steps: classic draws from them 70% of the time, waves 40%, "
                   "intermittent cycles 25%")
      .number("missing_prob", 0.1, "probability that a series has missing stretches", 0.0, 1.0)
      .number("short_prob", 0.0,
              "probability that a sample is a short series of its own: 24 to 500 steps (log-uniform, at most the "
              "length), generated at that length and placed at the end, the steps before it unobserved",
              0.0, 1.0)
      .number("shift_rate", 0.3, "expected level shifts per classic series", 0.0)
      .number("noise_max", 0.5, "largest noise std of a classic series relative to its scale", 0.01)
      .string("ets_smoothing", "uniform",
              "how the ets family draws its smoothing parameters (alpha, and beta and gamma as shares of their "
              "bounds): uniform, mostly fast-moving states; or log_uniform over orders of magnitude down to a "
              "tenth of uniform's least, half the draws slow (a stable season, a steady trend)",
              {"uniform", "log_uniform"})
      .number("ets_max_drift", 0.01,
              "the ets family's steepest trend: drift per step as a share of the initial level, drawn log-uniform "
              "from 5e-5 up to this (0.01: at most the level again over 100 steps)",
              1e-4, 0.5)
      .number("covariate_prob", 0.0,
              "probability that a sample is a covariate task: a target (row 1) that follows some of up to "
              "max_covariates covariates drawn with it (the rows after it)",
              0.0, 1.0)
      .integer("max_covariates", 3, "covariates of a task: 1 to this many", 1, 64)
      .number("future_prob", 0.5,
              "probability that a covariate is known over the horizon (else past-only; events and regimes "
              "halfway to always)",
              0.0, 1.0)
      .number("noise_covariates", 0.25, "probability that a covariate has no effect on its target", 0.0, 1.0)
      .number("max_effect", 3,
              "largest effect of an informative covariate, in spreads of the target's base; sizes are "
              "log-uniform from 0.3 to this", 0.3, 1e3)
      .integer("max_lag", 12, "largest lag of a lagged, threshold, multiplicative or event effect, in steps", 0, 4096)
      .table("effects",
             "how informative covariates move their targets, effect = weight: lag (a lagged linear effect), "
             "threshold, multiplicative, events (sparse 0/1 events such as promotions or holidays), regime (a "
             "0/1 switch such as a law in force); default all equally likely");
}

std::unique_ptr<DataSource> make(const Json& o, const DataContext& ctx) {
  return std::make_unique<Synthetic>(o, ctx);
}

}  // namespace

ORRERY_PLUGIN(data, "synthetic", "0.4.0",
              "Seeded synthetic prior: trend/seasonal, KernelSynth GP (also on trends), waves, steps, spikes, OU and random "
              "walks, intermittent counts, ETS and ARIMA state-space paths; missing values",
              schema, make)
