#pragma once
// Training checkpoints, one folder each: <run>/checkpoints/step-<N>/ holding
//   model.safetensors      the weights as model:save writes them (orrery.load and Python read it)
//   optimizer.safetensors  every optimizer state tensor by name, its counters in the metadata
//   checkpoint.json        the step, the training state (trainer.h TrainState), how long
//                          metrics.jsonl and forecasts.jsonl were at that step, LibTorch's thread
//                          count, the run's config, the size and CRC-32 of each file above,
//                          and the CRC-32 of its own text (record_crc32: its byte counts cut
//                          metrics.jsonl back on resume, so an edit must not pass)
// A checkpoint is written into a temporary folder, every file synced, then renamed into place
// and the parent synced: a step-<N> folder is whole or absent. One damaged later (a flipped
// bit, a truncated file) fails its checks and is skipped with a warning that names it.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "orrery/safetensors.h"
#include "orrery/host/trainer.h"

namespace orrery {
class Model;
class Optimizer;

struct Checkpoint {
  std::string dir;  // the step-<N> folder
  TrainState state;
  int64_t metrics_bytes = 0, forecasts_bytes = 0;
  int threads = 0;  // LibTorch's intra-op threads when it was written
  Json config;      // the config.json of the run that wrote it
};

// What a checkpoint records besides the weights and the optimizer.
struct CheckpointRecord {
  TrainState state;
  int64_t metrics_bytes = 0, forecasts_bytes = 0;
  Json config = Json::object();  // the run's config.json
  std::vector<int64_t> keep_steps;  // checkpoints of these steps are kept beyond `keep`
};

// Writes the checkpoint of `record.state.step` under run_dir/checkpoints (replacing one of the
// same step), then removes all but the newest `keep`. Throws naming the file when a write fails;
// the checkpoints already there are left as they were.
void write_checkpoint(const std::string& run_dir, const Model& model, const Optimizer& optimizer,
                      const CheckpointRecord& record, int64_t keep);
// The same with the optimizer's state given: a sharded optimizer's, gathered whole (zero.h).
void write_checkpoint(const std::string& run_dir, const Model& model, const NamedTensors& optimizer_state,
                      const Json& optimizer_counters, const CheckpointRecord& record, int64_t keep);

// The newest checkpoint of run_dir whose files pass their checks, loaded into `model` and
// `optimizer`; each one skipped (damaged, torn) is reported through `warn` with why. A checkpoint
// that is whole but does not fit the model or optimizer is an error, not skipped: the run
// changed. nullopt when there is none to load. `share`: the optimizer holds a rank's share of
// the saved state (zero.h) and takes the tensors it has.
std::optional<Checkpoint> load_latest_checkpoint(const std::string& run_dir, Model& model, Optimizer& optimizer,
                                                 const std::function<void(const std::string&)>& warn,
                                                 bool share = false);

// The checkpoint in `dir` (a step-<N> folder), checked and loaded; an error naming it and what
// is wrong when it is damaged or does not fit.
Checkpoint load_checkpoint(const std::string& dir, Model& model, Optimizer& optimizer, bool share = false);
// Its checkpoint.json, checked against its files, nothing loaded: throws saying what is wrong.
Checkpoint read_checkpoint_record(const std::string& dir);
// After a diverged run (TrainingDiverged): the checkpoints of step `from` and later hold weights
// that gave non-finite losses, so each is renamed diverged-step-<N> (kept for inspection, never
// loaded by a resume). Returns the steps set aside.
std::vector<int64_t> set_aside_checkpoints(const std::string& run_dir, int64_t from);

// The step-<N> folders of run_dir, oldest first (not checked).
std::vector<std::string> list_checkpoints(const std::string& run_dir);

// CRC-32 (IEEE 802.3) of a file's bytes; throws naming it when it cannot be read.
uint32_t file_crc32(const std::string& path);

}  // namespace orrery
