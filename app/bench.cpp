// `orrery bench forecast`: how long one forecast of a Toto 2.0 preset takes, with random weights
// (the cost does not depend on their values) on a seeded synthetic batch.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bench_common.h"
#include "commands.h"
#include "orrery/error.h"
#include "orrery/host/model.h"
#include "orrery/host/registry.h"

namespace orrery {

namespace {

struct BenchOptions {
  std::string preset = "toto2-4m", device = "cpu";
  int64_t context = 4096, horizon = 1024, batch = 8, variates = 1, repeats = 10, warmup = 2;
  int64_t decode_block_size = 0;
  Precision precision = Precision::fp32;
  bool graph = false;  // ForecastOptions::graph
  std::string reference;  // a command that times the same forecast elsewhere (see --help)
};

// The reference command with the bench's options.
std::string reference_command(const BenchOptions& o) {
  return o.reference + bench::flag("--preset", o.preset) + bench::flag("--device", o.device) +
         bench::flag("--precision", precision_name(o.precision)) + bench::flag("--context", o.context) +
         bench::flag("--horizon", o.horizon) + bench::flag("--batch", o.batch) +
         bench::flag("--variates", o.variates) + bench::flag("--repeats", o.repeats) +
         bench::flag("--warmup", o.warmup) + bench::flag("--decode-block-size", o.decode_block_size) +
         bench::flag("--threads", at::get_num_threads());
}

}  // namespace

int cmd_bench(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "data") return cmd_bench_data({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "train") return cmd_bench_train({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "generate") return cmd_bench_generate({args.begin() + 1, args.end()});
  if (!args.empty() && !wants_help(args) && args[0] != "forecast") {
    std::fprintf(stderr, "orrery: bench: unknown benchmark '%s' (bench data, bench train, bench generate or "
                 "bench forecast; "
                 "see orrery bench --help)\n",
                 args[0].c_str());
    return 2;
  }
  if (args.empty() || wants_help(args)) {
    std::fprintf(args.empty() ? stderr : stdout,
        "usage: orrery bench data [options]    (see orrery bench data --help)\n"
        "       orrery bench train [options]   (see orrery bench train --help)\n"
        "       orrery bench generate [options] (see orrery bench generate --help)\n"
        "       orrery bench forecast [--preset toto2-4m] [--context 4096] [--horizon 1024]\n"
        "                             [--batch 8] [--variates 1] [--repeats 10] [--warmup 2]\n"
        "                             [--decode-block-size 0] [--device cpu|cuda]\n"
        "                             [--precision fp32|bf16] [--graph off|on]\n"
        "                             [--reference COMMAND]\n\n"
        "Times Model::forecast (scaler, patching, one pass or block decoding, head, inverse\n"
        "transform) of a preset with random u-muP weights on a seeded batch of sine series, and\n"
        "prints the median, minimum and maximum latency over the repeats after the warm-up runs.\n"
        "--precision bf16 runs the model under bfloat16 autocast (the scaler stays float64).\n"
        "--graph on records the forward once and replays it (a CUDA graph on a GPU; the first\n"
        "warm-up run records it).\n\n"
        "--reference COMMAND runs COMMAND with the same options (and --threads) after Orrery's\n"
        "runs, reads `median_ms X` from its last line and prints the ratio. The released Toto 2.0\n"
        "code in PyTorch: --reference \"PYTHON tests/reference/bench_toto2_reference.py\".\n");
    return wants_help(args) ? 0 : 2;
  }
  BenchOptions o;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (i + 1 >= args.size()) throw Error("bench: " + a + " needs a value (see orrery bench --help)");
    const std::string v = args[++i];
    if (a == "--preset") o.preset = v;
    else if (a == "--device") o.device = v;
    else if (a == "--reference") o.reference = v;
    else if (a == "--precision") o.precision = parse_precision(v, "bench: --precision");
    else if (a == "--graph") o.graph = bench::parse_on_off("bench: --graph", v);
    else {
      const int64_t n = parse_whole_number("bench: " + a, v);
      if (a == "--context") o.context = n;
      else if (a == "--horizon") o.horizon = n;
      else if (a == "--batch") o.batch = n;
      else if (a == "--variates") o.variates = n;
      else if (a == "--repeats") o.repeats = n;
      else if (a == "--warmup") o.warmup = n;
      else if (a == "--decode-block-size") o.decode_block_size = n;
      else throw Error("bench: unknown argument '" + a + "' (see orrery bench --help)");
    }
  }
  if (o.context < 1 || o.horizon < 1 || o.batch < 1 || o.variates < 1 || o.repeats < 1 || o.warmup < 0)
    throw Error("bench: --context, --horizon, --batch, --variates and --repeats must be positive");

  Registry& registry = Registry::global();
  ModelSpec spec;
  spec.arch = {"toto2", {{"preset", o.preset}}};
  spec.param = {"umup", Json::object()};
  spec.device = o.device;
  Model model(spec, registry);

  const Batch b = bench::sine_batch(o.batch, o.variates, o.context, model.device());
  ForecastOptions fo;
  fo.decode_block_size = o.decode_block_size;
  fo.precision = o.precision;
  fo.graph = o.graph;

  std::printf("bench forecast: %s (%.2fM parameters) on %s, %d threads; batch %lld x %lld variates, "
              "context %lld, horizon %lld, %s, %s%s\n",
              o.preset.c_str(), model.num_parameters() / 1e6, o.device.c_str(), at::get_num_threads(),
              (long long)o.batch, (long long)o.variates, (long long)o.context, (long long)o.horizon,
              o.decode_block_size ? ("decode block " + std::to_string(o.decode_block_size)).c_str() : "single pass",
              precision_name(o.precision), o.graph ? ", graphed" : "");
  // The forecast comes back on the CPU, so each run ends synchronised whatever the device.
  const bench::Timing t = bench::time_runs(o.warmup, o.repeats, model.device(), [&] {
    Forecast f = model.forecast(b.values, b.observed, b.series_ids, o.horizon, fo);
    if (!f.quantiles.isfinite().all().item<bool>()) throw Error("bench: the forecast is not finite");
  });
  std::printf("latency: median %.1f ms, min %.1f ms, max %.1f ms over %lld runs (%lld warm-up)\n", t.median,
              t.min, t.max, (long long)o.repeats, (long long)o.warmup);
  std::printf("throughput: %.1f series/s, %.0f forecast steps/s\n",
              o.batch * o.variates * 1000.0 / t.median, o.batch * o.variates * o.horizon * 1000.0 / t.median);
  if (!o.reference.empty()) {
    const double ref = bench::run_reference(reference_command(o)).median_ms;
    std::printf("reference: median %.1f ms; Orrery / reference = %.2f\n", ref, t.median / ref);
  }
  return 0;
}

}  // namespace orrery
