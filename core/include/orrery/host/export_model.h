#pragma once
// A model written out in the released checkpoint layout of its architecture plugin
// (checkpoint_format.h), e.g. a Hugging Face Toto 2.0 folder that the released `toto-2` Python
// package loads: config.json and model.safetensors. The host knows no layout: it asks the model's
// architecture plugin for its format's writer.
#include <string>

#include "orrery/host/model.h"

namespace orrery {
class Registry;

// Writes `model` into `dir`, a new or empty folder (made if missing): config.json and
// model.safetensors, each written whole or not at all. Refused, before anything is written: a
// folder that holds anything or a path that is a file; an architecture with no layout to write;
// a setting the layout cannot hold (the format names it); weights that are not finite.
void export_model(const Model& model, const Registry& registry, const std::string& dir);

}  // namespace orrery
