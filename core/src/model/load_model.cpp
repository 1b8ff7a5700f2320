#include "orrery/host/load_model.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "orrery/error.h"
#include "orrery/host/registry.h"
#include "orrery/host/run_store.h"
#include "orrery/safetensors.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

// Every tensor of a checkpoint folder: one model.safetensors, or the shards its index names.
SafetensorsFile read_weights(const fs::path& dir) {
  const fs::path index = dir / "model.safetensors.index.json";
  if (!fs::exists(index)) return load_safetensors((dir / "model.safetensors").string());
  const Json j = read_json_file(index.string());
  if (!j.contains("weight_map") || !j["weight_map"].is_object())
    throw Error(index.string() + " has no weight_map object");
  std::set<std::string> shards;
  for (const auto& [name, shard] : j["weight_map"].items()) {
    const fs::path file(shard.is_string() ? shard.get<std::string>() : "");
    if (file.empty() || file.is_absolute() || file.has_parent_path())
      throw Error(index.string() + ": weight_map of '" + name + "' must name a file beside the index, got " + shard.dump());
    shards.insert(file.string());
  }
  SafetensorsFile all;
  for (const auto& shard : shards) {
    SafetensorsFile part = load_safetensors((dir / shard).string());
    for (auto& t : part.tensors) all.tensors.push_back(std::move(t));
  }
  return all;
}

bool holds_orrery_spec(const fs::path& weights) {
  return read_safetensors_metadata(weights.string()).count("orrery_model") > 0;
}

// The config.json an Orrery run writes: {"model": {"arch": ...}, "train": {...}, ...}.
bool is_run_config(const Json& c) {
  return c.is_object() && c.contains("model") && c["model"].is_object() && c["model"].contains("arch") &&
         c.contains("train");
}

std::unique_ptr<Model> load_released(const fs::path& dir, const Json& config, const PluginInfo& reader,
                                     const Registry& registry, const std::string& device, const Json& arch_options) {
  const CheckpointFormat& format = *reader.checkpoint_format;
  ModelSpec spec = format.spec(config, (dir / "config.json").string());
  spec.device = device;
  for (const auto& [key, value] : arch_options.items()) spec.arch.options[key] = value;
  auto model = std::make_unique<Model>(spec, registry);
  SafetensorsFile file = read_weights(dir);
  format.take_buffers(file.tensors, spec, model->parametrisation(), dir.string());
  model->load_weights(file, dir.string(), !arch_options.empty());
  return model;
}

std::unique_ptr<Model> load_folder(const fs::path& dir, const Registry& registry, const std::string& device,
                                   const Json& arch_options) {
  const fs::path weights = dir / "model.safetensors", config_path = dir / "config.json";
  const bool has_weights = fs::is_regular_file(weights), has_config = fs::is_regular_file(config_path);
  if (has_weights && holds_orrery_spec(weights))
    return Model::from_file(weights.string(), registry, device, arch_options);
  if (!has_config) {
    if (has_weights)
      throw Error(weights.string() + " was not written by model:save (its metadata holds no Orrery "
                  "model spec) and " + dir.string() + " has no config.json to say what it is");
    if (fs::is_regular_file(dir / "model.safetensors.index.json"))
      throw Error(dir.string() + " holds a sharded checkpoint but no config.json to say what model it is");
    throw Error(dir.string() + " holds no model: expected model.safetensors (Orrery weights, "
                "written by model:save) or config.json with weights (a released checkpoint)");
  }
  const Json config = read_json_file(config_path.string());
  if (is_run_config(config))
    throw Error(dir.string() + " is an Orrery run folder without saved weights: " +
                (has_weights ? weights.string() + " was not written by model:save"
                             : std::string("it has no model.safetensors")) +
                ". A script saves them with model:save(run.run_dir .. \"/model.safetensors\")");
  std::string formats;
  for (const PluginInfo* reader : registry.checkpoint_readers()) {
    if (reader->checkpoint_format->recognises(config)) return load_released(dir, config, *reader, registry, device, arch_options);
    formats += std::string(formats.empty() ? "" : ", ") + reader->checkpoint_format->name +
               " (architecture plugin '" + reader->name + "')";
  }
  throw Error(config_path.string() + " is neither an Orrery run's config nor a checkpoint layout "
              "any plugin reads (" + (formats.empty() ? std::string("no plugin reads one") : "readers: " + formats) + ")");
}

}  // namespace

std::unique_ptr<Model> load_model(const std::string& path, const Registry& registry,
                                  const std::string& device, const Json& arch_options) {
  const fs::path p(path);
  std::error_code ec;
  const auto status = fs::status(p, ec);
  if (!fs::exists(status)) throw Error("no model at " + path + " (no such file or folder)");
  if (!arch_options.is_object()) throw Error("loading " + path + ": architecture options must be an object");
  if (fs::is_directory(status)) return load_folder(p, registry, device, arch_options);
  if (p.filename() == "config.json")
    return load_folder(p.has_parent_path() ? p.parent_path() : ".", registry, device, arch_options);
  if (!holds_orrery_spec(p))
    throw Error(path + " is a safetensors file without an Orrery model spec in its metadata (it "
                "was not written by model:save); a released checkpoint is a folder with "
                "config.json: give the folder");
  return Model::from_file(path, registry, device, arch_options);
}

}  // namespace orrery
