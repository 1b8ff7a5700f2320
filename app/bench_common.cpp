#include "bench_common.h"

#include <ATen/ATen.h>
#include <ATen/DeviceAccelerator.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "orrery/error.h"

namespace orrery::bench {

Batch sine_batch(int64_t batch, int64_t variates, int64_t context, const at::Device& device) {
  at::Tensor t = at::arange(context, at::kFloat);
  at::Tensor phase = at::arange(batch * variates, at::kFloat).view({batch, variates, 1});
  Batch b;
  b.values = (10 + at::sin(t / 24 + phase) + 0.3 * at::sin(t / 168 + 2 * phase)).to(device);
  b.observed = at::ones_like(b.values, at::kBool);
  b.series_ids = at::zeros({batch, variates}, at::TensorOptions().dtype(at::kLong).device(device));
  return b;
}

namespace {
// "cuda" without an index means the current device, as LibTorch reads it.
c10::DeviceIndex index_of(const at::Device& device) {
  return device.index() < 0 ? at::accelerator::getDeviceIndex() : device.index();
}
}  // namespace

// at::accelerator is the device-generic face of CUDA, XPU, MPS and the rest: the same call
// compiles against a CPU-only LibTorch and synchronises whichever accelerator the model is on.
void synchronize(const at::Device& device) {
  if (!device.is_cpu()) at::accelerator::synchronizeDevice(index_of(device));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Timing time_runs(int64_t warmup, int64_t repeats, const at::Device& device, const std::function<void()>& fn) {
  std::vector<double> ms;
  for (int64_t r = 0; r < warmup + repeats; ++r) {
    synchronize(device);
    const auto start = std::chrono::steady_clock::now();
    fn();
    synchronize(device);
    const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (r >= warmup) ms.push_back(elapsed);
  }
  Timing t;
  t.runs = repeats;
  t.median = median(ms);
  t.min = *std::min_element(ms.begin(), ms.end());
  t.max = *std::max_element(ms.begin(), ms.end());
  return t;
}

void reset_peak_memory(const at::Device& device) {
  if (!device.is_cpu()) at::accelerator::resetPeakStats(index_of(device));
}

PeakMemory peak_memory(const at::Device& device) {
  if (!device.is_cpu()) {
    const auto stats = at::accelerator::getDeviceStats(index_of(device));
    const auto all = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    return {static_cast<double>(stats.allocated_bytes[all].peak),
            "the caching allocator's peak of allocated bytes over the warm-up and timed steps"};
  }
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return {static_cast<double>(u.ru_maxrss) * 1024.0,  // kilobytes on Linux
          "the process's peak resident set (getrusage), model and batch included"};
}

ReferenceResult run_reference(const std::string& command) {
  std::printf("reference: %s\n", command.c_str());
  std::fflush(stdout);
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) throw Error("bench: cannot run the reference command");
  ReferenceResult r;
  std::string last;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) r.output += buf, last = buf;
  const int status = pclose(p);
  if (status != 0 || std::sscanf(last.c_str(), "median_ms %lf", &r.median_ms) != 1)
    throw Error("bench: the reference command failed or printed no `median_ms X` line:\n" + r.output);
  return r;
}

std::string flag(const char* name, int64_t value) { return flag(name, std::to_string(value)); }
std::string flag(const char* name, const std::string& value) { return std::string(" ") + name + " " + value; }

bool parse_on_off(const std::string& flag, const std::string& value) {
  if (value != "on" && value != "off") throw Error(flag + " must be on or off, got '" + value + "'");
  return value == "on";
}

}  // namespace orrery::bench
