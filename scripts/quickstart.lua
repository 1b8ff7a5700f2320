-- Quickstart: train a ~1M-parameter Toto-style model on synthetic series for a fixed number of
-- steps (a few minutes on two idle CPU cores; the progress line shows the ETA
-- on yours), then forecast real series it has never seen (the benchmark bundled in
-- assets/data) and score it against classical baselines on the same windows. A fixed step
-- count makes the printed figures the same on any machine; `seconds=` adds a time budget instead.
--
--   orrery run scripts/quickstart.lua [--resume] [steps=2400] [seconds=N] [name=quickstart]
--                                     [checkpoint_every=N]

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local assets = here .. "../assets/"

local model = orrery.model{
  arch  = {"toto2", d_model = 128, num_layers = 4, num_heads = 4},
  head  = "quantile",   -- nine levels 0.1 .. 0.9, pinball loss
  param = "sp",
  seed  = 0,
}

local run = orrery.train{
  model          = model,
  data           = {"synthetic", seed = 0},
  optimizer      = {"adamw", lr = 2e-3, weight_decay = 0.01},
  steps          = args.steps or 2400,
  max_seconds    = args.seconds,          -- optional budget: steps or time, whichever ends first
  batch_size     = 32,
  context_length = 512,
  schedule       = {warmup = 100, decay = 0.3},
  cpm_max_span   = 4,                     -- masked spans up to 4 of the 16 context patches
  name           = args.name or "quickstart",
  log_every      = 50,
  checkpoint_every = args.checkpoint_every, -- also every 30 minutes, on Ctrl-C and at the end
}

-- Under `orrery launch -n N` or torchrun every rank has trained alongside rank 0; rank 0 goes on.
if orrery.world().rank ~= 0 then return end

-- The bundled benchmark (assets/data: 25 real data sets from R, yearly to 10-minute), scored
-- the GIFT-Eval way: MASE and CRPS of the last windows of every series, as ratios to seasonal
-- naive on the same windows (below 1 beats it), next to the classical baselines.
local eval = orrery.eval{
  model   = model,
  name    = "quickstart",
  data    = assets .. "data",
  context = 512,
  out     = run.run_dir,   -- eval.json and eval.csv beside the run
}
model:save(run.run_dir .. "/model.safetensors")
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
