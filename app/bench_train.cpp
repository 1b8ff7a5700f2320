// `orrery bench train`: how long one training step of a Toto 2.0 preset takes (forward, pinball
// loss, backward, global-norm clip, optimizer step on every parameter) on a seeded synthetic
// batch, and what share of the device's matrix-product rate that is (MFU).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "matmul_peak.h"
#include "commands.h"
#include "orrery/host/data_parallel_step.h"
#include "orrery/error.h"
#include "orrery/host/launch_env.h"
#include "orrery/host/patching.h"
#include "orrery/host/seeds.h"
#include "orrery/host/train_step.h"
#include "orrery/host/process_group.h"
#include "orrery/host/model.h"
#include "orrery/optimizer.h"
#include "orrery/host/registry.h"

namespace orrery {

namespace {

struct TrainOptions {
  std::string preset = "toto2-4m", param = "umup", device = "cpu";
  PluginSpec optimizer{"adamw"};
  Precision precision = Precision::fp32;
  bool graph = false;        // the forward and backward recorded once and replayed (micro_step_graphs.h)
  // Contiguous patch masking as orrery.train draws it, and the step's fault check (train_step.h):
  // on unless --reference, whose PyTorch step has neither.
  std::optional<bool> cpm, host_checks;
  int64_t batch = 8, context = 512, variates = 1, repeats = 10, warmup = 3;
  int64_t nproc = 1;       // data-parallel processes on this machine
  double baseline_ms = 0;  // a rank's: the one-process step it is compared with
  std::string reference;
};

const char* kHelp =
    "usage: orrery bench train [--preset toto2-4m] [--batch 8] [--context 512] [--variates 1]\n"
    "                          [--param umup|sp|mup] [--optimizer adamw] [--precision fp32|bf16]\n"
    "                          [--device cpu|cuda] [--graph off|on] [--cpm on|off]\n"
    "                          [--host-checks on|off] [--repeats 10] [--warmup 3]\n"
    "                          [--reference COMMAND] [--nproc N]\n\n"
    "Times the training step orrery.train runs (the same code: core/include/orrery/host/train_step.h)\n"
    "for a preset with random weights on a seeded batch of sine series (batch x variates x context\n"
    "steps): contiguous patch masks drawn as the trainer draws them (--cpm off: none), forward,\n"
    "9-quantile pinball loss, backward, the global-norm clip to 1, the fault check (the loss and\n"
    "the gradient norm read once; --host-checks off: nothing waits for the device) and one step of\n"
    "the optimizer (a plugin name or {\"name\": ..., \"options\": {...}}) on every parameter. The\n"
    "device is synchronised before each clock read. It prints the step time (median, min, max over\n"
    "the repeats after the warm-up), tokens/s (a token is one patch of 32 steps of one variate) and\n"
    "time steps/s, the peak memory (GPU: the caching allocator's peak; CPU: the process's peak\n"
    "resident set), the model FLOPs of a step, the FLOP/s achieved and the MFU. --graph on records\n"
    "the forward and backward once and replays them every step (a CUDA graph on a GPU, as\n"
    "orrery.train's graph = true; the first warm-up step records); the clip and the optimizer stay\n"
    "eager. What a real run adds around the step (drawing batches, logging, validation) is not\n"
    "timed: docs/performance.md compares the two.\n\n"
    "--reference COMMAND compares with the same step in plain PyTorch, which draws no masks and\n"
    "reads nothing on the host: --cpm and --host-checks are then off (asking for them is an\n"
    "error).\n\n"
    "FLOPs are counted, not measured: 6 per weight-matrix parameter per token (forward 2,\n"
    "backward 4) plus attention's q k^T and A v, 4 S^2 d_model per sequence forward and twice\n"
    "that backward, causal time layers counted at the full S^2 (PaLM's convention); norms,\n"
    "activations, the loss and the optimizer are not counted. MFU = achieved / peak, the peak\n"
    "being the best rate of a square at::mm measured in the same run on the same device in the\n"
    "dtype of the model's matrix products (float32, or bfloat16 for --precision bf16):\n"
    "2048^3 on the CPU, 8192^3 on a GPU.\n\n"
    "--reference COMMAND runs COMMAND twice with the same options (and --threads), appending\n"
    "--mode eager and then --mode compile, reads `median_ms X` from the last line of each and\n"
    "prints the throughput ratio reference ms / Orrery ms (above 1: Orrery is faster). The\n"
    "same step in plain PyTorch: --reference \"PYTHON tests/reference/bench_train_reference.py\".\n\n"
    "--nproc N times the data-parallel step as well: N processes on this machine (orrery launch's\n"
    "variables, Gloo), each with cores / N threads and its own batch of the given size, gradients\n"
    "averaged in buckets overlapped with the backward as orrery.train does. The one-process step\n"
    "above then runs with cores / N threads too, so the scaling efficiency (its step time over\n"
    "the ranks' step time; 1 = the collectives cost nothing) compares like with like; the\n"
    "throughput of the job is N batches a step.\n";

// --nproc's ranks get the one-process step time it measured; nothing else may give one.
double parse_baseline(const std::string& v) {
  const LaunchEnv env = read_launch_env([](const char* name) { return std::getenv(name); });
  char* end = nullptr;
  const double ms = std::strtod(v.c_str(), &end);
  if (!env.distributed() || end == v.c_str() || *end || !(ms > 0) || !std::isfinite(ms))
    throw Error("bench train: --baseline-ms is how --nproc tells its ranks the one-process step time; "
                "it is not an option to give (see orrery bench train --help)");
  return ms;
}

TrainOptions parse(const std::vector<std::string>& args) {
  TrainOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) throw Error("bench train: unexpected argument '" + a + "' (see orrery bench train --help)");
    if (i + 1 >= args.size()) throw Error("bench train: " + a + " needs a value (see orrery bench train --help)");
    const std::string v = args[++i];
    if (a == "--preset") o.preset = v;
    else if (a == "--param") o.param = v;
    else if (a == "--device") o.device = v;
    else if (a == "--reference") o.reference = v;
    else if (a == "--optimizer") o.optimizer = parse_plugin_choice("bench train: --optimizer", v);
    else if (a == "--precision") o.precision = parse_precision(v, "bench train: --precision");
    else if (a == "--graph") o.graph = bench::parse_on_off("bench train: --graph", v);
    else if (a == "--cpm") o.cpm = bench::parse_on_off("bench train: --cpm", v);
    else if (a == "--host-checks") o.host_checks = bench::parse_on_off("bench train: --host-checks", v);
    else if (a == "--baseline-ms") o.baseline_ms = parse_baseline(v);  // set by --nproc for its ranks
    else {
      int64_t* target = a == "--batch" ? &o.batch : a == "--context" ? &o.context : a == "--variates" ? &o.variates
                      : a == "--repeats" ? &o.repeats : a == "--warmup" ? &o.warmup : a == "--nproc" ? &o.nproc : nullptr;
      if (!target) throw Error("bench train: unknown argument '" + a + "' (see orrery bench train --help)");
      *target = parse_whole_number("bench train: " + a, v);
      const bool zero_ok = a == "--warmup";
      if (*target < (zero_ok ? 0 : 1))
        throw Error("bench train: " + a + " must be " + (zero_ok ? "0 or more" : "at least 1") + ", got " + v);
    }
  }
  if (o.context % 32 != 0 || o.context < 64)
    throw Error("bench train: --context must be a multiple of the patch size 32 and at least 64 (two patches: "
                "the loss predicts each patch from the ones before), got " + std::to_string(o.context));
  for (auto [flag, value] : {std::pair{"--cpm", &o.cpm}, std::pair{"--host-checks", &o.host_checks}}) {
    if (!o.reference.empty() && value->value_or(false))
      throw Error(std::string("bench train: the reference's PyTorch step has no patch masking and no fault check, so ") +
                  "--reference times Orrery's without them: drop " + flag + " on (or --reference)");
    *value = value->value_or(o.reference.empty());
  }
  if (o.nproc > 1 && o.graph)
    throw Error("bench train: --nproc times the eager step; drop --graph on (or --nproc)");
  if (!o.reference.empty() && (o.optimizer.name != "adamw" || !o.optimizer.options.empty()))
    throw Error("bench train: the reference step uses AdamW with its defaults; drop --optimizer or --reference");
  return o;
}

