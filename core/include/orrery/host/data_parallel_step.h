#pragma once
// What the ranks of a data-parallel run agree on around each step, one small all-reduce each
// (a sum where each rank writes its own slots, so a slot only rank 0 writes is rank 0's value).
// Without a process group each function returns this process's own values: the single-process
// trainer runs the same code.
#include <cstdint>
#include <vector>

#include "orrery/batch.h"
#include "orrery/param.h"

namespace orrery {
class ProcessGroup;

struct StepStart {
  bool stop = false;              // an interrupt on any rank: every rank stops here
  double clock = 0;               // rank 0's training seconds: time budgets and schedules
  std::vector<int64_t> variates;  // of the global batch's micro-batches, j * world + rank for
                                  // a rank's j-th: the masks of all of them are drawn everywhere
};
// `step`: the steps done before this one.
StepStart agree_step_start(ProcessGroup* world, int64_t step, const std::vector<Batch>& micro, bool stop,
                           double clock);

struct StepEnd {
  double loss = 0;         // the mean over ranks of each rank's step loss
  int64_t series = 0;      // summed over ranks
  bool loss_fault = false; // some rank's loss was not finite: every rank skips the step
};
StepEnd agree_step_end(ProcessGroup* world, double loss, int64_t series, bool loss_fault);

// Before the first step: every rank must stand at rank 0's step (a resumed run: the same
// checkpoint), then takes rank 0's weights.
void start_together(ProcessGroup* world, int64_t step, const std::vector<Param>& params);

}  // namespace orrery
