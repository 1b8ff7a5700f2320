#pragma once
// A Parquet or Arrow IPC file as a stream of record batches, so a file larger than memory is
// read a batch at a time: Parquet through parquet::arrow's RecordBatchReader (`batch_rows` rows
// at a time across its row groups), Arrow IPC files (Feather v2) batch by batch, and Arrow IPC
// streams as they come. The format is told by the file's first bytes, not its name.
#include <arrow/record_batch.h>
#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace orrery::data {

class BatchStream {
 public:
  virtual ~BatchStream() = default;
  virtual std::shared_ptr<arrow::Schema> schema() const = 0;
  // The next batch, fully validated (offsets, lengths, dictionary indices within their buffers),
  // or null at the end; throws orrery::Error naming the file.
  virtual std::shared_ptr<arrow::RecordBatch> next() = 0;
};

// `fields`: the top-level columns to read, ascending (empty: all of them). A batch then holds
// those columns only, in that order, and the others are never decoded (Parquet reads only their
// column chunks).
std::unique_ptr<BatchStream> open_batches(const std::string& path, int64_t batch_rows,
                                          const std::vector<int>& fields = {});

}  // namespace orrery::data
