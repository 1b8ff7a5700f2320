-- Quickstart: train a ~1M-parameter Toto-style model on synthetic series for a fixed number of
-- steps (about two and a half minutes on two idle CPU cores; the progress line shows the ETA
-- on yours), then forecast real series it has never seen (monthly data bundled in assets/) and
-- score it against the seasonal-naive forecast of the same windows. A fixed step count makes
-- the printed figures the same on any machine; `seconds=` adds a time budget instead.
--
--   orrery run scripts/quickstart.lua [steps=2400] [seconds=N] [name=quickstart]

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
}

local function monthly(name)
  return {name = name, values = orrery.read_csv(assets .. name .. ".csv").columns.value, season = 12}
end

local eval = orrery.evaluate{
  model   = model,
  series  = {monthly("AirPassengers"), monthly("co2"), monthly("nottem"), monthly("UKDriverDeaths")},
  horizon = 12,
  windows = 4,
  context = 512,
}
orrery.write_json(run.run_dir .. "/evaluation.json", eval)
model:save(run.run_dir .. "/model.safetensors")

print(string.format("\nForecasts of the last %d windows of %d months (never seen in training):",
                    eval.windows, eval.horizon))
print(string.format("%-16s %8s %8s   %8s %8s", "series", "MASE", "CRPS", "naive", "naive"))
local function row(name, s)
  print(string.format("%-16s %8.3f %8.4f   %8.3f %8.4f", name, s.mase, s.crps, s.naive_mase, s.naive_crps))
end
for _, s in ipairs(eval.series) do row(s.name, s) end
row("all (pooled)", eval.overall)
-- The dashboard's views as SVG files beside the run (orrery ui runs/ shows them live).
local plots = orrery.plot(run.run_dir)
print(string.format("\n%d steps in %.0f s; loss %.4f -> %.4f. Run directory: %s",
                    run.steps, run.seconds, run.first_loss, run.final_loss, run.run_dir))
print(string.format("Plots: %d SVG files in %s/plots; live dashboard: orrery ui %s", #plots, run.run_dir,
                    run.run_dir:match("^(.*)/[^/]+$") or "runs"))
