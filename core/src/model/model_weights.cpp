#include <ATen/ATen.h>

#include <filesystem>
#include <set>

#include "orrery/error.h"
#include "orrery/host/model.h"
#include "orrery/safetensors.h"

namespace orrery {

void Model::save_weights(const std::string& path) const {
  require_finite_weights(path);
  NamedTensors tensors;
  for (const auto& p : params_) tensors.emplace_back(p.info.name, p.tensor);
  save_safetensors(path, tensors, {{"format", "pt"}, {"orrery_model", spec_.to_json().dump()}});
}

void Model::require_finite_weights(const std::string& path) const {
  // A NaN model is refused here as loading refuses it: nothing written can hold one.
  std::vector<std::string> bad;
  for (const auto& p : params_)
    if (!at::isfinite(p.tensor).all().item<bool>()) bad.push_back("'" + p.info.name + "'");
  if (!bad.empty()) {
    std::string names;
    for (size_t i = 0; i < bad.size() && i < 4; ++i) names += (i ? ", " : "") + bad[i];
    if (bad.size() > 4) names += " and " + std::to_string(bad.size() - 4) + " more";
    throw Error("cannot save " + path + ": the weights " + names + " hold NaN or infinite values (a diverged run?)");
  }
}

namespace {
// A checkpoint folder (runs/NAME/checkpoints/step-N) stands for the weights file it holds.
std::string weights_file(const std::string& path) {
  return std::filesystem::is_directory(path) ? (std::filesystem::path(path) / "model.safetensors").string() : path;
}
}  // namespace

void Model::load_weights(const std::string& given) {
  const std::string path = weights_file(given);
  load_weights(load_safetensors(path), path);
}

std::unique_ptr<Model> Model::from_file(const std::string& path, const Registry& registry,
                                        const std::string& device, const Json& arch_options) {
  SafetensorsFile file = load_safetensors(path);
  auto it = file.metadata.find("orrery_model");
  if (it == file.metadata.end())
    throw Error(path + " has no Orrery model spec in its metadata (was it written by model:save?)");
  ModelSpec spec;
  try {
    spec = ModelSpec::from_json(Json::parse(it->second));
  } catch (const std::exception& e) {
    throw Error(path + ": unreadable model spec: " + e.what());
  }
  spec.device = device;
  pin_changed_defaults(spec, registry, SavedBefore::maybe);
  for (const auto& [key, value] : arch_options.items()) spec.arch.options[key] = value;
  auto model = std::make_unique<Model>(spec, registry);
  model->load_weights(file, path, !arch_options.empty());
  return model;
}

void Model::load_weights(const SafetensorsFile& file, const std::string& path, bool new_zeros) {
  check_weights(file, path, new_zeros);
  at::NoGradGuard no_grad;  // checked everything first: nothing is half-loaded
  for (auto& p : params_)
    if (const at::Tensor* t = file.find(p.info.name)) p.tensor.copy_(*t);
}

void Model::load_average(const std::vector<std::string>& paths) {
  if (paths.empty()) throw Error("averaging weights needs at least one file");
  // Summed in float64, so the mean of K files rounds once, whatever K and the order.
  std::vector<at::Tensor> sums;
  for (const auto& given : paths) {
    const std::string path = weights_file(given);
    const SafetensorsFile file = load_safetensors(path);
    check_weights(file, path);
    for (size_t i = 0; i < params_.size(); ++i) {
      const at::Tensor t = file.find(params_[i].info.name)->to(at::kDouble);
      if (sums.size() <= i) sums.push_back(t.clone());
      else sums[i].add_(t);
    }
  }
  at::NoGradGuard no_grad;  // every file checked first: nothing is half-loaded
  for (size_t i = 0; i < params_.size(); ++i) params_[i].tensor.copy_(sums[i] / static_cast<double>(paths.size()));
}

void Model::check_weights(const SafetensorsFile& file, const std::string& path, bool new_zeros) const {
  std::set<std::string> expected;
  std::vector<std::string> problems;
  for (const auto& p : params_) {
    expected.insert(p.info.name);
    const at::Tensor* t = file.find(p.info.name);
    if (!t && new_zeros && !p.tensor.any().item<bool>()) continue;  // new, and zero: changes nothing
    if (!t) problems.push_back("missing '" + p.info.name + "'" +
                               (new_zeros ? " (an option added at load may add a parameter only if it starts at zero)" : ""));
    else if (t->sizes() != p.tensor.sizes())
      problems.push_back("'" + p.info.name + "' has shape " + c10::str(t->sizes()) + ", the model expects " +
                         c10::str(p.tensor.sizes()));
    else if (!t->is_floating_point())
      problems.push_back("'" + p.info.name + "' is stored as " + c10::toString(t->scalar_type()) +
                         ", the model's parameter is floating point");
    else if (const int64_t bad = t->isfinite().logical_not().sum().item<int64_t>(); bad > 0)
      problems.push_back("'" + p.info.name + "' holds " + std::to_string(bad) + " non-finite value" +
                         (bad > 1 ? "s" : "") + " (NaN or infinity)");
  }
  for (const auto& [name, t] : file.tensors)
    if (!expected.count(name)) problems.push_back("unexpected '" + name + "'");
  // The scaler's window changes no shape, but weights read through another window's statistics
  // forecast something else.
  if (auto it = file.metadata.find("orrery_model"); it != file.metadata.end()) {
    const Json saved = Json::parse(it->second, nullptr, /*allow_exceptions=*/false);
    // Host settings that change what the weights were trained to read.
    for (const auto& [key, mine] : {std::pair<const char*, int64_t>{"scaler_window", spec_.scaler_window},
                                    std::pair<const char*, int64_t>{"covariate_lags", spec_.covariate_lags}}) {
      const Json was = saved.is_object() ? saved.value(key, Json(0)) : Json(0);
      if (was.is_number_integer() && was.get<int64_t>() != mine)
        problems.push_back(std::string("saved with ") + key + " " + was.dump() + ", the model has " + std::to_string(mine) +
                           " (orrery.load builds a model as it was saved)");
    }
  }
  if (!problems.empty()) {
    std::string msg = path + " does not match this model:";
    for (size_t i = 0; i < problems.size() && i < 8; ++i) msg += (i ? ", " : " ") + problems[i];
    if (problems.size() > 8) msg += " and " + std::to_string(problems.size() - 8) + " more";
    throw Error(msg);
  }
}

}  // namespace orrery
