#pragma once
// The metrics of one host or service as a monitoring system records them. The variates of a
// sample share one Host: its sampling interval and the latent load (requests, users, jobs)
// that drives every metric of it, so CPU, latency and request rate rise and fall together.
// Each kind of metric lives in kinds/<kind>.cpp and is plain C++ (no tensors).
#include <span>
#include <vector>

#include "rng.h"  // data/common: the same seeded Rng as the synthetic prior

namespace orrery::obs {

using synth::Rng;

struct Host {
  double interval = 60;        // seconds between samples
  double steps_per_day = 1440; // 86400 / interval
  std::vector<double> load;    // latent load, positive, about 1 at an ordinary busy hour
  double peak_load = 1;        // max of load
};

// load.cpp: the latent load for T steps at this interval, a random time of the week first.
Host make_host(Rng& rng, double interval, size_t T);

using Generate = void (*)(Rng&, const Host&, std::span<double> y);

struct Kind {
  const char* name;
  double weight;  // default weight, before normalisation (see observability.cpp)
  const char* about;
  Generate generate;
};

void utilisation(Rng&, const Host&, std::span<double> y);  // kinds/utilisation.cpp
void memory(Rng&, const Host&, std::span<double> y);       // kinds/memory.cpp
void rate(Rng&, const Host&, std::span<double> y);         // kinds/counters.cpp
void counter(Rng&, const Host&, std::span<double> y);      // kinds/counters.cpp
void latency(Rng&, const Host&, std::span<double> y);      // kinds/latency.cpp
void errors(Rng&, const Host&, std::span<double> y);       // kinds/errors.cpp

}  // namespace orrery::obs
