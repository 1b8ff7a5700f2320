-- Does a model read its covariates? The injection test (reference/prior-and-covariates.md §4.4):
-- train a Toto-style model with role embeddings on the synthetic prior with covariate tasks, then
-- forecast targets that are a covariate shifted by k steps plus noise, y[t] = x[t - k] + e, with
-- the covariate and without it, on the same windows. A model that reads covariates forecasts
-- these far better with them (the bar: half the CRPS or less). Two controls: a covariate that is
-- pure noise (the target does not follow it) and a placebo (the right kind of covariate, but
-- another task's) should change little.
--
--   orrery run scripts/covariate_injection.lua [steps=2000] [seeds=3] [tasks=64] [horizon=16]
--       [context=128] [covariate_prob=0.5] [max_effect=E] [max_lag=L] [batch=32]
--       [layers=4] [variate_layers=1|2] [injection_tasks=1024] [injection_lag=2*horizon]
--       [injection_lag_step=1] [injection_noise=0] [injection_plain=0] [injection_hard=true]
--       [variate_first=true]
--       [variate_attention=patch|joint]
--       [covariate_lags=0] [covariate_match=true] [regression_lags=0]
--       [prior=mixed|simple|injection] [signs=positive|both]
--       [device=cpu|cuda] [runs_dir=runs] [against=OTHER/covariate_injection.json]
--
-- Each arm is scored per task as CRPS with the covariate / CRPS without it (the mean of the
-- seeds' log ratios), with a 90% bootstrap over tasks; against= another run's JSON (the same
-- tasks) adds how much further this run's ratio goes than that run's, paired by task. Results:
-- runs/covariate_injection/covariate_injection.json; run again to read finished training back.

local stats = require("lib.stats")
local args, given = orrery.args{
  "Does a model read its covariates? Train a model with role embeddings on the synthetic prior, then\n" ..
  "forecast targets that follow a covariate shifted by k steps, with and without it, on the same windows;\n" ..
  "two controls (a noise covariate, a placebo) should change little.",
  {"steps", "int", 2000, "training steps of each seed's model", min = 1},
  {"seeds", "int", 3, "models trained", min = 1},
  {"tasks", "int", 64, "injection tasks scored", min = 2},
  {"horizon", "int", 16, "forecast horizon", min = 1},
  {"context", "int", 128, "steps of history", min = 16},
  {"batch", "int", 32, "series a step", min = 1},
  {"layers", "int", 4, "transformer layers", min = 2},
  {"variate_layers", "int", 1, "layers that attend across rows (dividing layers into groups of at least 2)", min = 1},
  {"variate_first", "bool", false, "attend across rows before along time in each group"},
  {"variate_attention", "string", "patch", "across rows patch by patch, or jointly over every patch", choices = {"patch", "joint"}},
  {"covariate_lags", "int", 0, "align covariate rows by their best lag up to K steps", min = 0},
  {"covariate_match", "bool", false, "give the model how well each aligned row matches (needs covariate_lags)"},
  {"regression_lags", "int", 0, "also score through the in-context regression over lags 0..N (0: lag 0 only)", min = 0},
  {"prior", "string", "mixed", "the training prior", choices = {"mixed", "simple", "injection"}},
  {"covariate_prob", "number", nil, "prior=mixed: the share of samples that are covariate tasks, in (0, 1] (default 0.5)", min = 0, max = 1},
  {"max_effect", "number", nil, "prior=mixed: the largest covariate effect, in base spreads", min = 0},
  {"max_lag", "int", nil, "prior=mixed: the largest covariate lag", min = 0},
  {"signs", "string", "positive", "prior=injection: targets follow their covariate, or half of them negated (both)",
   choices = {"positive", "both"}},
  {"injection_tasks", "int", nil, "prior=injection: training tasks (default 1024)", min = 1},
  {"injection_lag", "int", nil, "prior=injection: the largest lag (default 2 horizons)", min = 0},
  {"injection_lag_step", "int", nil, "prior=injection: the step between lags (default 1)", min = 1},
  {"injection_noise", "number", nil, "prior=injection: the share of tasks whose covariate is noise, in [0, 1)", min = 0, max = 1},
  {"injection_plain", "number", nil, "prior=injection: the share of samples without their covariate, in [0, 1)", min = 0, max = 1},
  {"injection_hard", "bool", nil, "prior=injection: a noise task's target is the most correlated of 8 other paths"},
  {"device", "string", "cpu", "where to train: cpu or cuda"},
  {"runs_dir", "string", "runs", "where covariate_injection/ goes"},
  {"against", "path", nil, "another run's covariate_injection.json (the same tasks) to pair this one with"},
}

local steps, seeds, tasks = args.steps, args.seeds, args.tasks
local horizon, context, batch = args.horizon, args.context, args.batch
-- layers: the model's depth; variate_layers: how many of them mix across rows (Toto 2.0 has 1,
-- the last), each closing a group of layers / variate_layers layers, or opening it with
-- variate_first=true; each group keeps at least one layer along time.
local layers = args.layers
local variate_layers = args.variate_layers
if layers % variate_layers ~= 0 or layers // variate_layers < 2 then
  error(string.format("variate_layers must divide layers into groups of at least 2 (one along time), got %d of %d",
                      variate_layers, layers), 0)
end
local variate_first = args.variate_first
-- variate_attention=joint: the variate layers attend across rows and causally along time at once
-- (toto2's option), so a target reads a covariate's earlier patches, a lag, directly.
local variate_attention = args.variate_attention
-- covariate_lags=K: the model's covariate rows moved, before it reads them, by the lag up to K
-- at which they best match the target in context (past-only rows a patch less; orrery.model's
-- covariate_lags).
local covariate_lags = args.covariate_lags
-- covariate_match=true: each aligned row also tells the model how well it matches the target so
-- far (toto2's covariate_match), so the model can tell a covariate that drives it from noise.
local covariate_match = args.covariate_match
-- regression_lags=K: also score the known-future arms through the in-context regression over the
-- covariate's lags 0..K (model:forecast's regression_lags), beside the one at lag 0.
local regression_lags = args.regression_lags
if covariate_match and covariate_lags == 0 then
  error("covariate_match=true reads how well a row matches once aligned by lag: give covariate_lags=K too", 0)
end
-- prior=mixed (the synthetic prior, covariate_prob of its samples covariate tasks, their effects
-- up to max_effect base spreads and max_lag steps); prior=simple trains on covariate tasks only,
-- each one informative covariate with a lagged linear effect; prior=injection trains on the test's
-- own kind of task, made from other paths (the ceiling: can this model learn to read a covariate
-- at all, whatever the prior teaches?).
local prior = args.prior
local max_effect, max_lag = args.max_effect, args.max_lag
if max_effect and max_effect <= 0 then error("max_effect must be above 0, got " .. max_effect, 0) end
if prior ~= "mixed" then  -- the other priors fix their tasks
  for _, name in ipairs({"covariate_prob", "max_effect", "max_lag"}) do
    if given[name] then error(name .. " shapes the mixed prior's covariate tasks; prior=" .. prior .. " fixes its own", 0) end
  end
end
-- signs=both: half of prior=injection's training tasks follow their covariate negated,
-- y[t] = -x[t - k] + noise, so the model must tell the sign from the history, as it must for the
-- prior's effects (of either sign).
local signs = args.signs
-- injection_tasks: how many tasks prior=injection trains on (each a whole window of its series);
-- injection_lag: their largest lag, injection_lag_step the step between their lags (each lag
-- 0, step, 2 step, ... up to the largest equally often).
local injection_tasks, injection_lag = args.injection_tasks or 1024, args.injection_lag or 2 * horizon
local injection_lag_step = args.injection_lag_step or 1
-- injection_noise: the share of those tasks whose covariate is noise (the target follows another
-- path), so the model must also learn when not to lean on its covariate, as the noise arm asks.
local injection_noise = args.injection_noise or 0
if injection_noise >= 1 then error("injection_noise must be a share in [0, 1), got " .. injection_noise, 0) end
-- injection_plain: the share of training samples that are those tasks' targets alone, without their
-- covariate, so a forecast without a covariate is as familiar to the model as one with it.
local injection_plain = args.injection_plain or 0
if injection_plain >= 1 then error("injection_plain must be a share in [0, 1), got " .. injection_plain, 0) end
-- injection_hard=true: a noise task's target is, of 8 other paths drawn at random, the one whose
-- window correlates most (in size) with the covariate's, so that the distractors the model learns
-- to set aside are as convincing as the placebo's worst (paths correlating 0.5-0.8 with a target).
local injection_hard = args.injection_hard or false
if injection_hard and injection_noise == 0 then error("injection_hard=true picks noise tasks' targets: give injection_noise too", 0) end
if injection_hard and injection_tasks < 2 then
  error("injection_hard=true picks each noise task's target among the other paths: injection_tasks must be at least 2, got " ..
        injection_tasks, 0)
end
for _, name in ipairs({"injection_tasks", "injection_lag", "injection_lag_step", "injection_noise", "injection_plain",
                       "injection_hard"}) do
  if given[name] and prior ~= "injection" then error(name .. " is for prior=injection", 0) end
end
local covariate_prob = args.covariate_prob or 0.5
if covariate_prob <= 0 then error("covariate_prob must lie in (0, 1], got " .. covariate_prob, 0) end
local dir = args.runs_dir .. "/covariate_injection"
-- against: read before any training, so a wrong file is named at once.
local against
if args.against then
  local ok, other = pcall(orrery.read_json, args.against)
  if not ok then error("against=" .. args.against .. ": " .. tostring(other), 0) end
  for _, key in ipairs({"tasks", "horizon", "context"}) do
    local want = ({tasks = tasks, horizon = horizon, context = context})[key]
    if not (other.config and other.scores) or other.config[key] ~= want then
      error(string.format("against=%s was scored with %s=%s, this run has %d: only runs on the same tasks pair",
                          args.against, key, tostring(other.config and other.config[key]), want), 0)
    end
  end
  against = other
end

-- The tasks' paths: smooth and rough shapes (Gaussian processes, random walks, waves), never
-- missing, long enough for the longest lag.
local span = context + 3 * horizon
local paths = orrery.data{"synthetic", families = {kernel_synth = 1, ou = 1, waves = 1}, missing_prob = 0, seed = 77}
                    :sample(tasks, span, 0)
local function window(p, from, n) local w = {} for t = 1, n do w[t] = p[from + t - 1] end return w end
local function sd(x)
  local m, s = 0, 0
  for _, v in ipairs(x) do m = m + v end
  m = m / #x
  for _, v in ipairs(x) do s = s + (v - m) ^ 2 end
  return math.sqrt(s / #x)
end
-- y[t] = x[t - lag] + noise of a tenth of x's spread, over the context and the horizon.
math.randomseed(20261126)
local function normal() return math.sqrt(-2 * math.log(1 - math.random())) * math.cos(2 * math.pi * math.random()) end
local function shifted(p, lag)
  local x, y = window(p, 1 + 2 * horizon, context + horizon), {}
  local noise = 0.1 * sd(x)
  for t = 1, context + horizon do y[t] = p[2 * horizon + t - lag] + noise * normal() end
  return x, y
end

-- The arms: how the target is made and which covariate the forecast gets, in which role.
local arms = {
  {name = "lag 0, known-future", lag = 0, role = "future"},
  {name = "lag 1, known-future", lag = 1, role = "future"},
  {name = string.format("lag %d, known-future", horizon), lag = horizon, role = "future"},
  {name = string.format("lag %d, past-only", horizon), lag = horizon, role = "past"},
  {name = "noise covariate", lag = 0, role = "future", noise = true},
  {name = "placebo (another task's)", lag = 0, role = "future", placebo = true},
  -- Last, so that the arms before it keep their places in earlier runs' JSON: a lead of a horizon
  -- and a half, which a past-only row's built-in patch of lead does not cover at horizon 16.
  {name = string.format("lag %d, past-only", horizon + horizon // 2), lag = horizon + horizon // 2, role = "past"},
}
local data = {}  -- arm -> task -> {y, x}
for a, arm in ipairs(arms) do
  data[a] = {}
  for i = 1, tasks do
    local x, y = shifted(paths[i][1], arm.lag)
    if arm.noise then y = select(2, shifted(paths[i % tasks + 1][1], 0)) end   -- another path as the target
    if arm.placebo then x = shifted(paths[i % tasks + 1][1], 0) end           -- another task's covariate
    data[a][i] = {x = x, y = y}
  end
end

-- CRPS of a quantile forecast (mean pinball loss over its levels, times 2) against the truth.
local function crps(f, truth)
  local total = 0
  for l, level in ipairs(f.levels) do
    for h = 1, horizon do
      local u = truth[h] - f.quantiles[l][h]
      total = total + math.max(level * u, (level - 1) * u)
    end
  end
  return 2 * total / (#f.levels * horizon)
end

-- |Pearson r| of two equally long lists.
local function abs_correlation(a, b)
  local n, ma, mb = #a, 0, 0
  for t = 1, n do ma, mb = ma + a[t] / n, mb + b[t] / n end
  local ab, aa, bb = 0, 0, 0
  for t = 1, n do
    local da, db = a[t] - ma, b[t] - mb
    ab, aa, bb = ab + da * db, aa + da * da, bb + db * db
  end
  return (aa > 0 and bb > 0) and math.abs(ab) / math.sqrt(aa * bb) or 0
end

-- Of 8 paths other than path i drawn at random, the one whose window, as a target at `lag` is cut
-- from it, correlates most with the covariate window x: injection_hard's distractor.
local function most_alike(x, p, i, n, lag)
  local best, best_r = nil, -1
  for _ = 1, 8 do
    local j = (i + math.random(1, n - 1) - 1) % n + 1
    local r = abs_correlation(x, window(p[j][1], 1 + 2 * horizon - lag, #x))
    if r > best_r then best, best_r = p[j][1], r end
  end
  return best
end

-- What the model trains on, by `prior`.
local function training_data()
  if prior == "simple" then
    return {"synthetic", covariate_prob = 1, max_covariates = 1, noise_covariates = 0, effects = {lag = 1}}
  elseif prior == "injection" then
    -- injection_tasks tasks y[t] = x[t - k] + noise, k from 0 to twice the horizon, x known over
    -- the horizon, from paths the scored tasks do not use (seed 5, not 77), as a long CSV.
    local file, n, length = dir .. "/injection_tasks.csv", injection_tasks, 2 * context + 2 * horizon
    local source = orrery.data{"synthetic", families = {kernel_synth = 1, ou = 1, waves = 1}, missing_prob = 0, seed = 5}
    local p = source:sample(n, length + 2 * horizon, 0)
    os.execute("mkdir -p '" .. dir .. "'")
    local f = assert(io.open(file, "w"))
    f:write("id,time,y,x\n")
    for i = 1, n do
      local x = window(p[i][1], 1 + 2 * horizon, length)
      local lag, noise = (i - 1) % (injection_lag // injection_lag_step + 1) * injection_lag_step, 0.1 * sd(x)
      local sign = (signs == "both" and i % 2 == 0) and -1 or 1
      -- A noise task's target is another path (drawn only when asked: the other tasks stay as they were).
      local target = p[i][1]
      if injection_noise > 0 and math.random() < injection_noise then
        target = injection_hard and most_alike(x, p, i, n, lag) or p[i % n + 1][1]
      end
      for t = 1, length do
        f:write(string.format("%d,%d,%.9g,%.9g\n", i, t, sign * target[2 * horizon + t - lag] + noise * normal(), x[t]))
      end
    end
    f:close()
    local tasks_csv = {"csv", files = file, layout = "long", timestamp_format = "unix", value = "y", future_covariates = "x"}
    if injection_plain == 0 then return tasks_csv end
    -- The same targets read without their covariate column, mixed in by weight.
    tasks_csv.weight = 1 - injection_plain
    return {"mixture", sources = {tasks_csv, {"csv", files = file, layout = "long", timestamp_format = "unix", value = "y",
                                              weight = injection_plain}}}
  end
  return {"synthetic", covariate_prob = covariate_prob, max_effect = max_effect, max_lag = max_lag}
end

local results = {config = {steps = steps, seeds = seeds, tasks = tasks, horizon = horizon, context = context,
                           covariate_prob = prior == "mixed" and covariate_prob or nil, batch = batch, variate_layers = variate_layers, prior = prior,
                           layers = layers ~= 4 and layers or nil,
                           variate_first = variate_first,
                           variate_attention = variate_attention ~= "patch" and variate_attention or nil,
                           covariate_lags = covariate_lags > 0 and covariate_lags or nil, max_effect = max_effect, max_lag = max_lag,
                           covariate_match = covariate_match or nil,
                           regression_lags = regression_lags > 0 and regression_lags or nil,
                           signs = prior == "injection" and signs or nil,
                           injection_tasks = prior == "injection" and injection_tasks or nil,
                           injection_lag = prior == "injection" and injection_lag or nil,
                           injection_lag_step = prior == "injection" and injection_lag_step or nil,
                           injection_noise = injection_noise > 0 and injection_noise or nil,
                           injection_plain = injection_plain > 0 and injection_plain or nil,
                           injection_hard = injection_hard or nil}, scores = {}}
local training = training_data()
for seed = 0, seeds - 1 do
  local arch = {"toto2", d_model = 128, num_layers = layers, num_heads = 4, variate_roles = true}
  if variate_layers > 1 or layers ~= 4 then arch.layer_group_size = layers // variate_layers end  -- else the model as it was
  if variate_first then arch.variate_layer_first = true end
  if variate_attention ~= "patch" then arch.variate_attention = variate_attention end
  if covariate_match then arch.covariate_match = true end
  local m = orrery.model{arch = arch,
                         head = "quantile", param = "sp", patch_size = 16, seed = seed, device = args.device,
                         covariate_lags = covariate_lags > 0 and covariate_lags or nil}
  io.write(string.format("\rseed %d: training %d steps   ", seed, steps))
  io.flush()
  local run = orrery.train{
    model = m, data = training, optimizer = {"adamw", lr = 2e-3, weight_decay = 0.01},
    steps = steps, batch_size = batch, context_length = 2 * context, schedule = {warmup = math.min(100, steps // 10), decay = 0.3},
    seed = seed, quiet = true, runs_dir = dir .. "/runs", name = "s" .. seed, resume = true, log_every = 100,
  }
  m:save(run.run_dir .. "/model.safetensors")  -- for orrery forecast and covariate_benchmark.lua model=
  local per_arm = {}
  for a, arm in ipairs(arms) do
    per_arm[a] = {}
    for i = 1, tasks do
      local d = data[a][i]
      local history, truth = window(d.y, 1, context), window(d.y, context + 1, horizon)
      local with = {values = history, horizon = horizon}
      if arm.role == "future" then with.future_covariates = {d.x} else with.past_covariates = {window(d.x, 1, context)} end
      per_arm[a][i] = {with = crps(m:forecast(with), truth), without = crps(m:forecast{values = history, horizon = horizon}, truth)}
      if arm.role == "future" then  -- the same covariate through an in-context linear regression
        per_arm[a][i].regression = crps(m:forecast{values = history, future_covariates = {d.x}, horizon = horizon,
                                                   regression = true}, truth)
        if regression_lags > 0 then
          per_arm[a][i].lagged = crps(m:forecast{values = history, future_covariates = {d.x}, horizon = horizon,
                                                 regression = true, regression_lags = regression_lags}, truth)
        end
      end
    end
  end
  results.scores[tostring(seed)] = per_arm
  io.write(string.format("\rseed %d trained (loss %.4f -> %.4f) and scored   ", seed, run.first_loss, run.final_loss))
  io.flush()
end

-- Per arm: the change of CRPS the covariate brings, read by the model (`with`) or through the
-- regression, paired by task, seeds averaged in logs.
local function mean_of(a, key)
  local mean = 0
  for i = 1, tasks do
    for seed = 0, seeds - 1 do mean = mean + results.scores[tostring(seed)][a][i][key] / (tasks * seeds) end
  end
  return mean
end
-- Task i's log(key / without), the mean over the seeds of a run's scores.
local function log_ratio(scores, n_seeds, a, i, key)
  local t = 0
  for seed = 0, n_seeds - 1 do
    local s = scores[tostring(seed)][a][i]
    t = t + math.log(s[key] / s.without)
  end
  return t / n_seeds
end
local function change_of(a, key)
  local d = {}
  for i = 1, tasks do d[i] = log_ratio(results.scores, seeds, a, i, key) end
  local change = stats.relative_change(d)
  local text = change.text
  change.text = nil
  return change, mean_of(a, key), text
end
results.summary = {}
local function row(...) print((string.format("%-28s %10s %10s   %-46s %-46s %s", ...):gsub("%s+$", ""))) end
print("\n")
row("arm", "with", "without", "model: with / without - 1 (90% bootstrap)", "regression: the same",
    regression_lags > 0 and "over lags 0.." .. regression_lags .. ": the same" or "")
for a, arm in ipairs(arms) do
  local change, with, text = change_of(a, "with")
  local without = mean_of(a, "without")
  results.summary[arm.name] = {change = change, crps_with = with, crps_without = without}
  local through, lagged = "-", regression_lags > 0 and "-" or ""
  if arm.role == "future" then
    local rc, rmean, rtext = change_of(a, "regression")
    results.summary[arm.name].regression = {change = rc, crps = rmean}
    through = rtext
    if regression_lags > 0 then
      local lc, lmean, ltext = change_of(a, "lagged")
      results.summary[arm.name].lagged_regression = {change = lc, crps = lmean}
      lagged = ltext
    end
  end
  row(arm.name, string.format("%.4f", with), string.format("%.4f", without), text, through, lagged)
end
print(string.format("(CRPS in the data's units, mean over %d tasks and %d seeds; %d training steps)", tasks, seeds, steps))
if against then
  print(string.format("\nagainst %s (%d seeds): this run's with / without over that run's, paired by task (90%% bootstrap)",
                      args.against, against.config.seeds))
  results.against = {file = args.against}
  for a, arm in ipairs(arms) do
    if not against.scores["0"][a] then  -- an arm added since that run
      print(string.format("%-28s (not in that run)", arm.name))
    else
      local d = {}
      for i = 1, tasks do
        d[i] = log_ratio(results.scores, seeds, a, i, "with") - log_ratio(against.scores, against.config.seeds, a, i, "with")
      end
      local change = stats.relative_change(d)
      print(string.format("%-28s %s", arm.name, change.text))
      change.text = nil
      results.against[arm.name] = change
    end
  end
end
orrery.write_json(dir .. "/covariate_injection.json", results)
print("results: " .. dir .. "/covariate_injection.json")
