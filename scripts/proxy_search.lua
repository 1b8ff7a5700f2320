-- Toto 2.0's hyper-parameter search (arXiv 2605.20119, section 4) on a proxy: four chained
-- rounds of TPE, each searching one group of decisions on top of the previous round's best --
--   1 architecture: attention normalisation, biases, contiguous patch masking (c_max, p_max);
--   2 data mix:     the shares of three training sources on a capped simplex;
--   3 optimizer:    NorMuon's rate and momenta, AdamW's rate and betas, weight decay, warmup, clip;
--   4 decay:        the length and shape of the WSD decay, each trial a decay branched off one
--                   stable run of round 3's best (as Toto 2.0 branched its decays);
-- every trial scored on the benchmark's validation windows (the window before each series' test
-- windows, which the search never sees) as the geometric mean of (MASE + CRPS) / 2 relative to
-- seasonal naive. Then the tuned configuration and the untuned default are trained with fresh
-- seeds and scored on the validation and the test windows.
--
--
-- The default budget (24 trials a round, a 2-layer width-64 proxy, 500 steps) takes about 18
-- minutes on 2 CPU cores. Toto 2.0's own proxy is 12 layers of width 256 trained 30,000 steps:
--   orrery run scripts/proxy_search.lua width=256 depth=12 steps=30000 batch=64 context=4096 \
--       trials=60 device=cuda
-- and several processes (a Slurm job array, `orrery launch`) running the same command share each
-- round's study (runs/<name>/<round>/journal.jsonl) without taking the same trial. Run again, the
-- script resumes: finished rounds are read back, the unfinished one goes on.
-- Results: runs/<name>/proxy_search.json, a table, and each round's search.svg (the dashboard's
-- Search tab: objective by trial, importance, objective against every dimension) in its folder.

local args = orrery.args{
  "Toto 2.0's hyper-parameter search on a proxy: four chained rounds of TPE (architecture, data mix,\n" ..
  "optimizer, decay), each trial scored on the benchmark's validation windows; then the tuned and the\n" ..
  "default configuration trained with fresh seeds and scored on the validation and test windows.",
  {"trials", "int", 24, "trials a round", min = 1},
  {"steps", "int", 500, "training steps a trial", min = 1},
  {"final_seeds", "int", 3, "seeds of the final tuned-against-default comparison", min = 1},
  {"width", "int", 64, "the proxy's d_model", min = 1},
  {"depth", "int", 2, "the proxy's layers", min = 1},
  {"heads", "int", 4, "the proxy's attention heads", min = 1},
  {"batch", "int", 16, "series a step", min = 1},
  {"context", "int", 256, "steps a training series", min = 32},
  {"rounds", "strings", {"arch", "mix", "optimizer", "decay"}, "the rounds, in order: arch, mix, optimizer, decay"},
  {"data", "path", "assets/data", "the benchmark whose validation windows score the trials"},
  {"device", "string", "cpu", "where to train: cpu or cuda"},
  {"prune", "string", nil, "median: stop trials whose training loss trails the median (arch and mix rounds)", choices = {"median"}},
  {"name", "string", "proxy_search", "the study's folder under runs_dir"},
  {"runs_dir", "string", "runs", "where the study's folder goes"},
}
local trials      = args.trials
local steps       = args.steps
local final_seeds = args.final_seeds
local shape = {width = args.width, depth = args.depth, heads = args.heads}
local batch, context = args.batch, args.context
local device = args.device
local benchmark = args.data
local name = args.name
local dir = args.runs_dir .. "/" .. name
local rounds = args.rounds

local stats = require("lib.stats")
local proxy = require("lib.proxy")   -- the recipe as data, and how it becomes model, data and training
local default, merged = proxy.default, proxy.merged

