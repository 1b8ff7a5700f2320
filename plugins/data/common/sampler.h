#pragma once
// Windows drawn from mapped series into Batches. A series is chosen with probability
// proportional to its number of distinct windows of the requested length (at least one), so
// every window of the data is equally likely; the window ends at a uniformly drawn step, and a
// series shorter than the window is left-padded with unobserved steps. Every draw comes from
// the request's seed through mix_seed: no state changes, so threads may share a sampler.
#include <cstdint>
#include <vector>

#include "orrery/batch.h"
#include "orrery/data_source.h"

namespace orrery::data {

// The steps [lo, hi) of one series that a split may draw; the series holds `variates` runs of
// `length` floats (NaN = unobserved) from `data`, the last `past` + `future` of them covariates.
struct Region {
  const float* data = nullptr;
  int64_t length = 0, variates = 1;
  int64_t lo = 0, hi = 0;
  int64_t past = 0, future = 0;
  const double* statics = nullptr;  // its static covariates (WindowSampler's count of them)
};

class WindowSampler {
 public:
  // `variates`: the batch's variate count (the widest series; narrower ones are padded with
  // unobserved variates, each its own series id). `seed`: the source's, mixed with each request's.
  // `covariates`: batches carry roles, each region's covariate variates (Region::past, future)
  // past-only or known-future, the rest targets. `statics`: batches carry that many static
  // covariates of each region (Batch::statics), on every row of its series.
  WindowSampler(std::vector<Region> regions, int64_t variates, int64_t season, uint64_t seed, bool covariates = false,
                int64_t statics = 0);
  Batch sample(const SampleRequest& request) const;

 private:
  std::vector<Region> regions_;
  int64_t variates_, season_;
  bool covariates_;
  int64_t statics_;
  uint64_t seed_;
};

}  // namespace orrery::data