// orrery.train's step on the bench's model and optimizer: one micro-batch, clip 1, masks drawn
// as the trainer draws them (from the masking stream of seed 0).
struct BenchStep {
  TrainStep step;
  PatchMasker masker;
  BenchStep(Model& model, Optimizer& opt, const TrainOptions& o, ProcessGroup* world)
      : step(model, opt, {1, 1.0, o.precision, o.graph, *o.host_checks}, world),
        masker({*o.cpm, o.context / model.patch_size(), 16, 0.4}, RunSeeds::of(0).masking) {}
  StepOutcome run(const Batch& batch, int64_t world, int64_t rank) {
    const std::vector<int64_t> variates(static_cast<size_t>(world), batch.values.size(1));
    return step.run({batch}, masker.draw(batch.values.size(0), variates, world, rank, batch.values.device()), {});
  }
};

// The benchmark times steps that were applied: a skipped one would time less than a step.
void check_finite(const StepOutcome& s, const std::string& who) {
  if (s.fault) throw Error("bench train: " + who + "the " + std::string(s.fault) + " is not finite");
  if (!std::isfinite(s.loss_tensor.item<double>())) throw Error("bench train: " + who + "the loss is not finite");
}

// The registry's message for an unknown plugin (it lists the available ones), led by the flag.
void check_plugin(const Registry& registry, PluginKind kind, const std::string& name, const char* flag) {
  try {
    registry.find(kind, name);
  } catch (const Error& e) {
    throw Error(std::string("bench train: ") + flag + ": " + e.what());
  }
}

