#include "orrery/host/export_model.h"

#include <filesystem>

#include "orrery/checkpoint_format.h"
#include "orrery/error.h"
#include "orrery/host/registry.h"
#include "orrery/host/run_store.h"
#include "orrery/safetensors.h"

namespace fs = std::filesystem;

namespace orrery {

void export_model(const Model& model, const Registry& registry, const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw Error("export: " + dir + " is a file; an export goes into a new or empty folder");
  if (fs::is_directory(dir, ec) && !fs::is_empty(dir, ec))
    throw Error("export: " + dir + " is not empty; an export goes into a new or empty folder, so nothing in it is overwritten");

  const ModelSpec& given = model.spec();
  const PluginInfo& arch = registry.find(PluginKind::architecture, given.arch.name);
  if (!arch.checkpoint_format || !arch.checkpoint_format->write)
    throw Error("export: architecture plugin '" + given.arch.name + "' has no released checkpoint layout to write " +
                (arch.checkpoint_format ? std::string("(it reads ") + arch.checkpoint_format->name + " but does not write it)"
                                        : std::string("(it exports no checkpoint format)")));
  // The format sees every option, as the plugins were built with them.
  ModelSpec spec = given;
  for (auto [kind, choice] : {std::pair{PluginKind::architecture, &spec.arch}, {PluginKind::head, &spec.head},
                              {PluginKind::parametrisation, &spec.param}})
    choice->options = registry.find(kind, choice->name).schema.validate(choice->options, std::string(kind_name(kind)) +
                                                                         " plugin '" + choice->name + "'");

  model.require_finite_weights(dir);
  NamedTensors tensors;
  for (const auto& p : model.params()) tensors.emplace_back(p.info.name, p.tensor.detach().to(at::kCPU).contiguous());
  const Json config = arch.checkpoint_format->write(spec, model.parametrisation(), tensors);

  const bool made = !fs::exists(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) throw Error("export: cannot make " + dir + ": " + ec.message());
  try {
    save_safetensors((fs::path(dir) / "model.safetensors").string(), tensors, {{"format", "pt"}});
    write_json_file((fs::path(dir) / "config.json").string(), config);
  } catch (...) {
    fs::remove(fs::path(dir) / "model.safetensors", ec);  // the folder was empty: leave it so
    if (made) fs::remove(dir, ec);
    throw;
  }
}

}  // namespace orrery
