-- Quickstart: train a ~1M-parameter Toto-style model on synthetic and observability-like series
-- for a fixed number of steps (a few minutes on two idle CPU cores; the progress line shows the
-- ETA on yours), then forecast real series it has never seen (the benchmark bundled in
-- assets/data) and score it against classical baselines on the same windows. A fixed step
-- count makes the printed figures the same on any machine; `seconds=` adds a time budget too.
-- Copy this file to start an experiment of your own.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local args = orrery.args{
  "Train a 1.04M-parameter Toto-style model on synthetic and observability-like series, then forecast\n" ..
  "the bundled real benchmark and score it against classical baselines, the GIFT-Eval way.",
  {"steps", "int", 2400, "training steps", min = 1},
  {"seconds", "number", nil, "a time budget as well: training stops at steps or seconds, whichever comes first", min = 1},
  {"seed", "int", 0, "seed of the weights and of the data", min = 0},
  {"name", "string", "quickstart", "the run folder, runs/<name>"},
  {"checkpoint_every", "int", nil, "a checkpoint every N steps (one is also kept every 30 minutes, on Ctrl-C and at the end)", min = 1},
  {"data", "path", here .. "../assets/data", "the benchmark scored after training: a folder with manifest.json, or a CSV"},
}

-- The model: Toto 2.0's patched transformer (d_model 128, 4 layers of time and variate attention),
-- reading 16-step patches (a 72-step monthly history is 5 tokens) and forecasting nine quantiles.
local model = orrery.model{
  arch       = {"toto2", d_model = 128, num_layers = 4, num_heads = 4},
  head       = "quantile",
  param      = "sp",          -- standard parametrisation; "umup" for learning rates that transfer across widths
  patch_size = 16,
  seed       = args.seed,
}

-- The data: 57.5% synthetic series (half of them from the classical ETS, ARIMA and trend families,
-- the rest from the synthetic source's default families) and 42.5% observability-like series,
-- every sample observed over its whole 512-step context. `zero_shot.lua recipe=classical16_full`
-- trains the same weights (scripts/lib/zero_shot.lua holds this recipe for the scripts that vary it).
local families = require("lib.zero_shot").families{ets = 0.2, kernel_trend = 0.2, arima = 0.1}
local data = {"mixture", min_context = 0, sources = {
  {"synthetic", weight = 57.5, families = families},
  {"observability", weight = 42.5},
}}

-- The optimizer and schedule: AdamW, 100 warm-up steps, constant, then a linear decay over the
-- last 30% of steps; contiguous patch masking of up to 4 patches.
local run = orrery.train{
  model            = model,
  data             = data,
  optimizer        = {"adamw", lr = 2e-3, weight_decay = 0.01},
  schedule         = {warmup = 100, decay = 0.3},
  cpm_max_span     = 4,
  steps            = args.steps,
  max_seconds      = args.seconds,
  batch_size       = 32,
  context_length   = 512,
  log_every        = 100,
  seed             = args.seed,
  name             = args.name,
  checkpoint_every = args.checkpoint_every,
}

-- Under `orrery launch -n N` or torchrun every rank has trained alongside rank 0; rank 0 goes on.
if orrery.world().rank ~= 0 then return end

model:save(run.run_dir .. "/model.safetensors")   -- before scoring: a failed evaluation loses no training

-- The bundled benchmark (25 real data sets from R, yearly to 10-minute), scored the GIFT-Eval way:
-- MASE and CRPS of the last windows of every series, as ratios to seasonal naive on the same
-- windows (below 1 beats it), beside the classical baselines. The model forecasts each window as
-- `orrery forecast` would: from its last 64 and its last 512 steps, averaged level by level, with
-- the forecast of the window's Box-Cox transform averaged in where that average forecast the
-- window's own last horizon better (docs/evaluation.md).
local eval = orrery.eval{
  model = model,
  name  = "quickstart",
  data  = args.data,
  out   = run.run_dir,   -- eval.json and eval.csv beside the run
}
local mine, best = nil, nil
for _, s in ipairs(eval.summary) do
  if s.model == "quickstart" then mine = s
  elseif not best or s.crps < best.crps then best = s end
end
print(string.format("\nquickstart: MASE %.3f, CRPS %.3f of seasonal naive's (geometric means over %d configurations);" ..
                    "\nbest classical baseline, %s: %.3f, %.3f", mine.mase, mine.crps, mine.configurations,
                    best.model, best.mase, best.crps))
-- The dashboard's views as SVG files beside the run (orrery ui runs/ shows them live).
local plots = orrery.plot(run.run_dir)
print(string.format("\n%d steps in %.0f s; loss %.4f -> %.4f. Run directory: %s",
                    run.steps, run.seconds, run.first_loss, run.final_loss, run.run_dir))
print(string.format("Plots: %d SVG files in %s/plots; live dashboard: orrery ui %s", #plots, run.run_dir,
                    run.run_dir:match("^(.*)/[^/]+$") or "runs"))
