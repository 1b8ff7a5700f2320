-- The step time of a real training run, to set beside `orrery bench train` of the same shape
-- (docs/performance.md). Both run the one training step (core/include/orrery/host/train_step.h);
-- a run adds drawing its batches (on data_workers threads beside the step), logging, and the
-- update RMS it measures on logging steps. A toto2 preset with u-muP and AdamW trains on the
-- synthetic prior (one variate a series, as the bench's batch); the step time of each logging
-- window is read off its train event (series per second leaves out validation and snapshots,
-- which this run has none of anyway), with the time the step waited for its batch (a run whose
-- steps outpace its data workers waits; add workers), and the first window, the warm-up, is
-- left out.
--

local args = orrery.args{
  "The step time of a real training run, to set beside `orrery bench train` of the same shape.",
  {"preset", "string", "toto2-4m", "a released Toto 2.0 size"},
  {"batch", "int", 8, "series a step", min = 1},
  {"context", "int", 512, "steps a series", min = 1},
  {"steps", "int", 200, "training steps, at least 30 (a warm-up window and two more)", min = 30},
  {"workers", "int", 1, "data worker threads", min = 1},
  {"device", "string", "cpu", "where to train: cpu or cuda"},
  {"graph", "bool", false, "record each step as a CUDA graph (device=cuda)"},
}
local batch, context, steps = args.batch, args.context, args.steps
local every = 10
local model = orrery.model{arch = {"toto2", preset = args.preset}, param = "umup", device = args.device}
local ms, wait = {}, {}
local run = orrery.train{
  model = model, data = {"synthetic", variates = 1}, optimizer = "adamw",
  steps = steps, batch_size = batch, context_length = context, log_every = every,
  val_batches = 0, forecast_series = 0, checkpoint_minutes = 0, graph = args.graph,
  data_workers = args.workers, name = "step_time", quiet = true,
  on_step = function(ev)
    ms[#ms + 1] = 1000 * batch / ev.series_per_s
    wait[#wait + 1] = ev.data_wait_ms  -- how long the step waited for its batch
  end,
}
table.remove(ms, 1)  -- the first window: warm-up
table.remove(wait, 1)
table.sort(ms)
table.sort(wait)
print(string.format("real run: %s, batch %d x %d steps, %d data worker(s): median %.1f ms a step, min %.1f, " ..
                    "max %.1f over %d windows of %d steps, of which %.1f ms waiting for data (%s)",
                    args.preset, batch, context, args.workers, ms[(#ms + 1) // 2], ms[1], ms[#ms],
                    #ms, every, wait[(#wait + 1) // 2], run.run_dir))
