// `orrery bench generate`: how fast a model of token ids draws text, with its KV cache and with
// every draw recomputing the sequence, on the same prompts with the same seed.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.h"
#include "commands.h"
#include "orrery/error.h"
#include "orrery/host/model.h"
#include "orrery/host/registry.h"

namespace orrery {

int cmd_bench_generate(const std::vector<std::string>& args) {
  if (wants_help(args)) {
    std::printf(
        "usage: orrery bench generate [--model FILE] [--width 128] [--depth 4] [--heads 4]\n"
        "                             [--vocab 4096] [--prompt 64] [--steps 192] [--batch 4]\n"
        "                             [--repeats 3] [--warmup 1] [--device cpu|cuda]\n\n"
        "Times Model::generate drawing --steps tokens after a prompt of --prompt random ids, for\n"
        "--batch sequences at once, first with the architecture's KV cache (each draw reads only\n"
        "the new token) and then recomputing the whole sequence at every draw, and prints tokens\n"
        "per second for each and their ratio. The model is a `gpt` of the given shape with\n"
        "random weights (the cost does not depend on their values), or the model in --model\n"
        "(e.g. a run's model.safetensors from scripts/nanogpt.lua). Both ways draw greedily,\n"
        "and the bench says how many of the draws agree (all, unless two logits tie to rounding).\n");
    return 0;
  }
  std::string model_file, device = "cpu";
  int64_t width = 128, depth = 4, heads = 4, vocab = 4096, prompt = 64, steps = 192, batch = 4, repeats = 3,
          warmup = 1;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (i + 1 >= args.size()) throw Error("bench generate: " + a + " needs a value (see orrery bench generate --help)");
    const std::string v = args[++i];
    if (a == "--model") model_file = v;
    else if (a == "--device") device = v;
    else {
      const int64_t n = parse_whole_number("bench generate: " + a, v);
      if (a == "--width") width = n;
      else if (a == "--depth") depth = n;
      else if (a == "--heads") heads = n;
      else if (a == "--vocab") vocab = n;
      else if (a == "--prompt") prompt = n;
      else if (a == "--steps") steps = n;
      else if (a == "--batch") batch = n;
      else if (a == "--repeats") repeats = n;
      else if (a == "--warmup") warmup = n;
      else throw Error("bench generate: unknown argument '" + a + "' (see orrery bench generate --help)");
    }
  }
  if (prompt < 1 || steps < 1 || batch < 1 || repeats < 1 || warmup < 0 || vocab < 2)
    throw Error("bench generate: --prompt, --steps, --batch and --repeats must be positive, --vocab at least 2");

  std::unique_ptr<Model> model;
  if (!model_file.empty()) {
    model = Model::from_file(model_file, Registry::global(), device);
    vocab = model->spec().arch.options.value("vocab_size", vocab);
  } else {
    ModelSpec spec;
    spec.arch = {"gpt", {{"vocab_size", vocab}, {"d_model", width}, {"num_layers", depth}, {"num_heads", heads},
                         {"sequence_len", prompt + steps}, {"zero_init_projections", false}}};
    spec.head = {"categorical", {{"classes", vocab}}};
    spec.param = {"sp", Json::object()};
    spec.patch_size = 1;
    spec.device = device;
    model = std::make_unique<Model>(spec, Registry::global());
  }
  at::manual_seed(0);
  const at::Tensor ids = at::randint(0, vocab, {batch, 1, prompt}, at::kLong).to(at::kFloat);
  GenerateOptions o;
  o.temperature = 0;
  std::printf("bench generate: %s (%.2fM parameters) on %s, %d threads; %lld sequences, prompt %lld, %lld drawn\n",
              model_file.empty() ? "gpt with random weights" : model_file.c_str(), model->num_parameters() / 1e6,
              device.c_str(), at::get_num_threads(), (long long)batch, (long long)prompt, (long long)steps);
  at::Tensor drawn[2];
  double tokens_per_s[2];
  for (int cached = 1; cached >= 0; --cached) {
    o.kv_cache = cached == 1;
    const bench::Timing t = bench::time_runs(warmup, repeats, model->device(), [&] {
      drawn[cached] = model->generate(ids, steps, o);  // on the CPU: each run ends synchronised
    });
    tokens_per_s[cached] = static_cast<double>(batch * steps) * 1000.0 / t.median;
    std::printf("%-11s median %.1f ms (min %.1f, max %.1f) over %lld runs: %.0f tokens/s\n",
                cached ? "KV cache:" : "recomputed:", t.median, t.min, t.max, (long long)repeats, tokens_per_s[cached]);
  }
  // Greedy draws agree until the first one that differs (a tie broken by rounding), after
  // which the two continue different sequences: count the agreeing prefix of each sequence.
  const int64_t agree = (drawn[0] == drawn[1]).to(at::kLong).cumprod(-1).sum().item<int64_t>();
  std::printf("KV cache / recomputed = %.2fx tokens/s; greedy draws agree on %lld of %lld tokens\n",
              tokens_per_s[1] / tokens_per_s[0], (long long)agree, (long long)(batch * steps));
  return 0;
}

}  // namespace orrery
