#pragma once
// What a coordinate check measures at each step: the RMS of every named activation (each
// linear map's output, each residual stream, the head) on one fixed batch.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "orrery/forward_context.h"
#include "orrery/model_spec.h"

namespace orrery {
class Model;
class Registry;

// The batch is `batch` series of `length` steps drawn from a fresh `data` source seeded with
// `seed`, so calls at different training steps measure the same inputs. In forward order,
// without gradients. Errors name what is out of range.
// `keep` and `since` as ActivationProbe's.
std::vector<ActivationRecord> measure_activations(Model& model, const Registry& registry, const PluginSpec& data,
                                                  int64_t batch, int64_t length, uint64_t seed, bool keep = false,
                                                  const std::vector<ActivationRecord>* since = nullptr);

}  // namespace orrery
