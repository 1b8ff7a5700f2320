#pragma once
// Opening a trained model from disk, whatever wrote it:
//  - Orrery's own weights: a model.safetensors written by model:save (its spec is in the
//    metadata), or a folder holding one;
//  - a Toto 2.0 checkpoint in the Hugging Face layout, as Datadog publishes them: a folder with
//    config.json and model.safetensors (or model.safetensors.index.json and its shards), under
//    the released code's parameter names.
#include <memory>
#include <string>

#include "orrery/json.h"
#include "orrery/model.h"

namespace orrery {
class Registry;

std::unique_ptr<Model> load_model(const std::string& path, const Registry& registry,
                                  const std::string& device = "cpu");

// The Orrery spec of a Toto 2.0 config.json (Toto2ModelConfig): the toto2 architecture, the
// umup parametrisation with the config's residual rule, and the nine-level quantile head.
// Settings this port does not implement are refused by name; `path` labels the errors.
ModelSpec toto2_spec_from_config(const Json& config, const std::string& path);

}  // namespace orrery
