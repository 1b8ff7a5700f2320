#include "arrow_batches.h"

#include <arrow/io/file.h>
#include <arrow/ipc/reader.h>
#include <arrow/result.h>
#include <arrow/status.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/properties.h>

#include <fstream>

#include "orrery/error.h"
#include "orrery/input_file.h"

namespace orrery::data {
namespace {

// Arrow's own words after what they mean here: a file that opens but does not read is damaged
// (a flipped footer byte says only "Couldn't deserialize thrift").
void check(const arrow::Status& s, const std::string& path) {
  if (!s.ok())
    throw Error(path + ": the file is damaged or truncated, or not the Parquet or Arrow file it looks like (Arrow: " +
                s.message() + ")");
}

template <class T>
T unwrap(arrow::Result<T> r, const std::string& path) {
  check(r.status(), path);
  return std::move(r).ValueUnsafe();
}

std::shared_ptr<arrow::io::ReadableFile> open_file(const std::string& path) {
  auto file = arrow::io::ReadableFile::Open(path);
  if (!file.ok()) throw Error("cannot open " + path + ": " + file.status().message());
  return *file;
}

// Arrow's readers trust the offsets, lengths and dictionary indices a file declares; a damaged
// or hostile file would have the reader index out of its buffers (fuzz_parquet found a string
// offset doing so). ValidateFull checks every one, in time linear in the batch.
std::shared_ptr<arrow::RecordBatch> validated(std::shared_ptr<arrow::RecordBatch> batch, const std::string& path) {
  if (batch) check(batch->ValidateFull(), path);
  return batch;
}

// The leaf columns of a Parquet field (one for a flat column; a struct's or list's several).
void leaves(const parquet::arrow::SchemaField& field, std::vector<int>& out) {
  if (field.is_leaf()) out.push_back(field.column_index);
  for (const auto& child : field.children) leaves(child, out);
}

class ParquetBatches final : public BatchStream {
 public:
  ParquetBatches(const std::string& path, int64_t batch_rows, const std::vector<int>& fields) : path_(path) {
    auto file = open_file(path);
    parquet::ArrowReaderProperties properties;
    properties.set_batch_size(batch_rows);
    properties.set_use_threads(false);  // the source reads one file at a time; keep it simple
    parquet::arrow::FileReaderBuilder builder;
    check(builder.Open(file), path);
    builder.properties(properties);
    reader_ = unwrap(builder.Build(), path);
    for (int f : fields) leaves(reader_->manifest().schema_fields.at(static_cast<size_t>(f)), columns_);
    projected_ = !fields.empty();
  }
  // The file's schema needs only its footer; the batch reader is made at the first batch, since
  // making it may already read the first row group (a whole small file).
  std::shared_ptr<arrow::Schema> schema() const override {
    if (projected_) return batches().schema();
    std::shared_ptr<arrow::Schema> s;
    check(reader_->GetSchema(&s), path_);
    return s;
  }
  std::shared_ptr<arrow::RecordBatch> next() override {
    std::shared_ptr<arrow::RecordBatch> batch;
    check(batches().ReadNext(&batch), path_);
    return validated(std::move(batch), path_);
  }

 private:
  arrow::RecordBatchReader& batches() const {
    if (!batches_) {
      if (!projected_) {
        batches_ = unwrap(reader_->GetRecordBatchReader(), path_);
      } else {
        std::vector<int> groups(static_cast<size_t>(reader_->num_row_groups()));
        for (size_t g = 0; g < groups.size(); ++g) groups[g] = static_cast<int>(g);
        batches_ = unwrap(reader_->GetRecordBatchReader(groups, columns_), path_);
      }
    }
    return *batches_;
  }

  std::string path_;
  std::vector<int> columns_;  // the leaf columns read, when projected_
  bool projected_ = false;
  std::unique_ptr<parquet::arrow::FileReader> reader_;     // outlives its batch reader
  mutable std::unique_ptr<arrow::RecordBatchReader> batches_;  // made at the first use
};

class IpcFileBatches final : public BatchStream {
 public:
  IpcFileBatches(const std::string& path, const arrow::ipc::IpcReadOptions& options) : path_(path) {
    reader_ = unwrap(arrow::ipc::RecordBatchFileReader::Open(open_file(path), options), path);
  }
  std::shared_ptr<arrow::Schema> schema() const override { return reader_->schema(); }
  std::shared_ptr<arrow::RecordBatch> next() override {
    if (at_ == reader_->num_record_batches()) return nullptr;
    return validated(unwrap(reader_->ReadRecordBatch(at_++), path_), path_);
  }

 private:
  std::string path_;
  std::shared_ptr<arrow::ipc::RecordBatchFileReader> reader_;
  int at_ = 0;
};

class IpcStreamBatches final : public BatchStream {
 public:
  IpcStreamBatches(const std::string& path, const arrow::ipc::IpcReadOptions& options) : path_(path) {
    reader_ = unwrap(arrow::ipc::RecordBatchStreamReader::Open(open_file(path), options), path);
  }
  std::shared_ptr<arrow::Schema> schema() const override { return reader_->schema(); }
  std::shared_ptr<arrow::RecordBatch> next() override {
    std::shared_ptr<arrow::RecordBatch> batch;
    check(reader_->ReadNext(&batch), path_);
    return validated(std::move(batch), path_);
  }

 private:
  std::string path_;
  std::shared_ptr<arrow::ipc::RecordBatchStreamReader> reader_;
};

}  // namespace

std::unique_ptr<BatchStream> open_batches(const std::string& path, int64_t batch_rows, const std::vector<int>& fields) {
  require_input_file(path, "a Parquet or Arrow file");
  char magic[6] = {};
  std::ifstream(path, std::ios::binary).read(magic, sizeof magic);
  const std::string head(magic, sizeof magic);
  try {
    if (head.starts_with("PAR1")) return std::make_unique<ParquetBatches>(path, batch_rows, fields);
    arrow::ipc::IpcReadOptions options = arrow::ipc::IpcReadOptions::Defaults();
    options.included_fields = fields;
    if (head == "ARROW1") return std::make_unique<IpcFileBatches>(path, options);
    try {
      return std::make_unique<IpcStreamBatches>(path, options);
    } catch (const Error& e) {
      throw Error(path + ": neither Parquet nor Arrow IPC (" + e.what() + ")");
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // parquet reports some damage by exception
    throw Error(path + ": " + e.what());
  }
}

}  // namespace orrery::data
