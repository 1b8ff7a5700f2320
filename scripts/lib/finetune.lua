-- Fine-tuning a pretrained forecaster: one recipe (AdamW, a short warmup, the last half decayed,
-- short contiguous masks), shared by scripts/finetune.lua and scripts/static_benchmark.lua, and
-- the choice of how long to run it, made on validation windows the test never sees.
--
-- Why a choice: a fixed length over- or under-fits by the data's size. From the quickstart's
-- model, 300 steps at 3e-4 cost 20 quarterly series of 68 steps 24.8% CRPS and gained 10.3% on
-- 142 monthly ones (docs/covariates.md, "On real series: the static benchmark").
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
-- steps), and the length whose CRPS there is lowest wins, the shorter on a tie; 0 keeps the
-- pretrained model. `test` is orrery.eval's configuration of the test windows.
-- Returns {steps = the choice, tried = {{steps, mase, crps}, ...}, validation_windows, horizon,
-- excluded = the steps a series held back from the candidates' training}.
function M.choose_steps(o)
  local recipe, source = o.recipe, o.source
  local k = o.validation_windows or 1
  local ok, probe = pcall(orrery.eval, {data = source(), baselines = {"seasonal_naive"}, split = "validation",
                                        validation_windows = k, quiet = true})
  if not ok then
    error(tostring(probe) .. "\nno validation window to choose the fine-tuning's length on: give select=false " ..
          "to fine-tune for exactly steps=", 0)
  end
  local val = probe.configurations[1]
  local before = o.test.windows * o.test.horizon + val.windows * val.horizon
  local models = {["0 steps"] = o.pretrained}
  local lengths = M.lengths(recipe.steps)
  for i = 2, #lengths do
    local candidate = {}
    for key, v in pairs(recipe) do candidate[key] = v end
    candidate.steps, candidate.name = lengths[i], recipe.name .. "-select-" .. lengths[i]
    -- Quiet, and without the trainer's held-out loss and snapshots (its split of each series'
    -- last tenth): the validation windows judge them.
    candidate.quiet, candidate.val_batches, candidate.forecast_series = true, 0, 0
    if not o.quiet then
      print(string.format("choosing the length (%d of %d): fine-tuning %d steps on all but the last %d of each series",
                          i - 1, #lengths - 1, lengths[i], before))
    end
    local model = o.load()
    M.train(model, source{exclude_last = before}, candidate)
    models[lengths[i] .. " steps"] = model
  end
  local scores = orrery.eval{models = models, data = source(), baselines = {"seasonal_naive"}, split = "validation",
                             validation_windows = k, context = recipe.context, quiet = true}.summary
  local tried, best = {}, nil
  for _, n in ipairs(lengths) do
    for _, s in ipairs(scores) do
      if s.model == n .. " steps" then
        tried[#tried + 1] = {steps = n, mase = s.mase, crps = s.crps}
        if not best or s.crps < best.crps then best = tried[#tried] end
      end
    end
  end
  if not o.quiet then
    local parts = {}
    for _, row in ipairs(tried) do
      parts[#parts + 1] = string.format("%d step%s %.3f", row.steps, row.steps == 1 and "" or "s", row.crps)
    end
    print(string.format("fine-tuning length, by CRPS on %d validation window(s) of %d a series before the test: %s -> %d",
                        val.windows, val.horizon, table.concat(parts, ", "), best.steps))
  end
  return {steps = best.steps, tried = tried, validation_windows = val.windows, horizon = val.horizon,
          excluded = before}
end

-- A new folder at `path`, or at path-1, path-2, ... when that is taken (as a run claims its
-- folder: mkdir fails on one that exists, so nothing already there is written over).
function M.fresh_folder(path)
  local parent = path:match("^(.*)/[^/]+$") or "."
  if not os.execute("mkdir -p '" .. parent .. "'") then error("cannot create the folder " .. parent, 0) end
  for i = 0, 9999 do
    local p = i == 0 and path or (path .. "-" .. i)
    if os.execute("mkdir '" .. p .. "' 2>/dev/null") then return p end
  end
  error("cannot create a folder at " .. path .. " or beside it", 0)
end

return M
