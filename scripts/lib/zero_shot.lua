-- Zero-shot pretraining as data: the model, the mix and the training fields that
-- scripts/zero_shot.lua trains with, and that prior_ablation.lua varies one part of.
local zs = {}

-- The quickstart's Toto-style model (d_model 128, 4 layers: 1.15M parameters on 32-step
-- patches, 1.04M on 16-step ones), or a released size (preset = "toto2-4m"); patch_size 32
-- unless o.patch_size says otherwise.
function zs.model(o)
  local arch = {"toto2", d_model = 128, num_layers = 4, num_heads = 4}
  if o.preset then arch = {"toto2", preset = o.preset} end
  return orrery.model{arch = arch, head = "quantile", param = "sp", patch_size = o.patch_size,
                      scaler_window = o.scaler_window, seed = o.seed or 0, device = o.device or "cpu"}
end

-- Recipes: what the synthetic half of the mix draws and the patch size. `classical16` is the
-- default of zero_shot.lua: measured best in prior_ablation.lua (docs/results/prior_ablation, "The prior, one
-- change at a time"); `toto` is Toto 2.0's own, the synthetic source's default families on 32-step patches.
-- Half the synthetic series from the classical families (ETS, KernelSynth on trends, ARIMA),
-- the default families in the rest.
local classical = {ets = 0.2, kernel_trend = 0.2, arima = 0.1}
zs.recipes = {
  toto        = {},
  -- The classical families on 16-step patches (a 72-step monthly history is 5 tokens).
  classical16 = {families = classical, patch_size = 16},
  -- The same with every training sample observed over its whole context (the mixture's
  -- min_context off): the quickstart's recipe, measured best on the validation windows at its
  -- 2,400 steps (docs/results/prior_ablation, "The quickstart's recipe").
  classical16_full = {families = classical, patch_size = 16, min_context = 0},
}
zs.recipe_names = "classical16, classical16_full, toto"

-- The recipe named, or an error that lists them.
function zs.recipe(name)
  local r = zs.recipes[name]
  if not r then error("unknown recipe '" .. tostring(name) .. "' (recipes: " .. zs.recipe_names .. ")", 0) end
  return r
end

-- The synthetic source's families: `added` ({name = share}) at their shares of the synthetic
-- series, the source's default families keeping their proportions in the rest.
function zs.families(added)
  local defaults = orrery.data{"synthetic"}:describe().families
  local total, out = 0, {}
  for name, share in pairs(added or {}) do out[name], total = share, total + share end
  for name, share in pairs(defaults) do out[name] = (out[name] or 0) + share * (1 - total) end
  return out
end

-- Toto 2.0's pretraining mix: 57.5% synthetic, 42.5% observability-like series, with contexts
-- of every length from 64 steps up so the model learns to forecast from short histories too.
-- `synthetic` adds options to the synthetic source (e.g. families = {...}), `mixture` to the
-- mixture (e.g. augment = {...}); `observability` is that source's share in percent (42.5; 0
-- leaves that source out).
function zs.mixture(synthetic, mixture, observability)
  observability = observability or 42.5
  local source = {"synthetic", weight = 100 - observability}
  for k, v in pairs(synthetic or {}) do source[k] = v end
  local sources = {source}
  if observability > 0 then sources[2] = {"observability", weight = observability} end
  local mix = {"mixture", min_context = 64, sources = sources}
  for k, v in pairs(mixture or {}) do mix[k] = v end
  return mix
end

-- A recipe's pretraining mix: its families in the synthetic source, its min_context if it sets one.
function zs.recipe_mixture(recipe)
  return zs.mixture({families = zs.families(recipe.families)}, {min_context = recipe.min_context})
end

-- orrery.train's fields: o = {model, data, steps, seconds, batch, context, name, seed, runs_dir, quiet,
-- log_every, checkpoint_every, checkpoint_at, early_steps, early_weight, cpm_max_span}.
function zs.train_fields(o)
  return {
    model          = o.model,
    data           = o.data or zs.mixture(),
    optimizer      = {"adamw", lr = 2e-3, weight_decay = 0.01},
    steps          = o.steps or 6000,
    max_seconds    = o.seconds,
    batch_size     = o.batch or 32,
    context_length = o.context or 512,
    schedule       = {warmup = 100, decay = 0.3},
    cpm_max_span   = o.cpm_max_span or 4,
    name           = o.name,
    seed           = o.seed,
    runs_dir       = o.runs_dir,
    quiet          = o.quiet,
    log_every      = o.log_every or 100,
    checkpoint_every = o.checkpoint_every,
    checkpoint_at  = o.checkpoint_at,
    early_steps    = o.early_steps,
    early_weight   = o.early_weight,
  }
end

-- An orrery.eval row's configuration, "dataset/frequency/term".
function zs.configuration(row) return row.dataset .. "/" .. row.frequency .. "/" .. row.term end

-- {configuration = (MASE + CRPS) / 2 ratio} of an orrery.eval result's rows; a configuration
-- without a finite score is left out.
function zs.scores_of(ev)
  local function finite(x) return type(x) == "number" and x == x and math.abs(x) ~= math.huge end
  local out = {}
  for _, row in ipairs(ev.rows) do
    local m, c = row.mase_ratio, row.crps_ratio
    if finite(m) and finite(c) then out[zs.configuration(row)] = (m + c) / 2 end
  end
  return out
end

return zs
