-- A forecaster's recipe as data: every decision Toto 2.0's search rounds make (architecture
-- switches, patch masking, the training mix, the optimizer groups, the WSD schedule), and how a
-- recipe becomes orrery.model, orrery.data and orrery.train fields. proxy_search.lua tunes a
-- recipe on a small proxy; scaling.lua trains larger shapes with it, u-muP carrying the rates.
local proxy = {}

-- The untuned recipe: where a search starts and what a tuned one is compared with.
proxy.default = {
  attention = "per_dim_scale",  -- per_dim_scale | qk_norm | none
  bias = "attention",           -- which projections carry biases: attention | mlp | both | none
  cpm_max_span = 8, cpm_max_rate = 0.4,
  mix = {gp = 0.45, classic = 0.3, observability = 0.25},
  lr = 2^-2, momentum = 0.95, beta2 = 0.95,                  -- NorMuon, the stack's matrices
  adamw_lr = 1, adamw_beta1 = 0.9, adamw_beta2 = 0.95,      -- AdamW, every other parameter
  weight_decay = 1e-4, warmup = 0.05, clip = 1,
  decay = 0.2, decay_shape = "linear",
}

-- The training sources a mix weighs: smooth Gaussian-process-like series, classic seasonal
-- series with shocks, and the observability generator's host metrics.
proxy.sources = {
  gp = {"synthetic", families = {kernel_synth = 3, waves = 2.5, ou = 3.2}},
  classic = {"synthetic", families = {classic = 1, steps = 1, spikes = 2.5, intermittent = 1}},
  observability = {"observability"},
}
proxy.source_order = {"gp", "classic", "observability"}

function proxy.merged(base, over)
  local out = {}
  for k, v in pairs(base) do out[k] = v end
  for k, v in pairs(over or {}) do out[k] = v end
  return out
end

-- The recipe a proxy search wrote (runs/<name>/proxy_search.json), over the defaults.
function proxy.load(path)
  local saved = orrery.read_json(path)
  assert(type(saved) == "table" and type(saved.config) == "table", path .. " holds no tuned config")
  return proxy.merged(proxy.default, saved.config)
end

-- shape = {width =, depth =, heads =}; u-muP with the proxy's depth as its base, so that the
-- rates tuned there carry to other widths and depths.
function proxy.model(c, shape, seed, device, base_depth)
  return orrery.model{
    arch = {"toto2", d_model = shape.width, num_layers = shape.depth, num_heads = shape.heads,
            per_dim_scale = c.attention == "per_dim_scale", qk_norm = c.attention == "qk_norm",
            attn_bias = c.bias == "attention" or c.bias == "both", mlp_bias = c.bias == "mlp" or c.bias == "both"},
    head = "quantile", param = {"umup", base_depth = base_depth or shape.depth}, seed = seed, device = device,
  }
end

function proxy.data(c, context)
  local list = {}
  for _, source in ipairs(proxy.source_order) do
    if c.mix[source] > 1e-6 then list[#list + 1] = proxy.merged(proxy.sources[source], {weight = c.mix[source]}) end
  end
  return {"mixture", sources = list, min_context = context}
end

function proxy.optimizer(c)
  return {{"normuon", lr = c.lr, momentum = c.momentum, beta2 = c.beta2, weight_decay = c.weight_decay,
           params = {role = "hidden", stack = true}},
          {"adamw", lr = c.adamw_lr, beta1 = c.adamw_beta1, beta2 = c.adamw_beta2, weight_decay = c.weight_decay}}
end

-- orrery.train's fields for recipe c; run = {steps, batch, context, seed, runs_dir, name}. The
-- warmup is in steps (a fraction of run.steps), so that decays branched off a stable run of
-- other length keep its warmup.
function proxy.train_options(c, run)
  return {
    data = proxy.data(c, run.context), optimizer = proxy.optimizer(c), steps = run.steps,
    batch_size = run.batch, context_length = run.context,
    cpm_max_span = c.cpm_max_span, cpm_max_rate = c.cpm_max_rate, clip = c.clip,
    schedule = {kind = "wsd", warmup = math.floor(c.warmup * (run.warmup_of or run.steps) + 0.5), decay = c.decay,
                decay_shape = c.decay_shape},
    val_batches = 0, forecast_series = 0, checkpoint_minutes = 0, seed = run.seed, quiet = true,
    runs_dir = run.runs_dir, name = run.name,
  }
end

-- The search objective: a trained model's score on a benchmark's validation windows (the window
-- before each series' test windows; split = "test" scores those), the geometric mean over its
-- data sets of (MASE + CRPS) / 2 relative to seasonal naive. Below 1 beats seasonal naive.
function proxy.score(model, benchmark, context, split)
  local ev = orrery.eval{model = model, name = "proxy", data = benchmark, baselines = {}, split = split or "validation",
                         context = context, quiet = true}
  return ev.summary[1].score
end

return proxy
