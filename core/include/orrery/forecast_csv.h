#pragma once
// `orrery forecast`: quantile forecasts of every series in a CSV from saved model weights.
#include <cstdint>
#include <string>

namespace orrery {
class Registry;

struct ForecastCsvOptions {
  std::string model;   // a model.safetensors written by model:save, or a folder holding one
  std::string input;   // numeric CSV with a header; every column but "time" is a series
  std::string output;  // CSV to write (atomically); empty = standard output
  int64_t horizon = 0;
  int64_t context = 4096;  // most recent steps fed to the model
  std::string device = "cpu";
};

// Writes one row per forecast step: "step", "time" (extrapolated when the input has a regular
// time column), then "<series>_q<level>" for every series and level.
void forecast_csv(const ForecastCsvOptions& opts, const Registry& registry);

}  // namespace orrery
