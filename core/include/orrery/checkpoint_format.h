#pragma once
// A checkpoint layout an architecture plugin reads, and may write, besides Orrery's own weights: a
// released model's folder (config.json + safetensors under the release's parameter names), such
// as a Hugging Face Toto 2.0 checkpoint. The host knows no such layout; the architecture plugin
// exports one with ORRERY_CHECKPOINT_FORMAT (plugin.h), the registry finds it, load_model asks
// each format whether it recognises a folder's config.json, and export_model asks the model's
// architecture for its layout.
#include <string>

#include "orrery/json.h"
#include "orrery/model_spec.h"
#include "orrery/safetensors.h"

namespace orrery {
class Parametrisation;

struct CheckpointFormat {
  const char* name;  // what a user calls it, e.g. "Hugging Face Toto 2.0"
  // Whether config.json describes a model in this format. Cheap; never throws.
  bool (*recognises)(const Json& config);
  // The Orrery model spec config.json describes. Settings the architecture cannot honour are
  // refused; errors name `path` and the field at fault.
  ModelSpec (*spec)(const Json& config, const std::string& path);
  // The file's tensors that are not parameters (buffers the spec determines, e.g. residual
  // coefficients) are checked against the model's parametrisation and removed; the rest must
  // then be the model's parameters by name. Errors name `path` and the tensor.
  void (*take_buffers)(NamedTensors& tensors, const ModelSpec& spec, const Parametrisation& param,
                       const std::string& path);
  // The other way (nullptr: the format is read only): config.json for a model of `spec`, whose
  // options arrive validated (every one present), and its tensors: `tensors` holds the model's
  // parameters by name, which the format renames, folds multipliers into and completes with the
  // buffers the layout keeps. What the layout cannot compute is an error naming the option.
  Json (*write)(const ModelSpec& spec, const Parametrisation& param, NamedTensors& tensors);
};

}  // namespace orrery
