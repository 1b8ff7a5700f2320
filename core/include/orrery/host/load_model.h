#pragma once
// Opening a trained model from disk, whatever wrote it. Each layout is recognised by what it
// holds, never by guessing:
//  - Orrery weights: a safetensors file written by model:save, whose metadata carries the
//    model's spec;
//  - a folder holding such a model.safetensors: an Orrery run folder (its config.json is the
//    run's, with "model" and "train") or any folder a script saved into;
//  - a released checkpoint folder in a layout an architecture plugin reads
//    (checkpoint_format.h), e.g. Hugging Face Toto 2.0: config.json plus model.safetensors, or
//    model.safetensors.index.json and its shards.
// Anything else is an error that says what the path holds and what was expected.
#include <memory>
#include <string>

#include "orrery/host/model.h"

namespace orrery {
class Registry;

// `arch_options` are added to the architecture's options before the weights load (variate_roles
// = true to fine-tune a checkpoint with covariates): a parameter they add must start at zero, so
// the model computes exactly what the checkpoint does until it trains.
std::unique_ptr<Model> load_model(const std::string& path, const Registry& registry,
                                  const std::string& device = "cpu", const Json& arch_options = Json::object());

}  // namespace orrery
