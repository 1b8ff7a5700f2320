#pragma once
// Where a run starts. A resumed run reopens its folder and loads its newest valid checkpoint
// into the model and optimizer (experiment.h says what may change on resume); a run that had
// finished its steps is not trained again; any other claims a fresh folder. Rank 0 decides on
// its filesystem and tells the other ranks (the folder, whether it resumes, or the error that
// stopped it); they load the same checkpoint.
#include <memory>
#include <optional>
#include <string>

#include "orrery/host/checkpoint.h"
#include "orrery/host/experiment.h"
#include "orrery/host/run_store.h"

namespace orrery {
class Model;
class Optimizer;

struct RunStart {
  std::string run_dir;
  std::unique_ptr<RunStore> store;  // rank 0 of a run it trains: the folder's writer (and lock)
  std::optional<Checkpoint> from;   // the checkpoint loaded, if any
  bool branched = false;            // `from` is another run's (RunRequest::branch)
  Json finished;                    // a finished run: its summary, the model loaded (nothing to
                                    // train); else null
};

// `config`: the run's config.json as this request writes it. `share`: the optimizer's state is
// sharded over the ranks (zero.h), each loading its share.
RunStart start_run(const RunRequest& r, const Json& config, Model& model, Optimizer& optimizer, bool share);

}  // namespace orrery
