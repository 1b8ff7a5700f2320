-- Learning-rate transfer across widths and depths (Tensor Programs V, Figure 1; u-muP; CompleteP).
-- For each parametrisation (and, under u-muP, each of its Muon-family learning-rate rules and
-- depth exponents) and each width, depth or shape, train the same small Toto-style model at a
-- grid of learning rates over several seeds: octave steps downhill until the minimum is bracketed, then
-- half-octaves around it. The optimum of a curve is the vertex of a parabola in log2(lr) through
-- the points within an octave of its best; each seed is fitted on its own as well, and a
-- bootstrap over seeds gives an interval for the optimum's move. Under a rule that transfers the
-- optimum stays put (the goal: at most half an octave from the first width to the last).
--
-- jobs=N trains up to N runs side by side, each in its own orrery process with one thread (the
-- seeds of a rate, and the rates a search step needs together): on a machine with N cores, or
-- several runs sharing one GPU. The runs are those jobs=1 trains with OMP_NUM_THREADS=1 (more
-- threads sum in another order, so their last digits differ). graph=true (device=cuda) records
-- each step's forward and backward as a CUDA graph, which removes a small model's launch cost.
--
-- span=S makes each search's first step every half-octave within S octaves of its start (span=1:
-- 5 rates, 15 runs with 3 seeds) instead of the start and its two octave neighbours. With as many
-- jobs as runs, a search whose best octave lies within S - 1 octaves of the start (for span=1, the
-- start itself) needs one round of training, not two: the later steps find those rates trained.
-- The grid a search ends with gains at most the half-octaves its own steps would not have
-- visited. span is kept in the JSON beside config (a resumed sweep may use another).
--
-- resume= names the folder of an earlier sweep with the same arguments (stopped by Ctrl-C, a
-- time limit or a lost machine): its finished runs are read back, not trained again, an
-- interrupted run goes on from its last checkpoint, and the rest train as before.
--
-- Sweep widths (one depth), depths (one width), e.g. depths=2,4,8 widths=128, or a joint path
-- of (width x depth) shapes, the way model sizes grow. alphas picks u-muP's residual exponent
-- (depth_alpha: 0.5 depth-muP, 1 CompleteP; the plugin's default, 1, when not given); u-muP's
-- base_depth is the first depth swept (the proxy's), or base_depth= (to sweep a deeper depth of
-- an earlier sweep on its own, as that sweep built it). The
-- objective is the held-out validation loss at the end (val_batches fixed batches of series the
-- run never trains on; the same batches at every rate and depth for a seed) or the training
-- loss of the last quarter (train). With a
-- Muon-family optimizer the swept rate is that optimizer's (the matrices inside the stack) while
-- AdamW keeps every other parameter at a fixed rate (adamw_lr, default each parametrisation's
-- AdamW optimum). rules picks u-muP's Muon-family rule (toto2: depth only, as Toto 2.0 trains;
-- spectral: also divided by the forward multiplier); it does not apply to AdamW.
-- arch=gpt sweeps nanochat's GPT on a text corpus instead of the forecaster on the synthetic prior
-- (lib/task.lua): the same widths, depths, rules and objective, the loss in nats per token.
-- head_dim=D gives every width heads of D channels (width / D of them) instead of 4 heads.
-- Results: runs/lr_transfer*/lr_transfer.json (rewritten after every curve) and a table; each
-- training run has its folder, which the dashboard's LR-transfer view reads.

