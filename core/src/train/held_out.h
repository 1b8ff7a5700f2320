#pragma once
// Validation and forecast snapshots during training, on fixed held-out batches drawn once from
// the validation source: never from the training data or its random streams, so a run trains
// the same with or without them.
#include <cstdint>
#include <functional>
#include <vector>

#include "orrery/batch.h"
#include "orrery/host/trainer.h"

namespace orrery {
class Model;
class DataSource;
class MetricsBus;

class HeldOut {
 public:
  // `validation` null: nothing is ever due. Held-out batch i is drawn with mix_seed(seed, i).
  HeldOut(Model& model, DataSource* validation, const TrainConfig& cfg, uint64_t seed, MetricsBus& bus,
          TrainState& state);

  // Publishes the "val", "sample" and "forecast" events due after `done` steps (trainer.h); at the end,
  // whichever the last step has not had yet. Returns the seconds it took.
  double after(int64_t done, bool at_end, const std::function<double()>& elapsed);

 private:
  Model& model_;
  const TrainConfig& cfg_;
  MetricsBus& bus_;
  TrainState& st_;
  void publish_sample(int64_t done, const std::function<double()>& elapsed);

  DataSource* text_ = nullptr;  // the validation source, when samples are drawn and it holds text
  bool validate_ = false, snapshots_ = false;
  int64_t val_every_ = 0, forecast_every_ = 0, horizon_ = 0;
  std::vector<Batch> batches_;
  std::string unit_;  // the source's unit when its batches carry units (text: "byte"), else empty
};

}  // namespace orrery
