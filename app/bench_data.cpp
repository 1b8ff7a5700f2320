// `orrery bench data`: how long a data source takes to draw a batch, on one thread and through
// the prefetching queue with N workers, against the training step it must keep ahead of.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "orrery/host/batch_queue.h"
#include "orrery/host/data_mixture.h"
#include "orrery/error.h"
#include "orrery/host/registry.h"

namespace orrery {
namespace {

// Toto 2.0's pretraining mix, as scripts/zero_shot.lua draws it.
const char* kDefaultData =
    R"({"name": "mixture", "options": {"min_context": 64, "sources": [
         {"name": "synthetic", "options": {"weight": 57.5}},
         {"name": "observability", "options": {"weight": 42.5}}]}})";

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int cmd_bench_data(const std::vector<std::string>& args) {
  if (wants_help(args)) {
    std::printf(
        "usage: orrery bench data [--data NAME|JSON] [--batch 64] [--length 2048] [--batches 20]\n"
        "                         [--workers 1,2,4] [--step-ms 36]\n\n"
        "Draws --batches batches of --batch x --length steps: first one at a time on this thread\n"
        "(the time per batch), then through the training queue with each number of --workers (the\n"
        "rate batches arrive at). Each is compared with --step-ms, the training step the data must\n"
        "keep ahead of: 36 ms is a toto2-4m step at batch 64 x 2048 on one H100. --data is a plugin\n"
        "name or a plugin choice as JSON, {\"name\": ..., \"options\": {...}}; the default is the\n"
        "zero-shot script's mixture, 57.5%% synthetic and 42.5%% observability.\n");
    return 0;
  }
  const Json data = Json::parse(kDefaultData);
  PluginSpec spec{data["name"].get<std::string>(), data["options"]};
  int64_t batch = 64, length = 2048, batches = 20;
  double step_ms = 36;
  std::vector<int> workers = {1, 2, 4};
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (i + 1 >= args.size()) throw Error("bench data: " + a + " needs a value (see orrery bench data --help)");
    const std::string v = args[++i];
    if (a == "--data") {
      spec = parse_plugin_choice("bench data: --data", v);
    } else if (a == "--workers") {
      workers.clear();
      size_t start = 0;
      while (start <= v.size()) {
        const size_t comma = std::min(v.find(',', start), v.size());
        const int64_t n = parse_whole_number("bench data: --workers", v.substr(start, comma - start));
        if (n < 1 || n > 64) throw Error("bench data: --workers takes counts from 1 to 64");
        workers.push_back(static_cast<int>(n));
        start = comma + 1;
      }
    } else if (a == "--step-ms") {
      step_ms = std::stod(v);
    } else {
      const int64_t n = parse_whole_number("bench data: " + a, v);
      if (n < 1) throw Error("bench data: " + a + " must be positive");
      if (a == "--batch") batch = n;
      else if (a == "--length") length = n;
      else if (a == "--batches") batches = n;
      else throw Error("bench data: unknown argument '" + a + "' (see orrery bench data --help)");
    }
  }
  auto source = make_data_source(Registry::global(), spec, DataContext{});
  std::printf("bench data: %s, %lld batches of %lld x %lld steps; the step to keep ahead of: %.1f ms\n",
              spec.to_json().dump().c_str(), (long long)batches, (long long)batch, (long long)length, step_ms);

  std::vector<double> ms;
  for (int64_t k = 0; k < batches; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    source->sample({batch, length, mix_seed(1, static_cast<uint64_t>(k))});
    ms.push_back(1e3 * seconds_since(t0));
  }
  std::sort(ms.begin(), ms.end());
  const double one = ms[ms.size() / 2];
  std::printf("one thread: median %.1f ms a batch (min %.1f, max %.1f) = %.2f x the step\n", one, ms.front(),
              ms.back(), one / step_ms);
  for (int w : workers) {
    BatchQueueConfig cfg;
    cfg.batch = batch, cfg.length = length, cfg.seed = 1, cfg.workers = w, cfg.depth = 2 * w;
    const auto t0 = std::chrono::steady_clock::now();
    {
      BatchQueue queue(*source, cfg);
      for (int64_t k = 0; k < batches; ++k) queue.next();
    }
    const double each = 1e3 * seconds_since(t0) / static_cast<double>(batches);
    std::printf("%d worker%s: a batch every %.1f ms = %.2f x the step%s\n", w, w == 1 ? " " : "s", each,
                each / step_ms, each < step_ms ? " (ahead)" : " (behind: the step would wait)");
  }
  return 0;
}

}  // namespace orrery
