#include "sampler.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <cmath>

#include "orrery/error.h"

namespace orrery::data {
namespace {
double unit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }  // [0, 1)
}  // namespace

WindowSampler::WindowSampler(std::vector<Region> regions, int64_t variates, int64_t season, uint64_t seed,
                             bool covariates, int64_t statics)
    : regions_(std::move(regions)), variates_(variates), season_(season), covariates_(covariates), statics_(statics),
      seed_(seed) {}

Batch WindowSampler::sample(const SampleRequest& r) const {
  if (r.batch < 1 || r.length < 1)
    throw Error("a batch needs at least one sample of one step, got " + std::to_string(r.batch) + " x " +
                std::to_string(r.length));
  const int64_t B = r.batch, V = variates_, T = r.length;
  // Windows per series for this length: the weights change with the length, so they are
  // summed per request (a pass over the series, small next to copying the batch).
  std::vector<double> cumulative(regions_.size());
  double total = 0;
  for (size_t i = 0; i < regions_.size(); ++i) {
    total += static_cast<double>(std::max<int64_t>(1, regions_[i].hi - regions_[i].lo - T + 1));
    cumulative[i] = total;
  }
  at::Tensor values = at::zeros({B, V, T}, at::kFloat);
  at::Tensor observed = at::zeros({B, V, T}, at::kBool);
  at::Tensor ids = at::empty({B, V}, at::kLong);
  float* pv = values.data_ptr<float>();
  bool* po = observed.data_ptr<bool>();
  int64_t* pid = ids.data_ptr<int64_t>();
  const bool covariates = covariates_;
  at::Tensor roles = covariates ? at::zeros({B, V}, at::kLong) : at::Tensor();
  int64_t* prole = covariates ? roles.data_ptr<int64_t>() : nullptr;
  const int64_t S = statics_;
  at::Tensor statics = S > 0 ? at::zeros({B, V, S}, at::kFloat) : at::Tensor();
  float* pstatic = S > 0 ? statics.data_ptr<float>() : nullptr;
  const uint64_t batch_seed = mix_seed(seed_, r.seed);
  for (int64_t b = 0; b < B; ++b) {
    const uint64_t s = mix_seed(batch_seed, static_cast<uint64_t>(b));
    const double u = unit(mix_seed(s, 0)) * total;
    const size_t i = std::min<size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin(),
                                      regions_.size() - 1);
    const Region& g = regions_[i];
    const int64_t n = g.hi - g.lo;
    const int64_t count = std::min(n, T), pad = T - count;
    const int64_t start = n > T ? g.lo + static_cast<int64_t>(mix_seed(s, 1) % static_cast<uint64_t>(n - T + 1)) : g.lo;
    for (int64_t v = 0; v < V; ++v) {
      pid[b * V + v] = v < g.variates ? 0 : 1 + v - g.variates;  // padding: unobserved, own series
      if (v >= g.variates) continue;
      for (int64_t k = 0; k < S; ++k) pstatic[(b * V + v) * S + k] = static_cast<float>(g.statics[k]);
      if (covariates && v >= g.variates - g.past - g.future)
        prole[b * V + v] = static_cast<int64_t>(v < g.variates - g.future ? VariateRole::past : VariateRole::future);
      const float* src = g.data + v * g.length + start;
      float* dst = pv + (b * V + v) * T + pad;
      bool* seen = po + (b * V + v) * T + pad;
      for (int64_t t = 0; t < count; ++t)
        if (!std::isnan(src[t])) dst[t] = src[t], seen[t] = true;
    }
  }
  Batch out;
  out.values = values;
  out.observed = observed;
  out.series_ids = ids;
  out.roles = roles;
  out.statics = statics;
  out.season = season_;
  return out;
}

}  // namespace orrery::data
