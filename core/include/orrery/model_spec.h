#pragma once
// What a model is made of, as data: the plugin choices and the few host settings. It travels in
// run configs and in the metadata of saved weights, so a model can be rebuilt from either.
#include <cstdint>
#include <string>

#include "orrery/json.h"

namespace orrery {

// A plugin choice: its name and its options.
struct PluginSpec {
  std::string name;
  Json options = Json::object();
  Json to_json() const;
};

struct ModelSpec {
  PluginSpec arch{"toto2"}, head{"quantile"}, param{"sp"};
  int64_t patch_size = 32;
  // The causal scaler's statistics over the last this many patches; 0: the whole history, as
  // Toto 2.0 computes them (host/patching.h).
  int64_t scaler_window = 0;
  // Covariates moved by the lag, up to this many steps, at which they best match their series'
  // target before the model reads them (past-only ones a patch less; host/covariate_lags.h); 0: as given.
  int64_t covariate_lags = 0;
  uint64_t seed = 0;
  std::string device = "cpu";
  Json to_json() const;
  static ModelSpec from_json(const Json& j);  // errors name the missing or ill-typed field
};

}  // namespace orrery
