// `orrery bench forecast`: how long one forecast of a Toto 2.0 preset takes, with random weights
// (the cost does not depend on their values) on a seeded synthetic batch.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "orrery/error.h"
#include "orrery/model.h"
#include "orrery/registry.h"

namespace orrery {

namespace {

struct BenchOptions {
  std::string preset = "toto2-4m", device = "cpu";
  int64_t context = 4096, horizon = 1024, batch = 8, variates = 1, repeats = 10, warmup = 2;
  int64_t decode_block_size = 0;
  std::string reference;  // a command that times the same forecast elsewhere (see --help)
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Runs the reference command with the bench's options; returns the median it reports.
double run_reference(const BenchOptions& o) {
  auto arg = [](const char* flag, int64_t v) { return std::string(" ") + flag + " " + std::to_string(v); };
  const std::string cmd = o.reference + " --preset " + o.preset + " --device " + o.device +
                          arg("--context", o.context) + arg("--horizon", o.horizon) +
                          arg("--batch", o.batch) + arg("--variates", o.variates) +
                          arg("--repeats", o.repeats) + arg("--warmup", o.warmup) +
                          arg("--decode-block-size", o.decode_block_size) +
                          arg("--threads", at::get_num_threads()) + " 2>&1";
  std::printf("reference: %s\n", cmd.c_str());
  std::fflush(stdout);
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw Error("bench: cannot run the reference command");
  std::string out, last;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf, last = buf;
  const int status = pclose(p);
  double ms = 0;
  if (status != 0 || std::sscanf(last.c_str(), "median_ms %lf", &ms) != 1)
    throw Error("bench: the reference command failed or printed no `median_ms X` line:\n" + out);
  return ms;
}

}  // namespace

int cmd_bench(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "data") return cmd_bench_data({args.begin() + 1, args.end()});
  if (!args.empty() && !wants_help(args) && args[0] != "forecast") {
    std::fprintf(stderr, "orrery: bench: unknown benchmark '%s' (bench data or bench forecast; see orrery bench --help)\n",
                 args[0].c_str());
    return 2;
  }
  if (args.empty() || wants_help(args)) {
    std::fprintf(args.empty() ? stderr : stdout,
        "usage: orrery bench data [options]   (see orrery bench data --help)\n"
        "       orrery bench forecast [--preset toto2-4m] [--context 4096] [--horizon 1024]\n"
        "                             [--batch 8] [--variates 1] [--repeats 10] [--warmup 2]\n"
        "                             [--decode-block-size 0] [--device cpu|cuda]\n"
        "                             [--reference COMMAND]\n\n"
        "Times Model::forecast (scaler, patching, one pass or block decoding, head, inverse\n"
        "transform) of a preset with random u-muP weights on a seeded batch of sine series, and\n"
        "prints the median, minimum and maximum latency over the repeats after the warm-up runs.\n\n"
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

  at::Tensor t = at::arange(o.context, at::kFloat);
  at::Tensor phase = at::arange(o.batch * o.variates, at::kFloat).view({o.batch, o.variates, 1});
  at::Tensor values = 10 + at::sin(t / 24 + phase) + 0.3 * at::sin(t / 168 + 2 * phase);
  at::Tensor observed = at::ones_like(values, at::kBool);
  at::Tensor ids = at::zeros({o.batch, o.variates}, at::kLong);
  ForecastOptions fo;
  fo.decode_block_size = o.decode_block_size;

  std::printf("bench forecast: %s (%.2fM parameters) on %s, %d threads; batch %lld x %lld variates, "
              "context %lld, horizon %lld, %s\n",
              o.preset.c_str(), model.num_parameters() / 1e6, o.device.c_str(), at::get_num_threads(),
              (long long)o.batch, (long long)o.variates, (long long)o.context, (long long)o.horizon,
              o.decode_block_size ? ("decode block " + std::to_string(o.decode_block_size)).c_str() : "single pass");
  std::vector<double> ms;
  for (int64_t r = 0; r < o.warmup + o.repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    Forecast f = model.forecast(values, observed, ids, o.horizon, fo);  // returns on the CPU: synced
    const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!f.quantiles.isfinite().all().item<bool>()) throw Error("bench: the forecast is not finite");
    if (r >= o.warmup) ms.push_back(elapsed);
  }
  const double med = median(ms);
  std::printf("latency: median %.1f ms, min %.1f ms, max %.1f ms over %lld runs (%lld warm-up)\n", med,
              *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()),
              (long long)o.repeats, (long long)o.warmup);
  std::printf("throughput: %.1f series/s, %.0f forecast steps/s\n",
              o.batch * o.variates * 1000.0 / med, o.batch * o.variates * o.horizon * 1000.0 / med);
  if (!o.reference.empty()) {
    const double ref = run_reference(o);
    std::printf("reference: median %.1f ms; Orrery / reference = %.2f\n", ref, med / ref);
  }
  return 0;
}

}  // namespace orrery
