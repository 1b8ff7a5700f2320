#pragma once
// Batches drawn ahead of the training step by worker threads. Batch k is drawn with seed
// mix_seed(seed, k * every + offset) and handed out in order, so the sequence is the same for any number of
// workers (0 draws on the caller's thread). At most `depth` batches wait at once; a worker's
// error is rethrown by next() for the batch it was drawing. Batches bound for a GPU are
// pinned by the worker and copied without blocking the step.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "orrery/data_source.h"

namespace orrery {

struct BatchQueueConfig {
  int64_t batch = 1, length = 1;
  uint64_t seed = 0;
  int workers = 2;      // threads drawing batches; 0 = draw in next()
  int depth = 4;        // batches drawn ahead at most
  c10::Device device = c10::kCPU;
  int64_t first = 0;    // the index of the first batch handed out: a resumed run's position
  // Batch i of this queue is batch i * every + offset of the stream: rank r of a data-parallel
  // job of W takes every W-th, from the r-th.
  int64_t every = 1, offset = 0;
};

// Seconds spent drawing batches (summed over workers) and waiting for them in next().
struct BatchQueueStats {
  int64_t batches = 0;
  double draw_seconds = 0, wait_seconds = 0;
};

class BatchQueue {
 public:
  BatchQueue(const DataSource& source, BatchQueueConfig config);
  ~BatchQueue();
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  Batch next();
  BatchQueueStats stats() const;

 private:
  struct Slot {
    Batch batch;
    std::exception_ptr error;
    double seconds = 0;
  };
  Slot draw(int64_t index) const;
  void work();

  const DataSource& source_;
  const BatchQueueConfig cfg_;
  mutable std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::map<int64_t, Slot> done_;
  int64_t claimed_ = 0, consumed_ = 0;
  bool stop_ = false;
  BatchQueueStats stats_;
  std::vector<std::thread> workers_;
};

Batch to_device(const Batch& b, c10::Device device, bool non_blocking = false);

}  // namespace orrery
