#pragma once
// `orrery plot`: the dashboard's views as SVG files, for machines with no display.
#include <string>
#include <vector>

#include "../runs/run.h"

namespace orrery::ui {

// Writes into out_dir (created if needed) whichever views the workspace has data for:
//   loss.svg        train/validation loss and learning rate of every run (the 10 newest)
//   forecasts.svg   the quantile fans of the newest snapshot of the most recent run with forecasts
//   lr_transfer.svg when runs span learning rates at a width (a sweep)
//   coord_check.svg the newest coordinate check's last step
//   optimizer.svg   update RMS per optimizer group and gradient norm, when recorded
//   eval.svg        CRPS ratios per data set of every model in the runs' eval.json files
//   windows-<dataset>-<frequency>-<term>.svg   each configuration's windows from an evaluation's
//                   eval_forecasts.jsonl: the model's fan beside the baseline's (ETS where scored)
//   search.svg      a hyper-parameter study (study.json); search-<folder>.svg each when several
//   scaling.svg     a scaling study (scaling.json); scaling-<folder>.svg each when several
// Returns the paths written.
std::vector<std::string> write_svg_report(const Workspace& ws, const std::string& out_dir);

}  // namespace orrery::ui
