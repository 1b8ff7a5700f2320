#pragma once
// `orrery forecast`: quantile forecasts of every series in a CSV from saved model weights.
#include <cstdint>
#include <string>

namespace orrery {
class Registry;

struct ForecastCsvOptions {
  std::string model;   // see load_model: Orrery weights or a Hugging Face Toto 2.0 folder
  std::string input;   // numeric CSV with a header; every column but "time" is a series
  std::string output;  // CSV to write (atomically); empty = standard output
  int64_t horizon = 0;
  int64_t context = 4096;  // most recent steps fed to the model
  int64_t decode_block_size = 0;  // ForecastOptions::decode_block_size
  std::string device = "cpu";
};

// Writes one row per forecast step: "step", "time" (extrapolated when the input has a regular
// time column), then "<series>_q<level>" for every series and level.
void forecast_csv(const ForecastCsvOptions& opts, const Registry& registry);

}  // namespace orrery
