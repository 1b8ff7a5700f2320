-- Forecast defaults, decided on real series: which inference options should a model use when it
-- forecasts? Saved models (one per seed, as `quickstart.lua seed=N name=quickstart-sN` leaves
-- them) are scored under each arm on the validation and test windows of each benchmark, and every
-- arm is compared with the reference arm and with AutoETS on the same windows.
--
-- An arm is a set of inference options joined by '+':
--   whole   the window's whole history (its last 2048 steps)
--   c512    its last 512 steps (what the quickstart trains on)
--   ens     a context ensemble: the last 64 steps and the last 512, averaged level by level
--   boxcox  each window's Box-Cox transform forecast and mapped back (Guerrero's exponent)
--   checked the same, kept for a window only where it forecast the window's own last horizon better
--   avg     with boxcox or checked: the transform's forecast averaged with the plain one (checked:
--           the check scores that average), box_cox_average
--   sign    sign averaging: the forecast averaged with the negated forecast of the negated series
--   ets, theta, arima   pooled with these baselines fitted on the same window (a combination)
--   median  the combination's median forecaster rather than its mean
--   picked  the combination kept for a window only where it forecast the window's own last horizon
--           better than the model alone (combine_check)
--   oN      both checks (checked, picked) score the window's last N horizons, each held out in turn,
--           rather than its last one (check_origins = N)
-- e.g. ens+boxcox (the quickstart's scoring), ens+ets+theta, whole+boxcox+ets+theta+median,
-- ens+checked+ets+theta+picked+o3.
--
-- Each comparison is paired by configuration (data set x term): the mean over seeds of the log of
-- each configuration's (MASE + CRPS) / 2 ratio to seasonal naive, arm minus the other, with a 90%
-- bootstrap over configurations; an interval that holds 0 is reported as no difference. Decisions
-- are read on the validation windows, reports on the test windows. The guard a default must pass:
-- no data set more than 25% worse in CRPS than the reference (mean over seeds, test windows).
-- Results: OUT (rewritten after every evaluation; run again to resume, nothing scored twice).

local zs = require("lib.zero_shot")
local stats = require("lib.stats")
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local args = orrery.args{
  "Score saved models under each inference arm on the benchmarks' validation and test windows,\n" ..
  "paired by seed and configuration, against a reference arm and AutoETS.",
  {"models", "strings", {"runs/quickstart-s0", "runs/quickstart-s1", "runs/quickstart-s2"},
   "the saved models, one per seed: run folders (their model.safetensors) or .safetensors files"},
  {"benchmarks", "strings", {here .. "../assets/data", here .. "../assets/decision"}, "the benchmark folders"},
  {"arms", "strings", {"whole", "c512", "ens", "whole+boxcox", "ens+boxcox", "whole+checked", "ens+checked",
                       "ens+sign", "ens+boxcox+sign", "ens+ets+theta", "ens+boxcox+ets+theta", "ens+ets+theta+median"},
   "the arms scored (see the file's head)"},
  {"reference", "string", "whole", "the arm every other is compared with (one of arms)"},
  {"splits", "strings", {"validation", "test"}, "the windows scored"},
  {"guard", "number", 1.25, "the most a data set's CRPS may grow over the reference's under a default", min = 1},
  {"out", "string", "runs/decision.json", "the results file"},
  {"against", "path", nil, "another results file of this script, its models trained otherwise: each arm is compared " ..
   "with the same arm there, paired by configuration, each side's seeds averaged (a recipe's models against the quickstart's)"},
}

local parts_known = {whole = true, c512 = true, ens = true, boxcox = true, checked = true, sign = true, ets = true,
                     theta = true, arima = true, median = true, picked = true, avg = true}
-- The orrery.eval options of an arm.
local function options_of(arm)
  local o, contexts, combine = {box_cox = false, box_cox_average = false, sign_average = false}, 0, {}
  for part in arm:gmatch("[^+]+") do
    local origins = part:match("^o(%d+)$")
    if not parts_known[part] and not origins then
      error("arm '" .. arm .. "': unknown part '" .. part .. "' (known: whole, c512, ens, boxcox, checked, avg, sign, "
            .. "ets, theta, arima, median, picked, oN)", 0)
    end
    if origins then
      if o.check_origins then error("arm '" .. arm .. "': give one oN", 0) end
      o.check_origins = tonumber(origins)
      if o.check_origins < 1 then error("arm '" .. arm .. "': " .. part .. " checks over no horizon; give o1 or more", 0) end
    elseif part == "whole" then o.context, contexts = 2048, contexts + 1
    elseif part == "c512" then o.context, contexts = 512, contexts + 1
    elseif part == "ens" then o.context, contexts = {64, 512}, contexts + 1
    elseif part == "boxcox" then o.box_cox = true
    elseif part == "checked" then o.box_cox = "checked"
    elseif part == "avg" then o.box_cox_average = true
    elseif part == "sign" then o.sign_average = true
    elseif part == "median" then o.combine_rule = "median"
    elseif part == "picked" then o.combine_check = true
    else combine[#combine + 1] = part end
  end
  if contexts ~= 1 then error("arm '" .. arm .. "': give exactly one of whole, c512, ens", 0) end
  if arm:find("boxcox", 1, true) and arm:find("checked", 1, true) then
    error("arm '" .. arm .. "': give boxcox or checked, not both", 0)
  end
  if o.box_cox_average and not o.box_cox then
    error("arm '" .. arm .. "': avg averages the Box-Cox forecast with the plain one; give boxcox or checked", 0)
  end
  if o.combine_rule and #combine == 0 then error("arm '" .. arm .. "': median needs baselines to combine with", 0) end
  if o.combine_check and #combine == 0 then error("arm '" .. arm .. "': picked needs baselines to combine with", 0) end
  if o.check_origins and o.box_cox ~= "checked" and not o.combine_check then
    error("arm '" .. arm .. "': o" .. o.check_origins .. " sets the horizons a check scores; give checked or picked", 0)
  end
  if #combine > 0 then o.combine = combine end
  return o
end
local reference_listed = false
for _, arm in ipairs(args.arms) do
  options_of(arm)  -- every arm checked before any work
  reference_listed = reference_listed or arm == args.reference
end
if not reference_listed then error("reference '" .. args.reference .. "' is not one of arms", 0) end
if #args.models < 1 then error("models: give at least one saved model", 0) end

local against = args.against and orrery.read_json(args.against)
if against and (type(against.scores) ~= "table" or type(against.models) ~= "table") then
  error("against: " .. args.against .. " is not a results file of decision.lua (no scores, no models)", 0)
end
if against and #against.models ~= #args.models then
  error(string.format("against: %s holds %d models and models= gives %d; compare as many seeds on each side",
                      args.against, #against.models, #args.models), 0)
end
for _, arm in ipairs(against and args.arms or {}) do  -- before any work
  for _, bench in ipairs(args.benchmarks) do
    for _, split in ipairs(args.splits) do
      local key = bench .. "|" .. split
      if not (against.scores[arm] and against.scores[arm][key]) then
        error(string.format("against: %s has no scores of arm '%s' on %s; score it there first, or leave the arm out",
                            args.against, arm, key), 0)
      end
      -- Each ratio is compared in logs: one at or below 0, or not a number, has no log.
      for s, by_config in ipairs(against.scores[arm][key]) do
        for config, v in pairs(by_config) do
          for _, field in ipairs({"score", "crps", "mase"}) do
            local x = type(v) == "table" and v[field]
            if type(x) ~= "number" or not (x > 0) or x == math.huge then
              error(string.format("against: %s: arm '%s' on %s, seed %d, %s: %s is %s, not a positive ratio",
                                  args.against, arm, key, s - 1, config, field, tostring(x)), 0)
            end
          end
        end
      end
    end
  end
end

local models = {}
for i, path in ipairs(args.models) do
  local file = path:match("%.safetensors$") and path or path .. "/model.safetensors"
  local f = io.open(file, "rb")
  if not f then error("models: " .. file .. " is missing (train it: orrery run scripts/quickstart.lua seed=" .. (i - 1)
                      .. " name=quickstart-s" .. (i - 1) .. ")", 0) end
  f:close()
  models["s" .. (i - 1)] = orrery.load(file)
end
local seeds = #args.models

local folder = args.out:match("^(.*)/[^/]*$")
if folder and not os.execute("mkdir -p '" .. folder .. "'") then error("cannot create the folder " .. folder, 0) end
local ok, saved = pcall(orrery.read_json, args.out)
local results = ok and saved or {}
-- Scores of other models go; ETS's, which depend on the windows alone, stay.
if not require("lib.tables").same(results.models, args.models) then results.scores = nil end
results.models, results.scores, results.ets = args.models, results.scores or {}, results.ets or {}
results.against = args.against

-- {configuration = {score = (MASE + CRPS) / 2 ratio, crps = CRPS ratio, mase = MASE ratio, bucket}} of
-- one forecaster's rows.
local function rows_of(ev, name)
  local out = {}
  for _, row in ipairs(ev.rows) do
    if row.model == name then
      local m, c = row.mase_ratio, row.crps_ratio
      if m == m and c == c and math.abs(m) ~= math.huge and math.abs(c) ~= math.huge then
        out[zs.configuration(row)] = {score = (m + c) / 2, crps = c, mase = m, bucket = row.bucket}
      end
    end
  end
  return out
end

local t0 = os.time()
for _, bench in ipairs(args.benchmarks) do
  for _, split in ipairs(args.splits) do
    local key = bench .. "|" .. split
    if not results.ets[key] then
      local ev = orrery.eval{data = bench, baselines = {"ets"}, split = split, quiet = true}
      results.ets[key] = rows_of(ev, "ets")
      orrery.write_json(args.out, results)
    end
    for _, arm in ipairs(args.arms) do
      results.scores[arm] = results.scores[arm] or {}
      if not results.scores[arm][key] then
        local o = options_of(arm)
        o.models, o.data, o.baselines, o.split, o.quiet = models, bench, {}, split, true
        local ev = orrery.eval(o)
        local suffix = o.combine and ("+" .. table.concat(o.combine, "+") .. (o.combine_rule and "/median" or "")
                                      .. (o.combine_check and "/checked" or "")) or ""
        local by_seed = {}
        for s = 0, seeds - 1 do by_seed[s + 1] = rows_of(ev, "s" .. s .. suffix) end
        results.scores[arm][key] = by_seed
        orrery.write_json(args.out, results)
      end
      io.write(string.format("\r%-28s %-10s %-30s scored   (%ds)   ", arm, split, bench:match("[^/]+$"), os.time() - t0))
      io.flush()
    end
  end
end
print()

-- ETS's scores as an arm's, the same for every seed.
local function every_seed(t)
  local out = {}
  for s = 1, seeds do out[s] = t end
  return out
end

-- The configurations every seed of both arms scored, sorted (sums round the same on every run).
local function common(a, b)
  local configs = {}
  for config in pairs(a[1]) do
    local everywhere = true
    for s = 1, seeds do everywhere = everywhere and a[s][config] ~= nil and b[s][config] ~= nil end
    if everywhere then configs[#configs + 1] = config end
  end
  table.sort(configs)
  return configs
end

-- a / b - 1 on `field` over configurations, seeds averaged in logs; `bucket` keeps only that
-- frequency bucket.
local function compare(a, b, field, bucket)
  local d = {}
  for _, config in ipairs(common(a, b)) do
    if not bucket or a[1][config].bucket == bucket then
      local diff = 0
      for s = 1, seeds do diff = diff + math.log(a[s][config][field]) - math.log(b[s][config][field]) end
      d[#d + 1] = diff / seeds
    end
  end
  if #d < 2 then return nil end
  local r = stats.relative_change(d)
  r.configurations = #d
  return r
end

-- The geometric mean over configurations of an arm's `field`, seeds averaged.
local function level(a, field)
  local t, n = 0, 0
  for _, config in ipairs(common(a, a)) do
    for s = 1, seeds do t = t + math.log(a[s][config][field]) / seeds end
    n = n + 1
  end
  return n > 0 and math.exp(t / n) or nil
end

-- Each configuration's CRPS of a over b (geometric mean over seeds) as {configuration, [field]},
-- the worst first.
local function crps_ratios(a, b, field)
  local out = {}
  for _, config in ipairs(common(a, b)) do
    local r = 0
    for s = 1, seeds do r = r + math.log(a[s][config].crps / b[s][config].crps) / seeds end
    out[#out + 1] = {configuration = config, [field] = math.exp(r)}
  end
  table.sort(out, function(x, y) return x[field] > y[field] end)
  return out
end

results.comparison = {}
for _, bench in ipairs(args.benchmarks) do
  for _, split in ipairs(args.splits) do
    local key = bench .. "|" .. split
    local ref, ets = results.scores[args.reference][key], every_seed(results.ets[key])
    print(string.format("\n%s, %s windows (%d seeds; geometric means of ratios to seasonal naive)", bench, split, seeds))
    print(string.format("%-28s %7s %7s %7s   %-38s %-38s", "arm", "score", "MASE", "CRPS",
                        "score vs " .. args.reference, "score vs ETS"))
    print(string.format("%-28s %7.4f %7.4f %7.4f", "ets", level(ets, "score"), level(ets, "mase"), level(ets, "crps")))
    local out = {}
    for _, arm in ipairs(args.arms) do
      local a = results.scores[arm][key]
      local row = {score = level(a, "score"), mase = level(a, "mase"), crps = level(a, "crps"),
                   vs_ets = {score = compare(a, ets, "score"), mase = compare(a, ets, "mase"), crps = compare(a, ets, "crps")},
                   vs_reference = arm ~= args.reference and compare(a, ref, "score") or nil}
      local function text(r) return r and string.format("%+.1f%% [%+.1f, %+.1f] %s", 100 * r.change, 100 * r.low,
                                                        100 * r.high, r.verdict) or "" end
      print(string.format("%-28s %7.4f %7.4f %7.4f   %-38s %-38s", arm, row.score, row.mase, row.crps,
                          text(row.vs_reference), text(row.vs_ets.score)))
      -- By frequency bucket against ETS, and the data sets where the arm is worst against the reference.
      row.buckets = {}
      local buckets = {}
      for _, v in pairs(a[1]) do buckets[v.bucket] = true end
      for b in pairs(buckets) do
        row.buckets[b] = {mase = compare(a, ets, "mase", b), crps = compare(a, ets, "crps", b)}
      end
      -- The same arm on the other models: by configuration (seeds averaged), and by frequency bucket.
      local other = against and against.scores[arm] and against.scores[arm][key]
      if other then
        row.vs_against = {score = compare(a, other, "score"), mase = compare(a, other, "mase"),
                          crps = compare(a, other, "crps"), buckets = {}}
        for b in pairs(buckets) do
          row.vs_against.buckets[b] = {mase = compare(a, other, "mase", b), crps = compare(a, other, "crps", b)}
        end
        local by = crps_ratios(a, other, "crps_vs_against")
        row.vs_against.worst = {table.unpack(by, 1, math.min(5, #by))}
        row.vs_against.best = {}
        for i = #by, math.max(1, #by - 4), -1 do row.vs_against.best[#row.vs_against.best + 1] = by[i] end
        print(string.format("%-28s against %s: score %s; CRPS %s", "", args.against, text(row.vs_against.score),
                            text(row.vs_against.crps)))
      end
      if arm ~= args.reference then
        local worst = crps_ratios(a, ref, "crps_vs_reference")
        row.worst = {table.unpack(worst, 1, math.min(5, #worst))}
        row.guard_failures = 0
        for _, w in ipairs(worst) do
          if w.crps_vs_reference > args.guard then row.guard_failures = row.guard_failures + 1 end
        end
      end
      out[arm] = row
    end
    results.comparison[key] = out
  end
end

-- The guard on the test windows: data sets where an arm's CRPS exceeds the reference's by more
-- than `guard`, and its worst.
print(string.format("\nCRPS against %s per configuration (test windows, mean of seeds); guard %.2f", args.reference, args.guard))
for _, arm in ipairs(args.arms) do
  if arm ~= args.reference then
    local line = {}
    for _, bench in ipairs(args.benchmarks) do
      local c = results.comparison[bench .. "|test"]
      if c and c[arm] then
        local w = c[arm].worst[1]
        line[#line + 1] = string.format("%s: %d over, worst %s x%.2f", bench:match("[^/]+$"), c[arm].guard_failures,
                                        w and w.configuration or "-", w and w.crps_vs_reference or 0)
      end
    end
    print(string.format("%-28s %s", arm, table.concat(line, "; ")))
  end
end
orrery.write_json(args.out, results)
print("results: " .. args.out)