local parallel = require("lib.parallel_runs")
local tasks = require("lib.task")
local args = orrery.args{
  "Learning-rate transfer: train the same small model at a grid of learning rates and several seeds\n" ..
  "at each width, depth or shape, and measure how far the optimum moves.",
  {"optimizer", "string", "adamw", "the swept optimizer (Muon-family: the stack's matrices)", choices = {"adamw", "normuon", "muon", "dion2"}},
  {"params", "strings", nil, "parametrisations (default sp,umup with adamw, umup otherwise)"},
  {"rules", "strings", {"toto2", "spectral"}, "u-muP's Muon-family rules (toto2, spectral)"},
  {"alphas", "numbers", nil, "u-muP's residual exponents (depth_alpha; the plugin's default when not given)", min = 0},
  {"widths", "ints", {64, 128, 256}, "widths (d_model) swept", min = 1},
  {"depths", "ints", {2}, "depths swept (several at one width)", min = 1},
  {"shape", "strings", nil, "a joint path of widthxdepth shapes instead, e.g. 128x2,256x4,512x8"},
  {"base_depth", "int", nil, "u-muP's base depth (default: the first depth swept)", min = 1},
  {"seeds", "int", 3, "seeds at each rate", min = 1},
  {"steps", "int", 100, "training steps of each run", min = 1},
  {"objective", "string", "val", "what a run scores: the held-out loss at the end, or the training loss of the last quarter",
   choices = {"val", "train"}},
  {"val_batches", "int", 8, "held-out batches of objective=val", min = 1},
  {"adamw_lr", "number", nil, "AdamW's rate beside a Muon-family optimizer (default: each parametrisation's AdamW optimum)", min = 0},
  {"start", "numbers", nil, "log2 of the rate each variant's search starts at, in order"},
  {"span", "number", 0, "the first step tries every half-octave within this many octaves of the start", min = 0, max = 8},
  {"jobs", "int", 1, "runs trained side by side, each in its own process", min = 1},
  {"graph", "bool", false, "record each step as a CUDA graph (device=cuda)"},
  {"device", "string", "cpu", "where to train: cpu or cuda"},
  {"runs_dir", "string", "runs", "where the experiment's folder goes"},
  {"resume", "string", nil, "the folder of an earlier sweep with the same arguments, to finish"},
  tasks.arguments,
}

local optimizer = args.optimizer
local muon_family = {normuon = true, muon = true, dion2 = true}
local params = args.params or (optimizer == "adamw" and {"sp", "umup"} or {"umup"})
local rules  = args.rules
local alphas = args.alphas or {0.5}
local widths = args.widths
local depths = args.depths
local seeds  = args.seeds
local steps  = args.steps
local device = args.device
local objective = args.objective
local val_batches = args.val_batches
local jobs = args.jobs
local graph = args.graph
local span = args.span
if span * 2 ~= math.floor(span * 2) then error("span must be a number of octaves in half-octave steps (0, 0.5, 1, ...), got " .. span, 0) end
if graph and device ~= "cuda" then error("graph=true records CUDA graphs: it needs device=cuda", 0) end
if #widths > 1 and #depths > 1 then error("sweep widths or depths, not both at once (or give shape=)", 0) end

