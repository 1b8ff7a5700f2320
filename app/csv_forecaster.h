#pragma once
// The Forecasts tab's CsvForecaster: `orrery forecast`'s path, a model cached while its file is
// unchanged, and a baseline fitted on the same column.
#include "dashboard/csv_forecast.h"

namespace orrery {
class Registry;

ui::CsvForecaster make_csv_forecaster(const Registry& registry);

}  // namespace orrery
