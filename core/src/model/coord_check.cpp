#include "orrery/host/coord_check.h"

#include <ATen/ATen.h>

#include "orrery/host/batch_queue.h"
#include "orrery/host/data_mixture.h"
#include "orrery/data_source.h"
#include "orrery/error.h"
#include "orrery/host/model.h"
#include "orrery/host/registry.h"

namespace orrery {

std::vector<ActivationRecord> measure_activations(Model& model, const Registry& registry, const PluginSpec& data,
                                                  int64_t batch, int64_t length, uint64_t seed, bool keep,
                                                  const std::vector<ActivationRecord>* since) {
  const int64_t P = model.patch_size();
  if (batch < 1 || batch > (1 << 16) || length < 2 * P || length % P != 0 || length > (1 << 24))
    throw Error("measuring activations needs 1 <= batch_size <= 65536 and a context_length of whole patches of " +
                std::to_string(P) + " (at least two), got " + std::to_string(batch) + " and " + std::to_string(length));
  auto source = make_data_source(registry, data, DataContext{seed});
  const Batch b = to_device(source->sample({batch, length, seed}), model.device(), /*non_blocking=*/false);
  return model.activations(b, keep, since);
}

}  // namespace orrery