-- The points of the axis: {width, depth} each.
local axis, points_along = "width", {}
if args.shape then
  axis = "shape"
  for _, item in ipairs(args.shape) do
    local w, d = item:match("^%s*(%d+)x(%d+)%s*$")
    if not w then error("shape takes width x depth pairs such as 128x2,256x4, got '" .. item .. "'", 0) end
    points_along[#points_along + 1] = {tonumber(w), tonumber(d)}
  end
elseif #depths > 1 then
  axis = "depth"
  for _, d in ipairs(depths) do points_along[#points_along + 1] = {widths[1], d} end
else
  for _, w in ipairs(widths) do points_along[#points_along + 1] = {w, depths[1]} end
end
local base_depth = args.base_depth or points_along[1][2]
local function point_name(at)
  if axis == "shape" then return string.format("%dx%d", at[1], at[2]) end
  return tostring(axis == "depth" and at[2] or at[1])
end

-- The sweep's variants: one per parametrisation, and under u-muP one per Muon-family rule and
-- per depth exponent (named when alphas is given).
local variants = {}
for _, p in ipairs(params) do
  for _, alpha in ipairs(p == "umup" and alphas or {0.5}) do
    local function umup(rule)
      local spec = {"umup", muon_rule = rule, base_depth = base_depth}
      if args.alphas then spec.depth_alpha = alpha end
      return spec
    end
    local suffix = (p == "umup" and args.alphas) and string.format("/a%g", alpha) or ""
    if p == "umup" and muon_family[optimizer] then
      for _, rule in ipairs(rules) do
        variants[#variants + 1] = {label = "umup/" .. rule .. suffix, param = umup(rule), name = p, rule = rule,
                                   alpha = alpha}
      end
    elseif p == "umup" then
      variants[#variants + 1] = {label = "umup" .. suffix, param = umup(nil), name = p, alpha = alpha}
    else
      variants[#variants + 1] = {label = p, param = p, name = p}
    end
  end
end

-- Where each search starts (log2 lr) and its bounds; the search walks downhill from there. The
-- spectral rule multiplies Muon-family rates by sqrt(fan_in) (8 at width 64): its optimum sits
-- about three octaves below toto2's. `start` (one log2 lr per variant, in order) overrides where
-- the first width's search begins.
local function default_start(v)
  if optimizer == "adamw" then return v.name == "umup" and 0 or -9, v.name == "umup" and {-6, 5} or {-16, -3} end
  if v.name ~= "umup" then return -6, {-12, 2} end
  if v.rule == "spectral" then return -5, {-14, 2} end
  return -2, {-10, 4}
end
local starts = args.start or {}
local function start_of(v, index)
  local centre, bounds = default_start(v)
  return starts[index] or centre, bounds
end
local adamw_lr = {sp = 2^-9, mup = 2^-9, umup = 2^0}   -- the AdamW groups' rate beside Muon
if args.adamw_lr then for k in pairs(adamw_lr) do adamw_lr[k] = args.adamw_lr end end

local dir = args.resume or orrery.experiment_dir("lr_transfer", args.runs_dir)
local saved_config
if args.resume then
  local ok, saved = pcall(orrery.read_json, dir .. "/lr_transfer.json")
  if not ok then
    error("resume=" .. dir .. ": no lr_transfer.json there; give the folder of an earlier sweep (runs/lr_transfer-N)", 0)
  end
  saved_config = saved.config
end
local task = tasks.from_args(args, dir)
tasks.check(task, points_along)
local t0 = os.time()
local runs_done = 0

-- The objective of every seed at each rate of `xs` (log2 lr -> the seeds' losses): the held-out
-- loss at the end, or the mean training loss over the last quarter of the run; math.huge when
-- training diverged. With jobs > 1 the runs train side by side, each in its own process.
local function losses_at(v, width, depth, xs)
  local runs = {}
  for _, log2_lr in ipairs(xs) do
    local lr = 2^log2_lr
    for seed = 0, seeds - 1 do
      local opt = {"adamw", lr = lr, weight_decay = 0}
      if muon_family[optimizer] then
        opt = {{optimizer, lr = lr, params = {role = "hidden", stack = true}},
               {"adamw", lr = adamw_lr[v.name] or 2^-9, weight_decay = 0}}
      end
      runs[#runs + 1] = {
        model = tasks.model(task, width, depth, {param = v.param, seed = seed, device = device}),
        train = {data = task.data(seed), optimizer = opt,
                 steps = steps, batch_size = 16, context_length = task.context_length,
                 schedule = {kind = "wsd", warmup = 0.1, decay = 0.3}, clip = 0,
                 val_batches = objective == "val" and val_batches or 0, val_every = math.max(1, steps // 4),
                 forecast_series = 0, graph = graph,
                 seed = seed, quiet = true, log_every = math.max(1, steps // 4), runs_dir = dir,
                 name = string.format("%s-w%d-L%d-lr%+.1f-s%d", v.label:gsub("/", "-"), width, depth, log2_lr, seed),
                 resume = args.resume ~= nil},
      }
    end
  end
  local outcomes = parallel.train(runs, jobs, dir)
  local losses = {}
  for i, x in ipairs(xs) do
    losses[x] = {}
    local sum = 0
    for s = 1, seeds do
      local out = outcomes[(i - 1) * seeds + s]
      -- A failed run counts as diverged, but a run that cannot be resumed is the sweep's error.
      if not out.ok and out.error:find("cannot resume run", 1, true) then error(out.error, 0) end
      local l = out.ok and out[objective == "val" and "val_loss" or "final_loss"] or math.huge  -- nil: not finite
      losses[x][s] = l
      sum = sum + l
    end
    runs_done = runs_done + seeds
    io.write(string.format("\r%-18s width %4d depth %2d  log2 lr %+5.1f  loss %8.4f   (%d runs, %ds)   ",
                           v.label, width, depth, x, sum / seeds, runs_done, os.time() - t0))
    io.flush()
  end
  return losses
end

-- Least-squares parabola through (x, y); returns the vertex x, or nil when not convex.
local function parabola_vertex(xs, ys)
  local n, sx, sx2, sx3, sx4, sy, sxy, sx2y = #xs, 0, 0, 0, 0, 0, 0, 0
  if n < 3 then return nil end
  for i = 1, n do
    local x, y = xs[i], ys[i]
    sx, sx2, sx3, sx4 = sx + x, sx2 + x * x, sx3 + x^3, sx4 + x^4
    sy, sxy, sx2y = sy + y, sxy + x * y, sx2y + x * x * y
  end
  -- Normal equations for y = a x^2 + b x + c, by Cramer's rule.
  local function det(m) return m[1][1] * (m[2][2] * m[3][3] - m[2][3] * m[3][2])
                             - m[1][2] * (m[2][1] * m[3][3] - m[2][3] * m[3][1])
                             + m[1][3] * (m[2][1] * m[3][2] - m[2][2] * m[3][1]) end
  local D = det({{sx4, sx3, sx2}, {sx3, sx2, sx}, {sx2, sx, n}})
  if math.abs(D) < 1e-12 then return nil end
  local a = det({{sx2y, sx3, sx2}, {sxy, sx2, sx}, {sy, sx, n}}) / D
  local b = det({{sx4, sx2y, sx2}, {sx3, sxy, sx}, {sx2, sy, n}}) / D
  if a <= 0 then return nil end
  return -b / (2 * a)
end

-- The optimum of one loss curve {log2 lr -> loss}: its best point refined by the parabola through
-- the finite points within an octave (kept only when its vertex stays within that octave).
local function optimum(curve)
  local best
  for x, y in pairs(curve) do if y < math.huge and (not best or y < curve[best]) then best = x end end
  if not best then return nil end
  local xs, ys = {}, {}
  for x, y in pairs(curve) do
    if math.abs(x - best) <= 1 and y < math.huge then xs[#xs + 1], ys[#ys + 1] = x, y end
  end
  local fit = parabola_vertex(xs, ys)
  if not fit or fit < best - 1 or fit > best + 1 then fit = best end
  return fit, best
end

-- The mean curve over a multiset of seed indices (a bootstrap resample, or all of them).
local function mean_curve(per_seed, picks)
  local curve = {}
  for x, losses in pairs(per_seed) do
    local sum = 0
    for _, s in ipairs(picks) do sum = sum + losses[s] end
    curve[x] = sum / #picks
  end
  return curve
end

local results = {config = {arch = task.arch ~= "toto2" and task.arch or nil, files = task.files, vocab = task.vocab,
                           head_dim = task.head_dim,
                           optimizer = optimizer, params = params, rules = muon_family[optimizer] and rules or nil,
                           alphas = args.alphas and alphas or nil, base_depth = base_depth,
                           widths = widths, depths = depths, shapes = axis == "shape" and points_along or nil,
                           axis = axis, seeds = seeds, steps = steps,
                           batch_size = 16, context_length = 256, device = device,
                           adamw_lr = muon_family[optimizer] and adamw_lr or nil, objective = objective,
                           graph = graph or nil,
                           metric = objective == "val"
                             and string.format("held-out loss at the end (%d batches of 16 %s)", val_batches,
                                               task.arch == "gpt" and "rows of tokens" or "series")
                             or "mean training loss over the last quarter of the run"},
                 span = span > 0 and span or nil, curves = {}, shift = {}}

-- A resumed sweep must be the one it continues: every setting but the points it has yet to reach.
if saved_config and not require("lib.tables").same(saved_config, results.config) then
  error("resume=" .. dir .. " holds a sweep with other settings (arch, optimizer, parametrisations, rules, alphas, " ..
        "widths, depths, shapes, seeds, steps, objective or rates); run it with that sweep's arguments", 0)
end
-- Written before the first run, so that a sweep stopped inside its first curve can be resumed.
if not saved_config then orrery.write_json(dir .. "/lr_transfer.json", results) end

local function run_variant(v, index)
  local curves, order = {}, {}
  results.curves[v.label] = curves
  local centre, bounds = start_of(v, index)
  local lo, hi = bounds[1], bounds[2]
  for _, at in ipairs(points_along) do
    local width, depth = at[1], at[2]
    local mean, per_seed = {}, {}   -- log2 lr -> mean loss, and -> the seeds' losses
    -- Trains the rates of `xs` not yet known, all at once (side by side with jobs > 1).
    local function ensure(xs)
      local todo = {}
      for _, x in ipairs(xs) do
        if x >= lo and x <= hi and not mean[x] then todo[#todo + 1] = x; mean[x] = math.huge end
      end
      if #todo == 0 then return end
      for x, losses in pairs(losses_at(v, width, depth, todo)) do
        per_seed[x] = losses
        local sum = 0
        for _, l in ipairs(losses) do sum = sum + l end
        mean[x] = sum / seeds
      end
    end
    local function eval(x)
      if x < lo or x > hi then return math.huge end
      ensure({x})
      return mean[x]
    end
    -- Octave steps downhill until the best point has worse neighbours on both sides.
    local best = centre
    local first = {best, best - 1, best + 1}
    for k = -2 * span, 2 * span do first[#first + 1] = best + k / 2 end
    ensure(first)
    while true do
      local l, r = eval(best - 1), eval(best + 1)
      if l < mean[best] and l <= r then best = best - 1
      elseif r < mean[best] then best = best + 1
      else break end
    end
    ensure({best - 0.5, best + 0.5})          -- half-octave refinement
    local fitted, best_x = optimum(mean)
    -- Each seed's own optimum over the same grid.
    local seed_optima = {}
    for s = 1, seeds do
      local curve = {}
      for x, losses in pairs(per_seed) do curve[x] = losses[s] end
      seed_optima[s] = optimum(curve) or fitted
    end
    local points = {}
    for x, y in pairs(mean) do
      points[#points + 1] = {log2_lr = x, lr = 2^x, loss = y < math.huge and y or nil, losses = per_seed[x]}
    end
    table.sort(points, function(a, b) return a.log2_lr < b.log2_lr end)
    local key = axis .. " " .. point_name(at)
    curves[key] = {width = width, depth = depth, points = points, best_log2_lr = best_x,
                   fitted_log2_lr = fitted, best_loss = mean[best_x], seed_optima = seed_optima}
    order[#order + 1] = {key = key, per_seed = per_seed}
    centre = math.floor(best_x)  -- the next width starts from here
    orrery.write_json(dir .. "/lr_transfer.json", results)
  end

  -- The optimum's move from the first point of the axis to the last: from the mean curves, per
  -- seed (seeds are paired: seed s has the same data and init at every width), and as a 90%
  -- bootstrap interval over seeds resampled jointly across the axis.
  local first, last = curves[order[1].key], curves[order[#order].key]
  -- Doublings of the swept quantity (of the width along a joint path, where depth doubles with it).
  local size = axis == "depth" and 2 or 1
  local doublings = math.log(points_along[#points_along][size] / points_along[1][size], 2)
  local per_seed = {}
  for s = 1, seeds do per_seed[s] = last.seed_optima[s] - first.seed_optima[s] end
  local boot = orrery.bootstrap{n = seeds, statistic = function(picks)
    local a = optimum(mean_curve(order[1].per_seed, picks))
    local b = optimum(mean_curve(order[#order].per_seed, picks))
    if a and b then return b - a end
  end}
  local shift = last.fitted_log2_lr - first.fitted_log2_lr
  results.shift[v.label] = {
    axis = axis, from = point_name(points_along[1]), to = point_name(points_along[#points_along]), octaves = shift,
    per_doubling = doublings > 0 and shift / doublings or 0, seeds = per_seed,
    bootstrap_90 = boot.lo and {boot.lo, boot.hi} or nil,
    within_half_octave = math.abs(shift) <= 0.5,
  }
  orrery.write_json(dir .. "/lr_transfer.json", results)
end

for i, v in ipairs(variants) do run_variant(v, i) end
print()

-- The loss table, one row per variant and point of the axis, and each optimum's move.
local all = {}
for _, v in ipairs(variants) do
  for _, c in pairs(results.curves[v.label]) do for _, p in ipairs(c.points) do all[p.log2_lr] = true end end
end
local columns = {}
for x in pairs(all) do columns[#columns + 1] = x end
table.sort(columns)
local header = string.format("\n%-18s %7s", "variant", axis)
for _, x in ipairs(columns) do header = header .. string.format(" %7s", string.format("%+.1f", x)) end
print(header .. "   best  fitted  per seed")
for _, v in ipairs(variants) do
  for _, at in ipairs(points_along) do
    local c = results.curves[v.label][axis .. " " .. point_name(at)]
    local byx = {}
    for _, p in ipairs(c.points) do byx[p.log2_lr] = p.loss or math.huge end
    local line = string.format("%-18s %7s", v.label, point_name(at))
    for _, x in ipairs(columns) do
      local y = byx[x]
      line = line .. (y == nil and "       ." or y == math.huge and "    div" or string.format(" %7.4f", y))
    end
    local seeds_text = {}
    for _, s in ipairs(c.seed_optima) do seeds_text[#seeds_text + 1] = string.format("%+.2f", s) end
    print(line .. string.format("  %+5.1f  %+6.2f  %s", c.best_log2_lr, c.fitted_log2_lr, table.concat(seeds_text, " ")))
  end
end
print()
for _, v in ipairs(variants) do
  local s = results.shift[v.label]
  local seeds_text = {}
  for _, d in ipairs(s.seeds) do seeds_text[#seeds_text + 1] = string.format("%+.2f", d) end
  print(string.format("%-18s optimum moves %+.2f octaves from %s %s to %s (%+.2f per doubling; seeds %s; 90%% bootstrap %s)",
                      v.label, s.octaves, axis, s.from, s.to, s.per_doubling, table.concat(seeds_text, " "),
                      s.bootstrap_90 and string.format("[%+.2f, %+.2f]", s.bootstrap_90[1], s.bootstrap_90[2]) or "n/a"))
end
local fixed = axis == "width" and (depths[1] .. " layers" ..
                                   (base_depth ~= depths[1] and " from base depth " .. base_depth or "")) or axis == "depth" and ("width " .. widths[1]) or "width x depth"
print(string.format("(columns: log2 of the learning rate; 'div' = diverged; %s, %s, %d steps, %d seeds; %s)", optimizer,
                    fixed, steps, seeds, results.config.metric))
print(string.format("written %s/lr_transfer.json (%d runs, %d s)", dir, runs_done, os.time() - t0))