-- The rounds' search spaces, as data. Caps on the simplex keep any one source from taking over.
local spaces = {
  arch = {
    attention    = {"categorical", "per_dim_scale", "qk_norm", "none"},
    bias         = {"categorical", "attention", "mlp", "both", "none"},
    cpm_max_span = {"int", 1, context // 32},
    cpm_max_rate = {"real", 0.05, 0.6},
  },
  mix = {mix = {"simplex", "gp", "classic", "observability", max = {0.8, 0.8, 0.6}}},
  optimizer = {
    lr = {"log", 2^-6, 2^1}, momentum = {"real", 0.85, 0.98}, beta2 = {"real", 0.9, 0.999},
    adamw_lr = {"log", 2^-3, 2^3}, adamw_beta1 = {"real", 0.8, 0.95}, adamw_beta2 = {"real", 0.9, 0.999},
    weight_decay = {"log", 1e-6, 1e-1}, warmup = {"real", 0.0, 0.2}, clip = {"log", 0.25, 16},
  },
  decay = {decay = {"real", 0.05, 0.5}, decay_shape = {"categorical", "linear", "1-sqrt"}},
}
for _, r in ipairs(rounds) do
  if not spaces[r] then error("rounds: unknown round '" .. r .. "' (arch, mix, optimizer, decay)", 0) end
end

local function train_options(c, seed, run_name)
  return proxy.train_options(c, {steps = steps, batch = batch, context = context, seed = seed,
                                 runs_dir = dir .. "/runs", name = run_name})
end
local function model_of(c, seed) return proxy.model(c, shape, seed, device) end

local function score(model, split) return proxy.score(model, benchmark, context, split) end

-- Trains configuration c from scratch (or, with `branch`, from a stable run's checkpoint) and
-- scores it. With prune=median, `trial` gets the training loss as intermediate values -- in the
-- architecture and mix rounds only: the stable-phase loss ranks partly by learning rate, so
-- pruning the optimizer round would stop the high rates that gain most from the decay
-- (docs/search.md), and the decay trials are short branches already.
local prunable = {arch = true, mix = true}
local function train_and_score(c, seed, run_name, trial, branch, round)
  local model = model_of(c, seed)
  local options = merged(train_options(c, seed, run_name), {model = model, branch = branch})
  if trial and args.prune and prunable[round] then
    options.log_every = math.max(1, steps // 10)
    options.on_step = function(ev)
      trial:report(ev.step, ev.loss)
      if trial:should_prune() then error("pruned", 0) end
    end
  end
  local ok, err = pcall(orrery.train, options)
  if not ok then
    if err == "pruned" then return nil end
    error(err, 0)
  end
  return score(model, "validation")
end

-- Round 4 branches every decay off one stable run of the best configuration so far, trained
-- with its rate held to the longest decay's start and checkpointed there.
local longest_decay = spaces.decay.decay[3]
local function stable_checkpoint(c, seed)
  local stable_steps = math.floor(steps * (1 - longest_decay))
  local run_name = string.format("decay-stable-s%d", seed)
  local model = model_of(c, seed)
  local options = merged(train_options(c, seed, run_name), {
    model = model, steps = stable_steps, checkpoint_every = stable_steps, checkpoint_keep = 1, resume = true,
    schedule = {kind = "wsd", warmup = math.floor(c.warmup * steps + 0.5), decay = 0},
  })
  local run = orrery.train(options)
  return string.format("%s/checkpoints/step-%09d", run.run_dir, stable_steps)
end

-- The rounds, each from the previous round's best, which it also runs first (enqueued).
local t0 = os.time()
local best_so_far
local config = merged(default, {})
local results = {rounds = {}}
for index, round in ipairs(rounds) do
  local enqueue = {}
  for key in pairs(spaces[round]) do enqueue[key] = config[key] end
  local branch = round == "decay" and stable_checkpoint(config, 0) or nil
  local study = orrery.search{
    name = round, runs_dir = dir, trials = trials, space = spaces[round], enqueue = {enqueue},
    sampler = {"tpe", seed = index}, pruner = prunable[round] and args.prune or nil, quiet = true,
    objective = function(trial)
      local c = merged(config, trial.params)
      local value = train_and_score(c, 0, string.format("%s-t%03d", round, trial.number), trial, branch, round)
      best_so_far = math.min(value or math.huge, best_so_far or math.huge)
      io.write(string.format("\r%-9s trial %3d/%d  score %s  best %.4f  (%ds)   ", round, trial.number + 1, trials,
                             value and string.format("%.4f", value) or "pruned", best_so_far, os.time() - t0))
      io.flush()
      return value
    end,
  }
  best_so_far = nil
  local before = study.trials[1].value   -- the enqueued configuration: where the round started
  config = merged(config, study.best.params)
  local states = {}
  for _, t in ipairs(study.trials) do states[t.state] = (states[t.state] or 0) + 1 end
  results.rounds[#results.rounds + 1] = {round = round, trials = #study.trials, states = states, start = before,
                                         best = study.best.value, params = study.best.params}
  print(string.format("\r%-9s %d trials: validation score %.4f -> %.4f (%ds)%s", round, #study.trials, before or 0 / 0,
                      study.best.value, os.time() - t0, string.rep(" ", 30)))
  orrery.write_json(dir .. "/proxy_search.json", merged(results, {config = config}))
  orrery.plot(study.dir, study.dir)   -- search.svg beside the study's journal
end

-- The tuned configuration against the untuned default, with seeds no trial used, on the
-- validation and the test windows.
local final = {}
for _, which in ipairs({"default", "tuned"}) do
  final[which] = {validation = {}, test = {}}
  local c = which == "tuned" and config or default
  for seed = 1, final_seeds do
    local model = model_of(c, seed)
    orrery.train(merged(train_options(c, seed, string.format("final-%s-s%d", which, seed)),
                        {model = model, resume = true, checkpoint_at = {steps}}))
    final[which].validation[seed] = score(model, "validation")
    final[which].test[seed] = score(model, "test")
    io.write(string.format("\rfinal %-7s seed %d/%d (%ds)   ", which, seed, final_seeds, os.time() - t0))
    io.flush()
  end
end

-- Paired by seed: the tuned score minus the default's, with a 90% bootstrap interval over seeds.
local function paired(split)
  local d = {}
  for s = 1, final_seeds do d[s] = final.tuned[split][s] - final.default[split][s] end
  return stats.mean_interval(d)
end

print("\n\n" .. string.rep("-", 72))
print(string.format("%-10s %7s  %-40s", "round", "trials", "validation score: start -> best"))
for _, r in ipairs(results.rounds) do
  print(string.format("%-10s %7d  %.4f -> %.4f", r.round, r.trials, r.start or 0 / 0, r.best))
end
print(string.format("\n%-10s %-22s %-22s", "", "validation (mean)", "test (mean)"))
results.final = {}
for _, which in ipairs({"default", "tuned"}) do
  local function mean(x) local t = 0 for _, v in ipairs(x) do t = t + v end return t / #x end
  print(string.format("%-10s %-22.4f %-22.4f", which, mean(final[which].validation), mean(final[which].test)))
  results.final[which] = final[which]
end
for _, split in ipairs({"validation", "test"}) do
  local m, lo, hi = paired(split)
  local verdict = (hi < 0 and "tuned is better") or (lo > 0 and "tuned is worse") or "no difference"
  print(string.format("tuned - default, %-10s %+.4f  [%+.4f, %+.4f] over %d seeds: %s", split, m, lo, hi,
                      final_seeds, verdict))
  results.final[split .. "_difference"] = {mean = m, low = lo, high = hi, verdict = verdict}
end
print("\ntuned configuration:")
local keys = {}
for k in pairs(config) do keys[#keys + 1] = k end
table.sort(keys)
for _, k in ipairs(keys) do
  local v = config[k]
  if type(v) == "table" then
    v = string.format("gp %.3f, classic %.3f, observability %.3f", v.gp, v.classic, v.observability)
  end
  print(string.format("  %-13s %s", k, tostring(v)))
end
results.config, results.default, results.seconds = config, default, os.time() - t0
orrery.write_json(dir .. "/proxy_search.json", results)
print(string.format("\n%d s; written: %s/proxy_search.json", os.time() - t0, dir))
