// The training-data path from file to batch, on any bytes: a CSV file becomes the csv plugin's
// source (reader, float32 cache, validation holdout, window sampler) for both splits, and each
// draws a batch. Either the source is refused with an orrery::Error naming what is wrong, or
// every batch keeps the trainer's contract: the shape asked for, finite float32 values where
// observed and zeros elsewhere, ids per variate, and the same batch again from the cache.
#include <ATen/ATen.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "csv_reader.h"
#include "file_source.h"
#include "fuzz_support.h"
#include "orrery/error.h"

namespace {
using orrery::Json;

// The first two bytes pick the options: layout, holdout, exclude_last, multivariate, the
// batch's length and the reader's chunk size.
Json options(uint8_t a, uint8_t b, const std::string& path) {
  static const char* const kLayouts[] = {"auto", "wide", "long", "auto"};
  static const double kHoldouts[] = {0.1, 0.0, 0.5, 1.0};
  Json o = Json::object();
  o["files"] = path;
  o["cache_dir"] = orrery::fuzz::scratch_dir() + "/cache";
  o["layout"] = kLayouts[a & 3];
  o["holdout"] = kHoldouts[(a >> 2) & 3];
  o["exclude_last"] = (a >> 4) & 3;
  o["multivariate"] = (a & 64) != 0;
  if (a & 128) o["timestamp"] = "none";
  o["chunk_bytes"] = 1 + (b & 63);
  return o;
}

void check_batch(const orrery::Batch& x, int64_t batch, int64_t length) {
  const bool shape = x.values.dim() == 3 && x.values.size(0) == batch && x.values.size(2) == length &&
                     x.observed.sizes() == x.values.sizes() && x.series_ids.dim() == 2 &&
                     x.series_ids.size(0) == batch && x.series_ids.size(1) == x.values.size(1);
  if (!shape) std::abort();
  const at::Tensor seen = x.observed.to(at::kBool);
  const at::Tensor v = x.values.to(at::kFloat);
  if (!at::isfinite(v).all().item<bool>()) std::abort();                       // never NaN or inf
  if (at::where(seen, at::zeros_like(v), v).abs().max().item<float>() != 0) std::abort();  // 0 where unseen
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string path = orrery::fuzz::write_input(data + 2, size - 2, "train.csv");
  const Json o = options(data[0], data[1], path);
  static const orrery::data::FileFormat format{"csv", orrery::data::read_csv, {}};
  const int64_t batch = 3, length = 1 + data[1] % 97;
  for (const auto split : {orrery::Split::train, orrery::Split::validation}) {
    try {
      const auto source = orrery::data::make_file_source(o, {7, 0, 1, split}, format);
      const orrery::Batch first = source->sample({batch, length, 11});
      check_batch(first, batch, length);
      if (const auto longest = source->longest_series(); longest && *longest < 1) std::abort();
      // Built once, then read from the cache: the same series, so the same batch.
      const auto again = orrery::data::make_file_source(o, {7, 0, 1, split}, format);
      const orrery::Batch second = again->sample({batch, length, 11});
      if (!at::equal(first.values, second.values) || !at::equal(first.observed, second.observed)) std::abort();
    } catch (const orrery::Error& e) {
      orrery::fuzz::refused(e);  // the contract; any other exception escapes: a crash
    }
  }
  return 0;
}
