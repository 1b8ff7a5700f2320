#pragma once
// A run's random streams, each derived from the run seed by its name. A stream's seed depends
// only on the run seed and the stream's own name, so adding a stream, or drawing more from one,
// never moves another: training with or without validation draws the same batches and masks.
#include <cstdint>
#include <string_view>

#include "orrery/data_source.h"

namespace orrery {

// The seed of the stream `name` of a run seeded `run_seed`: mix_seed over the name's 64-bit
// FNV-1a hash.
inline uint64_t stream_seed(uint64_t run_seed, std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return mix_seed(run_seed, h);
}

// How a run's streams are derived, as its config.json records it ("seed_streams"): a run whose
// folder says otherwise (or nothing: it predates the names) drew other data and masks from its
// seed, so resuming it under this scheme is refused (experiment.h).
inline constexpr const char* kSeedStreams = "named";

struct RunSeeds {
  uint64_t data;                // the training data source (DataContext::seed)
  uint64_t validation;          // the held-out data source: other series than the training's
  uint64_t batches;             // batch k of the run is drawn with mix_seed(batches, k)
  uint64_t validation_batches;  // held-out batch i with mix_seed(validation_batches, i)
  uint64_t masking;             // the contiguous patch masks' generator

  static RunSeeds of(uint64_t run_seed) {
    return {stream_seed(run_seed, "data"), stream_seed(run_seed, "validation"), stream_seed(run_seed, "batches"),
            stream_seed(run_seed, "validation batches"), stream_seed(run_seed, "masking")};
  }
};

}  // namespace orrery
