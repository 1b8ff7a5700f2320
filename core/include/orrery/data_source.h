#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orrery/batch.h"
#include "orrery/error.h"
#include "orrery/interrupt.h"
#include "orrery/json.h"

namespace orrery {

// Which part of a source's series a run draws from. Generators give different series for
// different seeds anyway; sources of real series hold out a fixed subset of series ids for
// validation so that no validation series is ever trained on.
enum class Split { train, validation };

// Where data sources learn their place in a (possibly distributed) run. The ranks of a
// data-parallel run draw different batches by the batches' numbers (trainer.h), not by rank: a
// source uses rank and world_size only to split files between ranks (shard_files).
struct DataContext {
  uint64_t seed = 0;
  int rank = 0;
  int world_size = 1;
  Split split = Split::train;
  // Set while a script runs: a source whose construction can take minutes (reading and caching
  // large files, training a tokenizer) checks it then and stops with orrery::Interrupted. Valid
  // only during construction: a source keeps no copy.
  const Interrupt* interrupt = nullptr;
};

// One batch to draw. Every random choice a source makes for it comes from `seed`, so a batch
// depends only on (source options, context, seed): the worker threads that prefetch batches
// (batch_queue.h) give the same batches whatever their number.
struct SampleRequest {
  int64_t batch = 1;   // samples
  int64_t length = 1;  // time steps each
  uint64_t seed = 0;
};

// A series a source holds, whole: what evaluation forecasts the end of.
struct StoredSeries {
  std::string name;
  std::vector<std::string> columns;        // one name per variate
  std::string frequency;                   // "" when the source has no times for it
  std::vector<std::vector<float>> values;  // [variate][step], NaN = unobserved
  std::vector<int64_t> roles;              // a VariateRole per variate; empty: every variate a target
  std::vector<double> statics = {};        // its static covariates (describe()'s "static_covariates" order)
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  // Called concurrently from several threads: a source keeps no mutable state across calls.
  virtual Batch sample(const SampleRequest& request) const = 0;
  // What the source holds or generates, for config.json and `orrery data` (series counts,
  // files, families and their weights...). Empty when there is nothing beyond the options.
  virtual Json describe() const { return Json::object(); }
  // Every series the source reads from files, whole: both splits, and the steps exclude_last
  // keeps from training (evaluation scores exactly those). Generators hold none: empty.
  virtual std::vector<StoredSeries> stored_series() const { return {}; }
  // The most steps of one series a sample can hold: the longest series (or part of one) the
  // split draws from (a mixture: its worst source's). Training refuses a source whose longest
  // series is too short for the model to learn anything from (it would train on nothing, with a
  // loss of 0). nullopt: no bound (generators make series as long as asked).
  virtual std::optional<int64_t> longest_series() const { return std::nullopt; }
  // The static covariates its batches carry (Batch::statics), by name and in order; empty: none.
  // Training checks them against the model's, name for name.
  virtual std::vector<std::string> static_covariates() const { return {}; }
  // Text to values and back, for a source whose values are token ids: what generation starts
  // from and what it gives back (model:generate). encode_text's values (1-D) begin with the
  // source's BOS. A source of series holds no text: the defaults throw.
  virtual at::Tensor encode_text(std::string_view text) const {
    (void)text;
    throw Error("it holds no text (DataSource::encode_text)");
  }
  virtual std::string decode_text(const at::Tensor& values) const {
    (void)values;
    throw Error("it holds no text (DataSource::decode_text)");
  }
};

using DataSourceFactory = std::unique_ptr<DataSource> (*)(const Json& options, const DataContext&);

// A seed for sub-stream `index` of `seed` (splitmix64 of both): how a batch seed is derived
// from the run's seed and the batch number, and a sample's from its batch's.
inline uint64_t mix_seed(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace orrery
