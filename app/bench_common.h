#pragma once
// What `orrery bench forecast` and `orrery bench train` share: the seeded batch they time, the
// clock (with the device synchronised around it), the summary of the runs, the memory they
// report and the reference command they can compare with.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "orrery/batch.h"

namespace orrery::bench {

// (batch, variates, context) sine series with two seasonalities and a per-series phase, all
// observed, all of series id 0, on `device`: the same values the reference scripts build.
Batch sine_batch(int64_t batch, int64_t variates, int64_t context, const at::Device& device);

// Waits for the work queued on `device` (nothing to wait for on the CPU), so a clock read after
// it measures the work, not the launch.
void synchronize(const at::Device& device);

struct Timing {
  double median = 0, min = 0, max = 0;  // milliseconds
  int64_t runs = 0;
};
double median(std::vector<double> v);
// Runs `fn` warmup + repeats times with the device synchronised before and after each run;
// the repeats after the warm-up are timed.
Timing time_runs(int64_t warmup, int64_t repeats, const at::Device& device, const std::function<void()>& fn);

// Peak memory of what was timed. On an accelerator, the caching allocator's peak of allocated
// bytes since reset_peak_memory (the device's default allocator); on the CPU, the process's peak resident set (getrusage), which
// includes everything the process ever held and cannot be reset.
void reset_peak_memory(const at::Device& device);
struct PeakMemory {
  double bytes = 0;
  std::string what;  // how it was measured, for the printed line
};
PeakMemory peak_memory(const at::Device& device);

struct ReferenceResult {
  double median_ms = 0;
  std::string output;  // everything the command printed, stdout and stderr
};
// Runs `command` through the shell, printing it first; it must exit 0 and print `median_ms X`
// as its last line. Throws with its output otherwise.
ReferenceResult run_reference(const std::string& command);

// " --flag value" for building reference command lines.
// An on/off flag's value, or an error naming the flag.
bool parse_on_off(const std::string& flag, const std::string& value);

std::string flag(const char* name, int64_t value);
std::string flag(const char* name, const std::string& value);

}  // namespace orrery::bench