// The N of the reference's `parameters N` line (-1 when it has none): a check that both sides
// build the same model.
long long reported_parameters(const std::string& output) {
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    long long n = 0;
    if (std::sscanf(line.c_str(), "parameters %lld", &n) == 1) return n;
  }
  return -1;
}

// 1.23 GFLOP: three significant digits with an SI prefix.
std::string si(double v, const char* unit) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
  int k = 0;
  while (std::fabs(v) >= 1000 && k < 5) v /= 1000, ++k;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s%s", v, prefixes[k], unit);
  return buf;
}

std::unique_ptr<Model> bench_model(const TrainOptions& o, const Registry& registry) {
  ModelSpec spec;
  spec.arch = {"toto2", {{"preset", o.preset}}};
  spec.param = {o.param, Json::object()};
  spec.device = o.device;
  return std::make_unique<Model>(spec, registry);
}

// One rank of --nproc's job: orrery.train's data-parallel step (gradients averaged in buckets
// overlapped with the backward, u-muP's scales over the global batch), timed; rank 0 reports it
// against the one-process step the parent measured.
int bench_rank(const TrainOptions& o, const LaunchEnv& env) {
  auto world = ProcessGroup::join(env);
  const Registry& registry = Registry::global();
  auto model = bench_model(o, registry);
  auto opt = registry.create<PluginKind::optimizer>(o.optimizer.name, o.optimizer.options, model->params(),
                                                    model->parametrisation());
  const at::Device device = model->device();
  const Batch batch = bench::sine_batch(o.batch, o.variates, o.context, device);
  BenchStep step(*model, *opt, o, world.get());
  start_together(world.get(), 0, model->params());
  int64_t bytes = 0;
  for (const auto& p : model->params()) bytes += static_cast<int64_t>(p.tensor.nbytes());
  StepOutcome last;
  const bench::Timing t = bench::time_runs(o.warmup, o.repeats, device,
                                           [&] { last = step.run(batch, world->size(), world->rank()); });
  check_finite(last, "rank " + std::to_string(world->rank()) + ": ");
  if (world->rank() != 0) return 0;
  const int64_t n = world->size();
  const double tokens = static_cast<double>(n * o.batch * o.variates * (o.context / model->patch_size()));
  std::printf("data parallel: %lld processes (Gloo), %d threads each, batch %lld each (%lld a step): median %.1f ms, "
              "min %.1f ms, max %.1f ms; %.1f MiB of gradients all-reduced a step in %lld buckets, overlapped with "
              "the backward\n",
              (long long)n, at::get_num_threads(), (long long)o.batch, (long long)(n * o.batch), t.median, t.min, t.max,
              bytes / double(1 << 20), (long long)step.step.buckets());
  std::printf("data-parallel throughput: %.0f tokens/s\n", tokens / (t.median / 1e3));
  // Started by --nproc, which measured the one-process step first (under torchrun: no baseline).
  if (o.baseline_ms > 0) {
    std::printf("speedup: %.2f x one process with the same threads\n", n * o.baseline_ms / t.median);
    std::printf("scaling efficiency: %.2f (one process's step %.1f ms / the ranks' step %.1f ms; 1 = free collectives)\n",
                o.baseline_ms / t.median, o.baseline_ms, t.median);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

int cmd_bench_train(const std::vector<std::string>& args) {
  if (wants_help(args)) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  const TrainOptions o = parse(args);
  Registry& registry = Registry::global();
  check_plugin(registry, PluginKind::parametrisation, o.param, "--param");
  check_plugin(registry, PluginKind::optimizer, o.optimizer.name, "--optimizer");
  const LaunchEnv env = read_launch_env([](const char* name) { return std::getenv(name); });
  if (env.distributed()) return bench_rank(o, env);
  // With --nproc the one-process step gets a rank's share of the cores, as each rank will.
  if (o.nproc > 1)
    at::set_num_threads(static_cast<int>(std::max<int64_t>(1, std::thread::hardware_concurrency() / o.nproc)));
  const auto owned = bench_model(o, registry);
  Model& model = *owned;
  auto opt = registry.create<PluginKind::optimizer>(o.optimizer.name, o.optimizer.options, model.params(),
                                                    model.parametrisation());
  const at::Device device = model.device();
  const Batch batch = bench::sine_batch(o.batch, o.variates, o.context, device);
  const int64_t patches = o.context / model.patch_size();

  std::printf("bench train: %s (%lld parameters, %s) on %s, %d threads; batch %lld x %lld variates x %lld steps "
              "(%lld patches); %s%s%s%s; %s\n",
              o.preset.c_str(), (long long)model.num_parameters(), o.param.c_str(), o.device.c_str(),
              at::get_num_threads(), (long long)o.batch, (long long)o.variates, (long long)o.context,
              (long long)patches, precision_name(o.precision), o.graph ? ", graphed" : "",
              *o.cpm ? ", patch masking" : "", *o.host_checks ? ", host checks" : "",
              o.optimizer.to_json().dump().c_str());
  std::fflush(stdout);

  BenchStep step(model, *opt, o, nullptr);
  StepOutcome last;
  bench::reset_peak_memory(device);
  const bench::Timing t = bench::time_runs(o.warmup, o.repeats, device, [&] { last = step.run(batch, 1, 0); });
  const bench::PeakMemory mem = bench::peak_memory(device);
  check_finite(last, "");

  const double s = t.median / 1e3;
  const StepFlops flops = model.step_flops(o.batch, o.variates, o.context);
  const double tokens = static_cast<double>(o.batch * o.variates * patches);
  const bench::MatmulPeak peak = bench::measure_matmul_peak(device, o.precision);
  const double achieved = flops.total() / s;
  std::printf("step: median %.1f ms, min %.1f ms, max %.1f ms over %lld steps (%lld warm-up): forward, pinball "
              "loss, backward, clip, %s\n",
              t.median, t.min, t.max, (long long)t.runs, (long long)o.warmup, o.optimizer.name.c_str());
  std::printf("throughput: %.0f tokens/s (a token: one patch of 32 steps of one variate), %.0f time steps/s\n",
              tokens / s, static_cast<double>(o.batch * o.variates * o.context) / s);
  std::printf("memory: peak %.1f MiB (%s)\n", mem.bytes / (1 << 20), mem.what.c_str());
  std::printf("model FLOPs: %s per step (matrices %s, attention %s; 6 per matrix parameter per token, "
              "attention at full S^2)\n",
              si(flops.total(), "FLOP").c_str(), si(flops.matmul, "FLOP").c_str(), si(flops.attention, "FLOP").c_str());
  std::printf("achieved: %s/s\n", si(achieved, "FLOP").c_str());
  std::printf("peak: %s/s (%s at::mm of %lld x %lld by %lld x %lld on %s, best of %lld: %.2f ms)\n",
              si(peak.flops_per_s, "FLOP").c_str(), peak.dtype.c_str(), (long long)peak.n, (long long)peak.n,
              (long long)peak.n, (long long)peak.n, o.device.c_str(), (long long)peak.runs, peak.best_ms);
  std::printf("MFU: %.3f (achieved / peak)\n", achieved / peak.flops_per_s);
  std::fflush(stdout);

  if (!o.reference.empty()) {
    const std::string common = bench::flag("--preset", o.preset) + bench::flag("--param", o.param) +
        bench::flag("--precision", precision_name(o.precision)) + bench::flag("--device", o.device) +
        bench::flag("--batch", o.batch) + bench::flag("--context", o.context) +
        bench::flag("--variates", o.variates) + bench::flag("--repeats", o.repeats) +
        bench::flag("--warmup", o.warmup) + bench::flag("--threads", at::get_num_threads());
    for (const char* mode : {"eager", "compile"}) {
      const bench::ReferenceResult r = bench::run_reference(o.reference + common + bench::flag("--mode", mode));
      const long long count = reported_parameters(r.output);
      if (count != model.num_parameters())
        std::printf("warning: the reference reports %lld parameters, Orrery has %lld: the steps differ\n", count,
                    (long long)model.num_parameters());
      std::printf("reference (%s): median %.1f ms; throughput Orrery / reference = reference ms / Orrery ms = %.2f "
                  "(above 1: Orrery is faster)\n",
                  mode, r.median_ms, r.median_ms / t.median);
      std::fflush(stdout);
    }
  }
  if (o.nproc > 1) {
    std::vector<std::string> rank_args{"bench", "train"};
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "--nproc" || args[i] == "--reference") {
        ++i;
        continue;
      }
      rank_args.push_back(args[i]);
    }
    // The ranks time the step the one process timed: its masks and host checks as resolved
    // (off under --reference, which the ranks do not run).
    for (const auto& [flag, value] : {std::pair{"--cpm", *o.cpm}, std::pair{"--host-checks", *o.host_checks}})
      rank_args.insert(rank_args.end(), {flag, value ? "on" : "off"});
    rank_args.push_back("--baseline-ms");
    rank_args.push_back(std::to_string(t.median));
    if (const int status = run_ranks(o.nproc, 0, "", rank_args))
      throw Error("bench train: the data-parallel job failed (status " + std::to_string(status) + ")");
  }
  return 0;
}

}  // namespace orrery
