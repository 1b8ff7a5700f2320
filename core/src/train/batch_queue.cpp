#include "orrery/host/batch_queue.h"

#include <ATen/ATen.h>

#include <chrono>

namespace orrery {

Batch to_device(const Batch& b, c10::Device device, bool non_blocking) {
  Batch out = b;
  out.values = b.values.to(device, non_blocking);
  out.observed = b.observed.to(device, non_blocking);
  out.series_ids = b.series_ids.to(device, non_blocking);
  if (b.roles.defined()) out.roles = b.roles.to(device, non_blocking);
  if (b.units.defined()) out.units = b.units.to(device, non_blocking);
  if (b.statics.defined()) out.statics = b.statics.to(device, non_blocking);
  return out;
}

BatchQueue::BatchQueue(const DataSource& source, BatchQueueConfig config)
    : source_(source), cfg_(config), claimed_(config.first), consumed_(config.first) {
  for (int i = 0; i < cfg_.workers; ++i) workers_.emplace_back([this] { work(); });
}

BatchQueue::~BatchQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  room_.notify_all();
  for (auto& w : workers_) w.join();
}

BatchQueue::Slot BatchQueue::draw(int64_t index) const {
  Slot s;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    s.batch = source_.sample({cfg_.batch, cfg_.length, mix_seed(cfg_.seed, static_cast<uint64_t>(index * cfg_.every + cfg_.offset))});
    if (cfg_.device.is_cuda()) {  // page-locked, so the step's copy is asynchronous
      s.batch.values = s.batch.values.pin_memory();
      s.batch.observed = s.batch.observed.pin_memory();
      s.batch.series_ids = s.batch.series_ids.pin_memory();
      if (s.batch.roles.defined()) s.batch.roles = s.batch.roles.pin_memory();
      if (s.batch.units.defined()) s.batch.units = s.batch.units.pin_memory();
      if (s.batch.statics.defined()) s.batch.statics = s.batch.statics.pin_memory();
    }
  } catch (...) {
    s.error = std::current_exception();
  }
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

void BatchQueue::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    room_.wait(lock, [&] { return stop_ || claimed_ < consumed_ + cfg_.depth; });
    if (stop_) return;
    const int64_t index = claimed_++;
    lock.unlock();
    Slot s = draw(index);
    lock.lock();
    done_.emplace(index, std::move(s));
    ready_.notify_all();
  }
}

Batch BatchQueue::next() {
  const auto t0 = std::chrono::steady_clock::now();
  Slot s;
  if (workers_.empty()) {
    s = draw(consumed_);
  } else {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return done_.count(consumed_) > 0; });
    s = std::move(done_.at(consumed_));
    done_.erase(consumed_);
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++consumed_;
    ++stats_.batches;
    stats_.draw_seconds += s.seconds;
    stats_.wait_seconds += waited;
  }
  room_.notify_all();
  if (s.error) std::rethrow_exception(s.error);
  return to_device(s.batch, cfg_.device, /*non_blocking=*/cfg_.device.is_cuda());
}

BatchQueueStats BatchQueue::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace orrery
