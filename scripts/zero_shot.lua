-- Zero-shot: does a model pretrained only on synthetic and observability-like series forecast
-- real data it has never seen? Toto 2.0's claim, on the bundled R benchmark (assets/data: 25
-- data sets from yearly to 10-minute), scored the GIFT-Eval way against classical baselines.
-- Defaults train the quickstart's 1.15M-parameter model for 6,000 steps, about 7 minutes on two
-- idle CPU cores; on a GPU, `device=cuda preset=toto2-4m` trains a released size.
--
--   orrery run scripts/zero_shot.lua [steps=6000] [seconds=N] [device=cpu|cuda]
--                                    [preset=toto2-4m] [batch=32] [context=512] [name=zero_shot]

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local benchmark = args.data or (here .. "../assets/data")
local device = args.device or "cpu"
local context = tonumber(args.context) or 512

local arch = {"toto2", d_model = 128, num_layers = 4, num_heads = 4}
if args.preset then arch = {"toto2", preset = args.preset} end

local model = orrery.model{arch = arch, head = "quantile", param = "sp", seed = 0, device = device}

-- Toto 2.0's pretraining mix: 57.5% synthetic, 42.5% observability-like series, with contexts
-- of every length from 64 steps up so the model learns to forecast from short histories too.
local mixture = {"mixture", min_context = 64, sources = {
  {"synthetic", weight = 57.5},
  {"observability", weight = 42.5},
}}

local run = orrery.train{
  model          = model,
  data           = mixture,
  optimizer      = {"adamw", lr = 2e-3, weight_decay = 0.01},
  steps          = tonumber(args.steps) or 6000,
  max_seconds    = args.seconds,
  batch_size     = tonumber(args.batch) or 32,
  context_length = context,
  schedule       = {warmup = 100, decay = 0.3},
  cpm_max_span   = 4,
  name           = args.name or "zero_shot",
  log_every      = 100,
}
model:save(run.run_dir .. "/model.safetensors")

-- Never trained on any of it: every window of the benchmark is new to the model.
local eval = orrery.eval{
  model   = model,
  name    = "zero_shot",
  data    = benchmark,
  context = context,
  out     = run.run_dir,
}
print(string.format("\n%d steps in %.0f s; loss %.4f -> %.4f. Results: %s/eval.csv",
                    run.steps, run.seconds, run.first_loss, run.final_loss, run.run_dir))
