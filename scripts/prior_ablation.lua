-- The synthetic prior, one change at a time: does adding a family to the pretraining mix change
-- zero-shot accuracy on real series? Each arm trains zero_shot.lua's model and recipe with the
-- synthetic source's families as the arm sets them, once per seed (the seed fixes the initial
-- weights and the data drawn, so seed s of every arm is paired), and scores it on the bundled
-- benchmark's validation windows (where a choice is made) and test windows. Every arm is
-- compared with the first, and with ETS, on the same configurations (data set x term): the mean
-- over seeds of log((MASE + CRPS) / 2 ratio), arm minus the other, with a 90% bootstrap over
-- configurations (an interval that holds 0 is reported as no difference); and by frequency
-- bucket against ETS, where the zero-shot goal is set.
--
--
-- An arm adds families to the default mix at a share of the synthetic series it draws (the
-- default families keep their proportions in the rest), sets another option of the synthetic
-- source, augments the default mix, or changes the recipe (the patch size, the loss's weights,
-- the observability share, the context length and the steps), or changes how the models are scored (the context they forecast
-- from, a Box-Cox transform). Arms that change different things join with '+': classical16+early
-- is classical16 with early's loss weights. Results: runs/prior_ablation/prior_ablation.json (rewritten after every run; run again
-- to resume, nothing retrained).

local zs = require("lib.zero_shot")
local stats = require("lib.stats")

