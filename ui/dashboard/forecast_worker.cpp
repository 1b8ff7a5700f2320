#include "forecast_worker.h"

#include <chrono>
#include <exception>

namespace orrery::ui {

ForecastWorker::ForecastWorker(CsvForecaster forecaster, std::function<void()> wake)
    : forecaster_(std::move(forecaster)), wake_(std::move(wake)), thread_([this] { loop(); }) {}

ForecastWorker::~ForecastWorker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    waiting_.reset();
  }
  interrupt_.request();
  cv_.notify_all();
  thread_.join();
}

void ForecastWorker::submit(const CsvForecastSettings& settings) {
  {
    std::lock_guard lock(mutex_);
    waiting_ = settings;
    if (running_) interrupt_.request();  // its answer would be drawn over at once
  }
  cv_.notify_all();
}

std::shared_ptr<const CsvForecastResult> ForecastWorker::result() const {
  std::lock_guard lock(mutex_);
  return result_;
}

bool ForecastWorker::busy() const {
  std::lock_guard lock(mutex_);
  return running_ || waiting_.has_value();
}

void ForecastWorker::loop() {
  for (;;) {
    CsvForecastSettings settings;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || waiting_.has_value(); });
      if (stop_) return;
      settings = std::move(*waiting_);
      waiting_.reset();
      running_ = true;
      interrupt_.clear();
    }
    auto result = std::make_shared<CsvForecastResult>();
    const auto start = std::chrono::steady_clock::now();
    try {
      *result = forecaster_.forecast(settings, interrupt_);
    } catch (const std::exception& e) {
      result->error = e.what();
    }
    result->settings = settings;
    result->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    {
      std::lock_guard lock(mutex_);
      result_ = std::move(result);
      running_ = false;
    }
    if (wake_) wake_();
  }
}

}  // namespace orrery::ui
