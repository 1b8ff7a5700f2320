-- Fine-tuning a pretrained forecaster: one recipe (AdamW, a short warmup, the last half decayed,
-- short contiguous masks), shared by scripts/finetune.lua and scripts/static_benchmark.lua, and
-- the choice of how long to run it, made on validation windows the test never sees.
--
-- Why a choice: a fixed length over- or under-fits by the data's size. From the quickstart's
-- model, 300 steps at 3e-4 cost 20 quarterly series of 68 steps 24.8% CRPS and gained 10.3% on
-- 142 monthly ones (docs/covariates.md, "On real series: the static benchmark").
local stats = require("lib.stats")
local M = {}

-- recipe: {steps, lr, batch, context, seed, runs_dir, name, quiet, log_every, val_batches,
-- forecast_series}.
-- Trains `model` in place on `data` (a source choice) and returns orrery.train's summary.
function M.train(model, data, recipe)
  return orrery.train{
    model          = model,
    data           = data,
    optimizer      = {"adamw", lr = recipe.lr, weight_decay = 0.01},
    steps          = recipe.steps,
    batch_size     = recipe.batch,
    context_length = recipe.context,
    schedule       = {warmup = math.min(20, recipe.steps // 5), decay = 0.5},
    cpm_max_span   = 4,
    seed           = recipe.seed,
    quiet          = recipe.quiet,
    runs_dir       = recipe.runs_dir,
    name           = recipe.name,
    log_every      = recipe.log_every,
    val_batches    = recipe.val_batches,
    forecast_series = recipe.forecast_series,
  }
end

-- The lengths tried for a longest `steps`: none (the pretrained model), a ninth, a third and all
-- of it, a decade in steps of three.
function M.lengths(steps)
  local out, seen = {0}, {[0] = true}
  for _, n in ipairs{steps // 9, steps // 3, steps} do
    if n >= 1 and not seen[n] then out[#out + 1], seen[n] = n, true end
  end
  return out
end

-- How many steps of the recipe to fine-tune for, chosen on the validation windows just before
-- the test windows (orrery.eval's split = "validation", `validation_windows` of them a series):
-- each length in M.lengths(recipe.steps) fine-tunes a fresh model from `load()` on everything
-- before those windows (source{exclude_last = n}: the data's choice, holding back its last n
-- steps). A length qualifies if it beats none (the model from `load()` untrained: the pretrained
-- one, with any new embeddings at zero) window by window, a 90% bootstrap interval of the paired
-- change below 0 (5 windows or more); of those, the one with the lowest CRPS ratio over the data
-- set (GIFT-Eval's, the windows' errors summed) wins, the shorter on a tie; when none qualifies,
-- 0 keeps the pretrained model: a model is changed only on evidence. `test` is orrery.eval's
-- configuration of the test windows; `untrained`, if given, is a model as `load()` gives it (saves a
-- load and a copy in memory). Returns {steps = the choice, tried = {{steps, mase, crps,
-- change, low, high, verdict}, ...}, validation_windows, horizon, excluded = the steps a series
-- held back from the candidates' training}.
function M.choose_steps(o)
  local recipe, source = o.recipe, o.source
  local k = o.validation_windows or 1
  local function evaluate(models, windows)
    return orrery.eval{models = models, data = source(), baselines = {"seasonal_naive"}, split = "validation",
                       validation_windows = k, context = recipe.context, windows = windows, quiet = true}
  end
  local ok, probe = pcall(evaluate, {}, false)
  if not ok then
    local hint = tostring(probe):find("too few for a validation window", 1, true) and
                 "\nno validation window to choose the fine-tuning's length on: give select=false to fine-tune " ..
                 "for exactly steps=" or ""
    error(tostring(probe) .. hint, 0)
  end
  local val = probe.configurations[1]
  local before = o.test.windows * o.test.horizon + val.windows * val.horizon

  -- A model's scores on the validation windows: its CRPS ratio, and each window's CRPS by key.
  local keys = {}  -- in the order the evaluation gives them, so that a rerun resamples the same
  local function score(n, model)
    local name = n .. " steps"
    local r, out = evaluate({[name] = model}, true), {steps = n, windows = {}}
    for _, s in ipairs(r.summary) do
      if s.model == name then out.mase, out.crps = s.mase, s.crps end
    end
    for _, w in ipairs(r.windows) do
      if w.model == name then
        local key = w.dataset .. "/" .. w.term .. "/" .. w.window
        if n == 0 then keys[#keys + 1] = key end
        out.windows[key] = w.crps
      end
    end
    return out
  end

  local lengths, tried = M.lengths(recipe.steps), {}
  local none = score(0, o.untrained or o.load())
  tried[1] = none
  for i = 2, #lengths do
    local candidate = {}
    for key, v in pairs(recipe) do candidate[key] = v end
    candidate.steps, candidate.name = lengths[i], recipe.name .. "-select-" .. lengths[i]
    -- Quiet, and without the trainer's held-out loss and snapshots (its own validation split of
    -- each series): the validation windows judge them.
    candidate.quiet, candidate.val_batches, candidate.forecast_series = true, 0, 0
    local doing = string.format("fine-tuning %d steps on all but the last %d steps of each series", lengths[i], before)
    if not o.quiet then print(string.format("choosing the length (%d of %d): %s", i - 1, #lengths - 1, doing)) end
    local model = o.load()
    local trained, err = pcall(M.train, model, source{exclude_last = before}, candidate)
    if not trained then
      error(tostring(err) .. "\n(while choosing the fine-tuning's length: " .. doing .. "; select=false fine-tunes " ..
            "for steps= on everything before the test)", 0)
    end
    local row = score(lengths[i], model)
    model = nil  -- one candidate in memory at a time: a released checkpoint is large
    collectgarbage()
    local d = {}
    for _, key in ipairs(keys) do
      local a, b = row.windows[key], none.windows[key]
      if a and b and a > 0 and b > 0 then d[#d + 1] = math.log(a / b) end
    end
    if #d >= 5 then
      local change = stats.relative_change(d)
      row.change, row.low, row.high, row.verdict = change.change, change.low, change.high, change.verdict
    else
      row.verdict = "too few windows"
    end
    tried[i] = row
  end
  local best = none
  for _, row in ipairs(tried) do
    row.windows = nil
    if row.verdict == "better" and row.crps < best.crps then best = row end
  end
  if not o.quiet then
    local parts = {}
    for _, row in ipairs(tried) do
      parts[#parts + 1] = string.format("%d step%s %.3f%s", row.steps, row.steps == 1 and "" or "s", row.crps,
                                        row.change and string.format(" (%+.1f%% [%+.1f%%, %+.1f%%])", 100 * row.change,
                                                                     100 * row.low, 100 * row.high)
                                                   or (row.steps > 0 and " (too few windows)" or ""))
    end
    print(string.format("fine-tuning length, by CRPS on %d validation window(s) of %d a series before the test " ..
                        "(against none, window by window): %s -> %d", val.windows, val.horizon,
                        table.concat(parts, ", "), best.steps))
  end
  return {steps = best.steps, tried = tried, validation_windows = val.windows, horizon = val.horizon,
          excluded = before}
end

-- A new folder at `path`, or at path-1, path-2, ... when that is taken (as a run claims its
-- folder: mkdir fails on one that exists, so nothing already there is written over).
function M.fresh_folder(path)
  if path:find("'", 1, true) then error("a folder name may not hold a quote: " .. path, 0) end
  local parent = path:match("^(.*)/[^/]+$") or "."
  if not os.execute("mkdir -p '" .. parent .. "'") then error("cannot create the folder " .. parent, 0) end
  for i = 0, 9999 do
    local p = i == 0 and path or (path .. "-" .. i)
    if os.execute("mkdir '" .. p .. "' 2>/dev/null") then return p end
  end
  error("cannot create a folder at " .. path .. " or beside it", 0)
end

return M
