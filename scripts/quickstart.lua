-- Quickstart: train a ~1M-parameter Toto-style model on synthetic and observability-like series
-- for a fixed number of steps (a few minutes on two idle CPU cores; the progress line shows the
-- ETA on yours), then forecast real series it has never seen (the benchmark bundled in
-- assets/data) and score it against classical baselines on the same windows. A fixed step
-- count makes the printed figures the same on any machine; `seconds=` adds a time budget instead.
--
--   orrery run scripts/quickstart.lua [--resume] [steps=2400] [seconds=N] [seed=0] [name=quickstart]
--                                     [checkpoint_every=N] [data=assets/data]

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local assets = here .. "../assets/"
local zs = require("lib.zero_shot")
local seed = zs.seed(args.seed)
local benchmark = zs.benchmark(args.data, assets .. "data")   -- another benchmark folder or CSV with data=

-- The recipe (scripts/lib/zero_shot.lua): half the synthetic series from the classical ETS,
-- ARIMA and trend families, 57.5% synthetic and 42.5% observability-like series, every sample
-- observed over its whole 512-step context, cut into 16-step patches (a 72-step monthly history
-- is 5 tokens). `zero_shot.lua recipe=classical16_full steps=2400` trains the same weights.
local recipe = zs.recipe("classical16_full")
local model = zs.model{patch_size = recipe.patch_size, seed = seed}   -- toto2, d_model 128, 4 layers, quantile head

local run = orrery.train(zs.train_fields{
  model            = model,
  data             = zs.recipe_mixture(recipe),
  steps            = args.steps or 2400,
  seconds          = args.seconds,            -- optional budget: steps or time, whichever ends first
  seed             = seed,
  name             = args.name or "quickstart",
  checkpoint_every = args.checkpoint_every,   -- also every 30 minutes, on Ctrl-C and at the end
})

-- Under `orrery launch -n N` or torchrun every rank has trained alongside rank 0; rank 0 goes on.
if orrery.world().rank ~= 0 then return end

model:save(run.run_dir .. "/model.safetensors")   -- before scoring: a failed evaluation loses no training

-- The bundled benchmark (assets/data: 25 real data sets from R, yearly to 10-minute), scored
-- the GIFT-Eval way: MASE and CRPS of the last windows of every series, as ratios to seasonal
-- naive on the same windows (below 1 beats it), next to the classical baselines. The model
-- forecasts each window from its last 64 steps and from its whole 512-step context and averages
-- the two level by level (a context ensemble: README, "Context ensembles"), each on the window's
-- Box-Cox transform, mapped back (README, "Box-Cox at inference").
local eval = orrery.eval{
  model   = model,
  name    = "quickstart",
  data    = benchmark,
  context = {64, 512},
  box_cox = true,
  out     = run.run_dir,   -- eval.json and eval.csv beside the run
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
