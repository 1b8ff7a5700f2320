#pragma once
// What one forward pass tells the shared ops beyond their input. The host builds one per call
// (Model::loss, Model::forecast, a coordinate check) and hands it down through the architecture
// and the head; nothing in it outlives the call, so two models in one process, or one model in
// two process groups, never share it.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace orrery {

// The RMS of every named op output of a forward pass, in order: what a coordinate check reads,
// without hooks in the architectures.
class ActivationProbe {
 public:
  void record(const std::string& name, const at::Tensor& x);
  const std::vector<std::pair<std::string, double>>& values() const { return values_; }
 private:
  std::vector<std::pair<std::string, double>> values_;
};

struct ForwardContext {
  // Rows of the global batch per local row: world size x gradient-accumulation steps. u-muP's
  // batch-dependent gradient scales are taken over the global batch.
  int64_t batch_multiplier = 1;
  // When set, named ops record the RMS of their outputs into it.
  ActivationProbe* probe = nullptr;

  void record(const std::string& name, const at::Tensor& x) const {
    if (probe && !name.empty()) probe->record(name, x);
  }
};

}  // namespace orrery
