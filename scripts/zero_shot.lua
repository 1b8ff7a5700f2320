-- Zero-shot: does a model pretrained only on synthetic and observability-like series forecast
-- real data it has never seen? Toto 2.0's claim, on the bundled R benchmark (assets/data: 25
-- data sets from yearly to 10-minute), scored the GIFT-Eval way against classical baselines.
-- Defaults train the quickstart's model (d_model 128, 4 layers; 1.04M parameters) for 6,000
-- steps under the `classical16` recipe (half the synthetic series from classical ETS, ARIMA and
-- trend families, 16-step patches; scripts/lib/zero_shot.lua), about 17 minutes on one CPU
-- core; `recipe=classical16_full` is the quickstart's (the same, every sample observed over its
-- whole context), `recipe=toto` Toto 2.0's own mix on 32-step patches. On a GPU,
-- `device=cuda preset=toto2-4m` trains a released size.
--
-- The model is scored as a context ensemble: each window forecast from its last 64 steps and from
-- the whole context, the two averaged level by level (better than the whole context alone on the
-- validation and test windows, no different from the last 64 alone: docs/results/context_ensembles);
-- short_context=0 scores from the whole context only (the default where context is 64 or less).
-- Each window is forecast as its Box-Cox transform and mapped back, the exponent by Guerrero's
-- method, as the quickstart scores: on this recipe's own 6,000-step models (3 seeds) better on
-- the validation windows, where the choice is made, no different on the test windows
-- (docs/results/box_cox); box_cox=false forecasts the values as they are.
--
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local zs = require("lib.zero_shot")
local args = orrery.args{
  "Zero-shot: pretrain on synthetic and observability-like series only, then forecast the bundled real\n" ..
  "benchmark (never seen in training), scored the GIFT-Eval way against classical baselines.",
  {"recipe", "string", "classical16", "the pretraining recipe (scripts/lib/zero_shot.lua)", choices = {"classical16", "classical16_full", "toto"}},
  {"steps", "int", 6000, "training steps", min = 1},
  {"seconds", "number", nil, "a time budget as well", min = 1},
  {"seed", "int", 0, "seed of the weights and the data", min = 0},
  {"device", "string", "cpu", "where to train: cpu or cuda"},
  {"preset", "string", nil, "a released Toto 2.0 size (toto2-4m, ...) instead of the quickstart's model"},
  {"batch", "int", 32, "series a step", min = 1},
  {"context", "int", 512, "steps a training series and the longest context scored", min = 1},
  {"short_context", "int", nil, "the ensemble's short context, below context (default 64, or 0 where context <= 64: none)", min = 0},
  {"box_cox", "bool", true, "forecast each window's Box-Cox transform, mapped back"},
  {"data", "path", here .. "../assets/data", "the benchmark"},
  {"name", "string", "zero_shot", "the run folder, runs/<name>"},
}
local device = args.device
local context = args.context
local short_context = args.short_context or (context > 64 and 64 or 0)
if short_context >= context then
  error("short_context must be a whole number from 0 to context - 1, got " .. short_context, 0)
end
local box_cox = args.box_cox
local benchmark = args.data
local seed = args.seed
local recipe = zs.recipe(args.recipe)
local model = zs.model{preset = args.preset, device = device, patch_size = recipe.patch_size, seed = seed}
local run = orrery.train(zs.train_fields{
  model = model, data = zs.recipe_mixture(recipe), steps = args.steps,
  seconds = args.seconds, batch = args.batch, context = context, seed = seed,
  name = args.name,
})
model:save(run.run_dir .. "/model.safetensors")

-- Never trained on any of it: every window of the benchmark is new to the model.
local eval = orrery.eval{
  model   = model,
  name    = "zero_shot",
  data    = benchmark,
  context = short_context > 0 and {short_context, context} or context,
  box_cox = box_cox,
  box_cox_average = false,  -- the transform for every window, as this script was measured with
  out     = run.run_dir,
}
print(string.format("\n%d steps in %.0f s; loss %.4f -> %.4f. Results: %s/eval.csv",
                    run.steps, run.seconds, run.first_loss, run.final_loss, run.run_dir))