local arms_known = {
  default      = zs.recipes.toto,  -- Toto 2.0's: the plugin's default families (TempoPFN's mix), 32-step patches
  state_space  = {families = {ets = 0.15, arima = 0.1}},  -- the classical state-space families, a quarter
  ets          = {families = {ets = 0.25}},
  arima        = {families = {arima = 0.25}},
  kernel_trend = {families = {kernel_trend = 0.25}},      -- KernelSynth on trends (CauKer's mean functions)
  short        = {synthetic = {short_prob = 0.3}},        -- 30% short series of their own, 24 to 500 steps
  augmented    = {augment = {sign_flip = 0.5, time_reversal = 0.5, mixup = 0.1}},  -- the default mix, augmented
  -- The families that helped alone, together: half the synthetic series.
  classical    = {families = {ets = 0.2, kernel_trend = 0.2, arima = 0.1}},
  -- The recipe: 16-step patches (a 72-step monthly history is 5 tokens, not 3), and the
  -- observability share at 20% instead of Toto 2.0's 42.5% (that source is 10-second to 5-minute
  -- data; the benchmark is mostly yearly to monthly).
  patch16      = {patch_size = 16},
  patch8       = {patch_size = 8},   -- a 72-step monthly history is 9 tokens; 64 for a full context
  obs20        = {observability = 20},
  obs0         = {observability = 0},    -- the synthetic source alone, as the quickstart trained before
  -- Checkpoint averaging: the model scored is the mean of the weights at 85%, 90%, 95% and 100%
  -- of the steps (in the schedule's decay, the last 30%).
  averaged     = {average_from = 0.85},
  -- The two that helped most, together: the classical families on 16-step patches.
  classical16  = zs.recipes.classical16,  -- zero_shot.lua's default recipe
  -- The loss on what short horizons read: the first half of every target patch (16 of 32 steps)
  -- weighs 4 (the benchmark's horizons are 6 to 18 steps, except the high-frequency ones).
  early        = {early = {share = 0.5, weight = 4}},
  -- The classical families as most of the synthetic series: 80% rather than classical's half.
  classical80  = {families = {ets = 0.35, kernel_trend = 0.25, arima = 0.2}},
  -- The ets family's states: smoothing log-uniform, so half its series keep a stable season and
  -- a steady trend (uniform draws mostly move fast); or trends up to 5% of the level a step, as
  -- series that grow several-fold over their history do.
  persistent   = {synthetic = {ets_smoothing = "log_uniform"}},
  steep        = {synthetic = {ets_max_drift = 0.05}},
  -- The causal scaler over the last 8 patches rather than the whole history: on a trending
  -- series the whole history's mean lags the level, the latest values sit far out on asinh's
  -- compressed flank, and a season there is squeezed.
  window8      = {scaler_window = 8},
  window4      = {scaler_window = 4},
  -- Scoring, not training: the same models forecast from their last 64 steps only (the
  -- benchmark's windows offer up to `context`). An arm that trains as another did scores that
  -- arm's saved models rather than training them again.
  context64    = {eval_context = 64},
  -- Scoring too: the forecasts from the last 64 steps and from the whole context, averaged level
  -- by level (orrery.eval's context = {64, 512}: a context ensemble), a hedge between a short
  -- history that follows a moved level and a long one that shows a stable cycle.
  ensemble64   = {eval_context = {64, "all"}},
  -- Scoring too: each window's Box-Cox transform forecast and mapped back, its exponent in [0, 1]
  -- by Guerrero's method over the window's history in blocks of its season (orrery.eval's
  -- box_cox), so a series whose swings grow with its level is read as one whose swings are steady.
  boxcox       = {eval_box_cox = true},
  -- Trained and scored on short histories: contexts of 64 to 128 steps rather than 64 to 512, so
  -- a step costs about a quarter; context128x3 spends that on three times the steps.
  context128   = {train_context = 128, eval_context = 128},
  context128x3 = {train_context = 128, eval_context = 128, steps_scale = 3},
  -- 45% of the steps (1,080 of the quickstart's 2,400): what a shorter run gives up.
  steps45      = {steps_scale = 0.45},
  -- Every training sample observed over the whole context (the mixture's min_context off), where
  -- the default keeps the last L steps, L log-uniform in [64, 512]: the loss reaches every patch,
  -- so short histories are still the first patches of each sample, and long ones get three
  -- times the signal.
  full         = {min_context = 0},
  -- Trends that fade and break (the trend_breaks family) as 15% of the synthetic series: against
  -- a model carrying the last years' slope as far as it forecasts (classical16+full+breaks is the
  -- quickstart's recipe with them).
  breaks       = {families = {trend_breaks = 0.15}},
  breaks30     = {families = {trend_breaks = 0.3}},   -- twice the dose
  -- Long horizons: contiguous masked spans of up to 16 patches (256 steps, Toto 2.0's default)
  -- rather than 4, so more of the loss falls on patches far past the last one the model reads, as
  -- a forecast's later steps do.
  span16       = {cpm_max_span = 16},
}
local arm_names = "default, state_space, ets, arima, kernel_trend, short, augmented, classical, patch16, patch8, obs20, obs0, " ..
                  "averaged, classical16, early, classical80, persistent, steep, window8, window4, context64, ensemble64, boxcox, " ..
                  "context128, context128x3, steps45, full, breaks, breaks30, span16; or arms joined by '+', e.g. classical16+early"

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local args = orrery.args{
  "The synthetic prior, one change at a time: each arm trains zero_shot.lua's model with its change, once\n" ..
  "a seed, scores it on the bundled benchmark's validation and test windows, and compares it with the\n" ..
  "first arm and with ETS, paired by seed and configuration, with 90% bootstrap intervals.",
  {"arms", "strings", {"default", "state_space"}, "the arms, the first the reference: " .. arm_names},
  {"seeds", "int", 3, "seeds of every arm", min = 1},
  {"seed", "int", nil, "train and score this seed only, and report nothing (seeds side by side)", min = 0},
  {"steps", "int", 2000, "training steps of each model", min = 1},
  {"context", "int", 512, "steps a training series", min = 1},
  {"batch", "int", 32, "series a step", min = 1},
  {"device", "string", "cpu", "where to train: cpu or cuda"},
  {"data", "path", here .. "../assets/data", "the benchmark"},
  {"runs_dir", "string", "runs", "where prior_ablation/ goes"},
}

-- Arms joined by '+' ("classical16+early") are one arm with the settings of each. Tables of
-- settings merge entry by entry (persistent+steep sets two options of the synthetic source, and
-- ets+arima two families' shares); two parts that set the same thing (the patch size, a family's
-- share, an option) are refused, as no order would be right.
local function joined(name)
  local settings, set_by = {}, {}
  if not name:find("+", 1, true) or ("+" .. name .. "+"):find("++", 1, true) then return nil end  -- one arm, or an empty part
  local function set(into, key, value, part, path)
    if type(value) == "table" and (into[key] == nil or type(into[key]) == "table") then
      into[key], set_by[path] = into[key] or {}, set_by[path] or part
      for k, v in pairs(value) do set(into[key], k, v, part, path .. "." .. k) end
    elseif into[key] ~= nil then
      error("arm '" .. name .. "': '" .. set_by[path] .. "' and '" .. part .. "' both set " .. path ..
            "; join arms that change different things", 0)
    else
      into[key], set_by[path] = value, part
    end
  end
  for part in name:gmatch("[^+]+") do
    local arm = arms_known[part]
    if not arm then error("unknown arm '" .. part .. "' in '" .. name .. "' (arms: " .. arm_names .. ")", 0) end
    for k, v in pairs(arm) do set(settings, k, v, part, k) end
  end
  return settings
end
local arms = args.arms
for _, a in ipairs(arms) do
  arms_known[a] = arms_known[a] or joined(a)
  if not arms_known[a] then error("arms: unknown arm '" .. a .. "' (arms: " .. arm_names .. ")", 0) end
end
local seeds = args.seeds
-- seed=K trains and scores seed K only, and reports nothing: seeds run side by side this way,
-- each in its own runs_dir; their scores merged into one prior_ablation.json then report.
local only_seed = args.seed
if only_seed and only_seed >= seeds then
  error("seed must be a whole number from 0 to seeds - 1 (" .. (seeds - 1) .. "), got '" .. only_seed .. "'", 0)
end
local steps = args.steps
local context = args.context
local device = args.device
local benchmark = args.data
local dir = args.runs_dir .. "/prior_ablation"

-- The arm's families: its additions at their shares, the default families in the rest.
local function families_of(arm) return zs.families(arms_known[arm].families) end

-- The synthetic source's options for an arm: its families, and any other option it sets.
local function synthetic_options(arm)
  local o = {families = families_of(arm)}
  for k, v in pairs(arms_known[arm].synthetic or {}) do o[k] = v end
  return o
end

local results_path = dir .. "/prior_ablation.json"
local ok, saved = pcall(orrery.read_json, results_path)
local results = ok and saved or {}
results.config = {arms = arms, seeds = seeds, steps = steps, context = context, benchmark = benchmark}
results.scores = results.scores or {}  -- arm -> split -> seed -> {configuration = score}
results.families = results.families or {}
results.trained = results.trained or {}  -- arm -> how its runs were trained
results.scored = results.scored or {}    -- arm -> how its models were scored
results.summaries = results.summaries or {}  -- arm -> split -> seed -> {mase, crps, coverage}

-- Saved scores count only for the training they came from: a rerun with other steps, context,
-- batch or arm options must not pass old numbers off as new ones.
local same = require("lib.tables").same

-- The steps an averaging arm keeps checkpoints at: three from `from` of the run's `steps` to its
-- end (whose own checkpoint every run writes), each at least 1, none twice.
local function averaged_steps(from, steps)
  if not from then return nil end
  local at, seen = {}, {}
  for k = 0, 2 do
    local step = math.max(1, math.floor(steps * (from + k * (1 - from) / 3)))
    if step < steps and not seen[step] then at[#at + 1], seen[step] = step, true end
  end
  return #at > 0 and at or nil
end
-- A run's checkpoints at the steps `at` and its last step, `steps`: no other (a checkpoint
-- written by time, or on Ctrl-C, would weigh its step in the mean by chance).
local function averaged_checkpoints(checkpoints, at, steps)
  local wanted, out = {[steps] = true}, {}
  for _, step in ipairs(at) do wanted[step] = true end
  for _, c in ipairs(checkpoints or {}) do
    if wanted[tonumber(c:match("step%-(%d+)$"))] then out[#out + 1] = c end
  end
  if #out ~= #at + 1 then
    error("averaging needs the checkpoints of steps " .. table.concat(at, ", ") .. " and " .. steps .. "; the run kept "
          .. #out .. " of them", 0)
  end
  return out
end

local t0 = os.time()
for _, arm in ipairs(arms) do
  results.families[arm] = families_of(arm)
  local arm_steps = math.floor(steps * (arms_known[arm].steps_scale or 1))
  local arm_context = arms_known[arm].train_context or context
  local trained = {steps = arm_steps, context = arm_context, batch = args.batch,
                   synthetic = synthetic_options(arm), augment = arms_known[arm].augment or {},
                   patch_size = arms_known[arm].patch_size, scaler_window = arms_known[arm].scaler_window,
                   observability = arms_known[arm].observability,
                   average_from = arms_known[arm].average_from, early = arms_known[arm].early,
                   min_context = arms_known[arm].min_context, cpm_max_span = arms_known[arm].cpm_max_span,
                   device = device ~= "cpu" and device or nil}  -- a GPU run is not a CPU run; CPU tables stay as saved
  local function resolved(c)  -- "all": the context the arm trains on
    if type(c) ~= "table" then return c end
    local out = {}
    for i, v in ipairs(c) do out[i] = v == "all" and arm_context or v end
    return out
  end
  local scored = {context = resolved(arms_known[arm].eval_context) or context, box_cox = arms_known[arm].eval_box_cox}
  for i, c in ipairs(type(scored.context) == "table" and scored.context or {}) do  -- refused before any training
    for k = 1, i - 1 do
      if scored.context[k] == c then error("arm '" .. arm .. "' scores from " .. c .. " steps twice; give context= above " .. c, 0) end
    end
  end
  if results.scores[arm] and results.trained[arm] and
     not (same(results.trained[arm], trained) and same(results.scored[arm] or {context = context}, scored)) then
    error(results_path .. " holds arm '" .. arm .. "' trained otherwise (steps, context, batch or its options " ..
          "differ); give runs_dir= another folder to train it anew", 0)
  end
  results.trained[arm], results.scored[arm] = trained, scored
  -- The saved model of seed s of an arm trained exactly so, if any: scored, not trained again.
  local function trained_before(seed)
    local others = {}
    for other in pairs(results.trained) do others[#others + 1] = other end
    table.sort(others)
    for _, other in ipairs(others) do
      local path = dir .. "/runs/" .. other .. "-s" .. seed .. "/model.safetensors"
      local f = other ~= arm and same(results.trained[other], trained) and io.open(path, "rb")
      if f then f:close() return path, other end
    end
  end
  results.scores[arm] = results.scores[arm] or {validation = {}, test = {}}
  local checkpoint_at = averaged_steps(arms_known[arm].average_from, arm_steps)
  local early = arms_known[arm].early or {}
  for seed = only_seed or 0, only_seed or seeds - 1 do
    local key = tostring(seed)
    if not results.scores[arm].test[key] then
      local model = zs.model{seed = seed, device = device, patch_size = arms_known[arm].patch_size,
                             scaler_window = arms_known[arm].scaler_window}
      local saved_model, trained_as = trained_before(seed)
      local note
      if saved_model then
        model:load(saved_model)
        note = "scores " .. trained_as .. "'s model"
      else
        local early_steps = early.share and math.floor(model:describe().patch_size * early.share)
        local run = orrery.train(zs.train_fields{
          model = model,
          data = zs.mixture(synthetic_options(arm), {augment = arms_known[arm].augment,
                                                     min_context = arms_known[arm].min_context},
                            arms_known[arm].observability),
          steps = arm_steps, context = arm_context,
          batch = args.batch, seed = seed, name = arm .. "-s" .. seed, runs_dir = dir .. "/runs", quiet = true,
          checkpoint_at = checkpoint_at,
          early_steps = early_steps, early_weight = early.weight, cpm_max_span = arms_known[arm].cpm_max_span,
        })
        if checkpoint_at then model:load(averaged_checkpoints(run.checkpoints, checkpoint_at, arm_steps)) end
        model:save(run.run_dir .. "/model.safetensors")  -- to score again later (other windows, other settings)
        note = string.format("loss %.4f -> %.4f", run.first_loss, run.final_loss)
      end
      -- Scored without a transform, or (the boxcox arm) with it for every window, neither checked
      -- nor averaged, as this script's reports measured its arms: not through the front ends'
      -- defaults, which change, so that a results file holds one way of scoring.
      for _, split in ipairs({"validation", "test"}) do
        local ev = orrery.eval{model = model, name = arm, data = benchmark, baselines = {}, split = split,
                               context = scored.context, box_cox = scored.box_cox or false, box_cox_average = false,
                               quiet = true}
        results.scores[arm][split][key] = zs.scores_of(ev)
        for _, row in ipairs(ev.summary) do  -- the seed's geometric means: MASE, CRPS, coverage
          if row.model == arm then
            results.summaries[arm] = results.summaries[arm] or {validation = {}, test = {}}
            results.summaries[arm][split][key] = {mase = row.mase, crps = row.crps, coverage = row.coverage}
          end
        end
      end
      orrery.write_json(results_path, results)
      io.write(string.format("\r%-12s seed %d: %s   (%ds)   ", arm, seed, note, os.time() - t0))
      io.flush()
    end
  end
end

if only_seed then
  print(string.format("\nseed %d done: %s", only_seed, results_path))
  return
end

-- ETS on the same windows, once: the classical model the zero-shot goal is set against, and
-- each configuration's frequency bucket.
results.reference = results.reference or {}
for _, split in ipairs({"validation", "test"}) do
  if not results.reference[split] then
    local ev = orrery.eval{data = benchmark, baselines = {"ets"}, split = split, quiet = true}
    local ref, scores = {}, zs.scores_of(ev)
    for _, row in ipairs(ev.rows) do
      local config = zs.configuration(row)
      if scores[config] then ref[config] = {score = scores[config], bucket = row.bucket} end
    end
    results.reference[split] = ref
    -- The frequency buckets in the report's order, as orrery.eval gives them.
    results.bucket_order = {}
    for _, b in ipairs(ev.buckets) do
      if b.by == "frequency" then results.bucket_order[#results.bucket_order + 1] = b.bucket end
    end
    orrery.write_json(results_path, results)
  end
end

-- log score of an arm on a configuration (the mean over seeds: seeds are paired), or of ETS.
local ETS = {}  -- the baseline, as a key no arm's name can be
local function log_score(who, split, config)
  if who == ETS then return math.log(results.reference[split][config].score) end
  local t = 0
  for seed = 0, seeds - 1 do t = t + math.log(results.scores[who][split][tostring(seed)][config]) end
  return t / seeds
end
-- The configurations every arm and ETS scored, in a fixed order (sums round the same way).
local function configurations(split, bucket)
  local configs = {}
  for config, ref in pairs(results.reference[split]) do
    local everywhere = bucket == nil or ref.bucket == bucket
    for _, arm in ipairs(arms) do
      for seed = 0, seeds - 1 do everywhere = everywhere and results.scores[arm][split][tostring(seed)][config] ~= nil end
    end
    if everywhere then configs[#configs + 1] = config end
  end
  table.sort(configs)
  return configs
end
local function geomean(who, split, bucket)
  local t, configs = 0, configurations(split, bucket)
  for _, config in ipairs(configs) do t = t + log_score(who, split, config) end
  return math.exp(t / #configs), #configs
end
-- a against b, paired by configuration: the relative change of the geometric mean, with a 90%
-- bootstrap over configurations.
local function paired(a, b, split)
  local d, configs = {}, configurations(split)
  for i, c in ipairs(configs) do d[i] = log_score(a, split, c) - log_score(b, split, c) end
  local diff = stats.relative_change(d)
  local text = diff.text
  diff.text = nil
  return diff, text
end

results.comparison = {}
for _, arm in ipairs(arms) do
  local row = {validation = geomean(arm, "validation"), test = geomean(arm, "test"), buckets = {}}
  for _, split in ipairs({"validation", "test"}) do
    if arm ~= arms[1] then row[split .. "_difference"], row[split .. "_text"] = paired(arm, arms[1], split) end
    row[split .. "_vs_ets"], row[split .. "_ets_text"] = paired(arm, ETS, split)
  end
  for _, bucket in ipairs(results.bucket_order) do
    local g, n = geomean(arm, "test", bucket)
    if n > 0 then row.buckets[bucket] = {score = g, ets = geomean(ETS, "test", bucket), configurations = n} end
  end
  results.comparison[arm] = row
end
local function report(title, text_key)
  print("\n" .. title .. " (90% bootstrap over configurations):")
  for _, arm in ipairs(arms) do
    local row = results.comparison[arm]
    if row["test" .. text_key] then
      print(string.format("  %-20s test %-36s validation %s", arm, row["test" .. text_key], row["validation" .. text_key]))
      row["test" .. text_key], row["validation" .. text_key] = nil, nil
    end
  end
end
print(string.format("\n\n%-20s %10s %10s", "arm", "validation", "test"))
for _, arm in ipairs(arms) do
  print(string.format("%-20s %10.4f %10.4f", arm, results.comparison[arm].validation, results.comparison[arm].test))
end
print(string.format("%-20s %10.4f %10.4f", "ETS (baseline)", geomean(ETS, "validation"), geomean(ETS, "test")))
report("arm / " .. arms[1] .. " - 1", "_text")
report("arm / ETS - 1", "_ets_text")
print("\ntest windows by frequency, arm / ETS (configurations):")
for _, bucket in ipairs(results.bucket_order) do
  local line = string.format("  %-10s", bucket)
  for _, arm in ipairs(arms) do
    local b = results.comparison[arm].buckets[bucket]
    if b then line = line .. string.format("  %s %.3f (%d)", arm, b.score / b.ets, b.configurations) end
  end
  print(line)
end
print("(geometric means over configurations of (MASE + CRPS) / 2 relative to seasonal naive, mean of "
      .. seeds .. " seeds; below 1 beats seasonal naive)")
orrery.write_json(results_path, results)
print("results: " .. results_path)
