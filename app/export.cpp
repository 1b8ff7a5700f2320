// `orrery export --model M --out DIR`: a model in its architecture's released checkpoint layout,
// for the Python ecosystem (export_model.h): a Toto 2.0 model as a Hugging Face folder that the
// released `toto-2` package loads with Toto2Model.from_pretrained(DIR).
#include <cstdio>

#include "commands.h"
#include "orrery/error.h"
#include "orrery/host/export_model.h"
#include "orrery/host/load_model.h"
#include "orrery/host/registry.h"

namespace orrery {

int cmd_export(const std::vector<std::string>& args) {
  if (args.empty() || wants_help(args)) {
    std::fputs("usage: orrery export --model PATH --out DIR\n\n"
               "Writes the model at PATH (a run folder, a model.safetensors written by model:save, or a\n"
               "released checkpoint folder) into DIR, a new or empty folder, in its architecture's released\n"
               "layout: for toto2, a Hugging Face Toto 2.0 folder (config.json, model.safetensors with the\n"
               "released names and tau buffers) that Python loads with\n"
               "  from toto2 import Toto2Model; Toto2Model.from_pretrained(DIR)\n"
               "A setting the layout cannot hold is refused, naming it (a u-muP depth_alpha other than 0.5,\n"
               "another head, covariate embeddings, ...). docs/plugins.md has the details.\n",
               args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  std::string model_path, out;
  for (size_t i = 0; i < args.size(); ++i) {
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw Error("export: " + args[i] + " needs a value");
      return args[++i];
    };
    if (args[i] == "--model") model_path = value();
    else if (args[i] == "--out") out = value();
    else throw Error("export: unknown argument '" + args[i] + "' (see orrery export --help)");
  }
  if (model_path.empty() || out.empty()) throw Error("export: --model and --out are required (see orrery export --help)");
  Registry& registry = Registry::global();
  for (const auto& p : registry.problems()) std::fprintf(stderr, "orrery: warning: %s\n", p.c_str());
  const auto model = load_model(model_path, registry);
  export_model(*model, registry, out);
  std::printf("wrote %s/config.json and %s/model.safetensors (%s, %lld parameters)\n", out.c_str(), out.c_str(),
              registry.find(PluginKind::architecture, model->spec().arch.name).checkpoint_format->name,
              static_cast<long long>(model->num_parameters()));
  return 0;
}

}  // namespace orrery
