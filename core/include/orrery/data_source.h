#pragma once
#include <memory>

#include "orrery/batch.h"
#include "orrery/json.h"

namespace orrery {

// Where data sources learn their place in a (possibly distributed) run, so each rank draws
// different, reproducible samples.
struct DataContext {
  uint64_t seed = 0;
  int rank = 0;
  int world_size = 1;
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  // `batch` samples of `length` time steps each.
  virtual Batch sample(int64_t batch, int64_t length) = 0;
};

using DataSourceFactory = std::unique_ptr<DataSource> (*)(const Json& options, const DataContext&);
}  // namespace orrery
