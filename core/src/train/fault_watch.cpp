#include "fault_watch.h"

#include <algorithm>
#include <cstdio>

#include "orrery/error.h"
#include "orrery/host/events.h"
#include "orrery/host/metrics_bus.h"

namespace orrery {

namespace {

constexpr size_t kSpikeWindow = 64, kSpikeWarmup = 16;

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

const char* kAdvice = "lower the learning rate, tighten clipping or check the data";

}  // namespace

void FaultWatch::check(const StepOutcome& s, const std::string& lrs) {
  // Skips over the last 2 x max_skipped_steps steps: a run that diverges skips most steps
  // without ever skipping max_skipped_steps in a row (the odd update lands on finite weights).
  const int64_t window = 2 * cfg_.max_skipped_steps;
  auto& recent = st_.recent_skips;
  recent.erase(std::remove_if(recent.begin(), recent.end(), [&](int64_t k) { return k <= st_.step - window; }),
               recent.end());
  if (s.fault) {
    ++st_.skipped_steps, ++st_.skipped_in_row;
    recent.push_back(st_.step);
    bus_.publish(make_event(EventKind::skip, {{"step", st_.step}, {"reason", s.fault},
                                              {"skipped_steps", st_.skipped_steps},
                                              {"skipped_in_row", st_.skipped_in_row}}));
    if (!cfg_.quiet) {
      std::printf("step %6lld/%lld  skipped: the %s is not finite (%lld in a row, lr %s)\n",
                  static_cast<long long>(st_.step), static_cast<long long>(cfg_.steps), s.fault,
                  static_cast<long long>(st_.skipped_in_row), lrs.c_str());
      std::fflush(stdout);
    }
    const auto stop = [&](const std::string& what, int64_t first) {
      throw TrainingDiverged("training stopped at step " + std::to_string(st_.step) + ": " + what +
                                 " had a non-finite loss or gradient (max_skipped_steps = " +
                                 std::to_string(cfg_.max_skipped_steps) + "; lr " + lrs + "). The weights are those " +
                                 "after step " + std::to_string(st_.step - st_.skipped_in_row) + "; step " +
                                 std::to_string(first) + " was the first to fail: " + kAdvice,
                             first - 1);
    };
    if (st_.skipped_in_row >= cfg_.max_skipped_steps)
      stop(std::to_string(st_.skipped_in_row) + " steps in a row", st_.step - st_.skipped_in_row + 1);
    if (static_cast<int64_t>(recent.size()) >= cfg_.max_skipped_steps)
      stop(std::to_string(recent.size()) + " of the last " + std::to_string(std::min(window, st_.step)) + " steps",
           recent.front());
    if (st_.step == cfg_.steps)
      throw TrainingDiverged("training ended at step " + std::to_string(st_.step) + " on " +
                                 std::to_string(st_.skipped_in_row) + " skipped step(s) (lr " + lrs +
                                 "): the final weights give a non-finite loss or gradient. The weights are those "
                                 "after step " + std::to_string(st_.step - st_.skipped_in_row) + ": " + kAdvice,
                             st_.step - st_.skipped_in_row);
    return;
  }
  st_.skipped_in_row = 0;
  if (cfg_.spike_factor > 0 && st_.recent_losses.size() >= kSpikeWarmup) {
    const double m = median(st_.recent_losses);
    if (s.loss > cfg_.spike_factor * m)
      bus_.publish(make_event(EventKind::spike, {{"step", st_.step}, {"loss", s.loss}, {"median", m}}));
  }
  st_.recent_losses.push_back(s.loss);
  if (st_.recent_losses.size() > kSpikeWindow) st_.recent_losses.erase(st_.recent_losses.begin());
}

}  // namespace orrery
