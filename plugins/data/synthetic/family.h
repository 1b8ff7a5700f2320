#pragma once
// A family of synthetic series: a function that fills one series from its own Rng. The
// registry, the default weights and where they come from are in synthetic.cpp; each family
// lives in families/<file>.cpp and is plain C++ (no tensors).
#include <span>
#include <vector>

#include "rng.h"

namespace orrery::synth {

// The plugin's options that shape series beyond the choice of family.
struct Settings {
  std::vector<double> periods;  // seasonal periods in steps favoured by classic, waves, intermittent
  double shift_rate = 0.3;      // expected level shifts per classic series
  double noise_max = 0.5;       // largest noise sd of a classic series relative to its scale
  // The ets family's smoothing parameters log-uniform rather than uniform: half its draws then
  // move their level, trend and season slowly (a stable season, a steady trend), where uniform
  // draws mostly move them fast.
  bool ets_log_smoothing = false;
  // The ets family's steepest trend: drift per step as a share of the initial level (log-uniform
  // from 5e-5 up to this; 0.01 is at most the level again over 100 steps).
  double ets_max_drift = 0.01;
};

using Generate = void (*)(Rng&, std::span<double> y, const Settings&);

struct Family {
  const char* name;
  double weight;    // default weight, before normalisation
  bool rescale;     // output in fixed units (O(1..100)) that the sampler puts on a random scale
  const char* about;
  Generate generate;
};

// families/trend_season.cpp
void classic(Rng&, std::span<double> y, const Settings&);
// families/kernel_synth.cpp
void kernel_synth(Rng&, std::span<double> y, const Settings&);
// families/waves.cpp
void waves(Rng&, std::span<double> y, const Settings&);
// families/steps.cpp
void steps(Rng&, std::span<double> y, const Settings&);
// families/spikes.cpp
void spikes(Rng&, std::span<double> y, const Settings&);
// families/ou.cpp
void ou(Rng&, std::span<double> y, const Settings&);
// families/intermittent.cpp
void intermittent(Rng&, std::span<double> y, const Settings&);
// families/kernel_trend.cpp
void kernel_trend(Rng&, std::span<double> y, const Settings&);
// families/trend_breaks.cpp
void trend_breaks(Rng&, std::span<double> y, const Settings&);
// families/ets.cpp
void ets(Rng&, std::span<double> y, const Settings&);
// families/arima.cpp
void arima(Rng&, std::span<double> y, const Settings&);

}  // namespace orrery::synth
