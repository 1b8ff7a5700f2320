#pragma once
// What one forward pass tells the shared ops beyond their input. The host builds one per call
// (Model::loss, Model::forecast, a coordinate check) and hands it down through the architecture
// and the head; nothing in it outlives the call, so two models in one process, or one model in
// two process groups, never share it.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "orrery/precision.h"

namespace orrery {

// One named op output of a forward pass: its RMS and, against an earlier pass on the same batch,
// the RMS of its change (how far training has moved it: muP's "update" of an activation).
struct ActivationRecord {
  std::string name;
  double rms = 0;
  double change = std::numeric_limits<double>::quiet_NaN();  // NaN: no earlier pass given
  at::Tensor value;  // the activation itself, when the probe keeps it
};

// Every named op output of a forward pass, in order: what a coordinate check reads, without hooks
// in the architectures. `keep` holds each activation (for a later probe's `since`); `since` is an
// earlier pass's records on the same batch, matched by position and name.
class ActivationProbe {
 public:
  explicit ActivationProbe(bool keep = false, const std::vector<ActivationRecord>* since = nullptr)
      : keep_(keep), since_(since) {}
  void record(const std::string& name, const at::Tensor& x);
  const std::vector<ActivationRecord>& records() const { return records_; }
 private:
  bool keep_;
  const std::vector<ActivationRecord>* since_;
  std::vector<ActivationRecord> records_;
};

// How the training loss weighs the steps of each target patch. A forecast shorter than a patch
// is read from the first steps of its first output patch only, while the reference's loss weighs
// all P steps alike: early_weight on the first early_steps steps moves the loss toward what short
// horizons score. The loss stays a weighted mean, so its scale does not change. The default
// (uniform) is the reference's loss, bit for bit.
struct StepWeights {
  int64_t early_steps = 0;  // 0 = uniform
  double early_weight = 1;
  bool uniform() const { return early_steps == 0 || early_weight == 1; }
};

struct ForwardContext {
  // Rows of the global batch per local row: world size x gradient-accumulation steps. u-muP's
  // batch-dependent gradient scales are taken over the global batch.
  int64_t batch_multiplier = 1;
  // When set, named ops record the RMS of their outputs into it.
  ActivationProbe* probe = nullptr;
  // bf16: Model runs the architecture and head forward under autocast (precision.h).
  Precision precision = Precision::fp32;
  // False while a graph records the pass (graphed_call.h): ops must not read device values on
  // the host, so a branch on data (a fast path when nothing is masked) takes its general side.
  bool host_sync = true;
  // Model::loss's weights over each target patch's steps (training only: validation is uniform).
  StepWeights step_weights = {};

  void record(const std::string& name, const at::Tensor& x) const {
    if (probe && !name.empty()) probe->record(name, x);
  }
};

}  // namespace orrery
