// Baselines by name, for the evaluation loop and scripts.
#include "common.h"
#include "orrery/error.h"

namespace orrery {

const std::vector<std::string>& baseline_names() {
  static const std::vector<std::string> names = {"naive", "seasonal_naive", "theta", "ets", "arima"};
  return names;
}

std::unique_ptr<Baseline> make_baseline(const std::string& name, const Interrupt* interrupt) {
  if (name == "naive") return baselines::make_naive();
  if (name == "seasonal_naive") return baselines::make_seasonal_naive();
  if (name == "theta") return baselines::make_theta();
  if (name == "ets") return baselines::make_ets(interrupt);
  if (name == "arima") return baselines::make_arima(interrupt);
  std::string known;
  for (const auto& n : baseline_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error("unknown baseline " + quote_input(name) + " (known: " + known + ")");
}

}  // namespace orrery
