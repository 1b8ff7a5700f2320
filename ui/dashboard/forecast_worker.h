#pragma once
// One worker thread for the Forecasts tab's CSV forecast, so the window stays responsive while a
// model loads and forecasts. Only the newest request matters: one submitted while another runs
// replaces any still waiting and interrupts the one running, and the window draws the newest
// result that has come back. Closing the window interrupts the forecast in progress.
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "csv_forecast.h"

namespace orrery::ui {

class ForecastWorker {
 public:
  // `wake` is called (from the worker) when a result is ready, to redraw the window.
  ForecastWorker(CsvForecaster forecaster, std::function<void()> wake);
  ~ForecastWorker();  // waits for the forecast in progress
  ForecastWorker(const ForecastWorker&) = delete;
  ForecastWorker& operator=(const ForecastWorker&) = delete;

  void submit(const CsvForecastSettings& settings);
  std::shared_ptr<const CsvForecastResult> result() const;  // null until the first comes back
  // Whether a request is waiting or running.
  bool busy() const;
  const CsvForecaster& forecaster() const { return forecaster_; }

 private:
  void loop();

  CsvForecaster forecaster_;
  std::function<void()> wake_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::optional<CsvForecastSettings> waiting_;
  bool running_ = false, stop_ = false;
  std::shared_ptr<const CsvForecastResult> result_;
  Interrupt interrupt_;  // the running forecast's: requested by a newer request or the destructor
  std::thread thread_;
};

}  // namespace orrery::ui
