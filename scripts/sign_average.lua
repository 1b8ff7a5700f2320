-- Sign averaging at inference: does averaging a model's forecast with the negated forecast of the
-- negated series (model:forecast's sign_average) change zero-shot accuracy? It re-scores the
-- models prior_ablation.lua saved, each arm's seeds, on the bundled benchmark's validation and
-- test windows, plain and sign-averaged. Paired by model and configuration (data set x term):
-- the mean over seeds of log((MASE + CRPS) / 2 ratio), averaged minus plain, with a 90%
-- bootstrap over configurations; an interval that holds 0 is reported as no difference.
--
-- runs_dir is the one prior_ablation.lua was given; its models are read from
-- runs_dir/prior_ablation/runs/ARM-sSEED/model.safetensors and scored with the context they were
-- trained with. Results:
-- runs_dir/prior_ablation/sign_average.json (rewritten after every model; run again to resume).

local zs = require("lib.zero_shot")
local stats = require("lib.stats")
local same = require("lib.tables").same
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local args = orrery.args{
  "Sign averaging at inference: re-score the models prior_ablation.lua saved, plain and sign-averaged,\n" ..
  "on the benchmark's validation and test windows, paired by model and configuration.",
  {"arms", "strings", {"augmented"}, "prior_ablation.lua's arms whose models are scored"},
  {"seeds", "int", 3, "seeds of each arm", min = 1},
  {"data", "path", here .. "../assets/data", "the benchmark"},
  {"runs_dir", "string", "runs", "the runs_dir prior_ablation.lua was given"},
}

local arms = args.arms
local seeds = args.seeds
local benchmark = args.data
local dir = args.runs_dir .. "/prior_ablation"
local results_path = dir .. "/sign_average.json"
local splits = {"validation", "test"}
local ways = {plain = false, averaged = true}

-- How prior_ablation.lua trained each arm: its models are scored with the context they were
-- trained and scored with, and scores kept from models trained otherwise are dropped.
local ablation_path = dir .. "/prior_ablation.json"
local found, ablation = pcall(orrery.read_json, ablation_path)
if not found then error(ablation_path .. " is missing: run prior_ablation.lua with this runs_dir first", 0) end
local ok, saved = pcall(orrery.read_json, results_path)
local results = ok and saved or {}
results.scores, results.trained = results.scores or {}, results.trained or {}

local t0 = os.time()
for _, arm in ipairs(arms) do
  local trained = (ablation.trained or {})[arm]
  if not trained then error(ablation_path .. " has no arm '" .. arm .. "'", 0) end
  if not same(results.trained[arm], trained) then results.scores[arm] = nil end  -- retrained since
  results.trained[arm], results.scores[arm] = trained, results.scores[arm] or {}
  local context = trained.context
  for seed = 0, seeds - 1 do
    local key = tostring(seed)
    if not results.scores[arm][key] then
      local path = string.format("%s/runs/%s-s%d/model.safetensors", dir, arm, seed)
      local f = io.open(path, "rb")
      if not f then
        error(path .. " is missing: run prior_ablation.lua arms=" .. arm .. " seeds=" .. seeds
              .. " with this runs_dir first", 0)
      end
      f:close()
      local model = orrery.load(path)
      local one = {}
      for way, on in pairs(ways) do
        one[way] = {}
        for _, split in ipairs(splits) do
          -- Without a transform, as prior_ablation.lua scored these models and this script's
          -- report measured them, whatever the front ends' defaults are now.
          local ev = orrery.eval{model = model, name = arm, data = benchmark, baselines = {}, split = split,
                                 context = context, sign_average = on, box_cox = false, quiet = true}
          one[way][split] = zs.scores_of(ev)
        end
      end
      results.scores[arm][key] = one
      orrery.write_json(results_path, results)
      io.write(string.format("\r%-12s seed %d scored   (%ds)   ", arm, seed, os.time() - t0))
      io.flush()
    end
  end
end
print()

-- averaged / plain - 1 for an arm on a split: paired by configuration, seeds averaged in logs.
local function compare(arm, split)
  local configs = {}
  for config in pairs(results.scores[arm]["0"].plain[split]) do
    local everywhere = true
    for seed = 0, seeds - 1 do
      local s = results.scores[arm][tostring(seed)]
      everywhere = everywhere and s.plain[split][config] ~= nil and s.averaged[split][config] ~= nil
    end
    if everywhere then configs[#configs + 1] = config end
  end
  table.sort(configs)  -- a fixed order: sums round the same way on every run
  local d, plain, averaged = {}, 0, 0
  for i, config in ipairs(configs) do
    local diff, p = 0, 0
    for seed = 0, seeds - 1 do
      local s = results.scores[arm][tostring(seed)]
      diff = diff + math.log(s.averaged[split][config]) - math.log(s.plain[split][config])
      p = p + math.log(s.plain[split][config])
    end
    d[i] = diff / seeds
    plain, averaged = plain + p / seeds, averaged + p / seeds + d[i]
  end
  local row = stats.relative_change(d)
  row.plain, row.averaged, row.configurations = math.exp(plain / #configs), math.exp(averaged / #configs), #configs
  return row
end

results.comparison = {}
print(string.format("%-12s %-10s %8s %9s   %s", "arm", "split", "plain", "averaged", "averaged / plain - 1 (90% bootstrap)"))
for _, arm in ipairs(arms) do
  results.comparison[arm] = {}
  for _, split in ipairs(splits) do
    local r = compare(arm, split)
    print(string.format("%-12s %-10s %8.4f %9.4f   %s", arm, split, r.plain, r.averaged, r.text))
    r.text = nil
    results.comparison[arm][split] = r
  end
end
print("(geometric means over configurations of (MASE + CRPS) / 2 relative to seasonal naive, mean of "
      .. seeds .. " seeds)")
orrery.write_json(results_path, results)
print("results: " .. results_path)
