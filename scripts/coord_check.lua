-- Coordinate check (Tensor Programs V; microsoft/mup's coord_check): train the same model at
-- several widths for a few steps with a deliberately large learning rate, and after every step
-- measure every layer's activations on one fixed batch: their RMS, and the RMS of their change
-- since initialisation (the "update" a step makes to each layer's output). A parametrisation that
-- keeps updates width-independent gives flat rows: the same values at every width. u-muP should
-- stay within a factor 1.5 across widths 64..512; SP, for contrast, drifts with width.
-- Across depth (depths=2,4,...,32 at one width; CompleteP's check) the same table compares
-- models of different depths layer for layer by position: every activation outside the stack,
-- and the first and last layer's inside it. alphas picks u-muP's residual exponents to compare
-- (depth_alpha 0.5 = depth-muP, 1 = CompleteP, each with base_depth = the first depth).
--
--   orrery run scripts/coord_check.lua [params=umup,sp] [widths=64,128,256,512] [steps=4]
--       [depths=2,4,8,16,32 [width=128] [alphas=0.5,1]]
--       [optimizer=adamw|normuon|muon|dion2] [rules=toto2,spectral] [seeds=2] [lr=...]
--       [adamw_lr=0] [device=cpu|cuda] [arch=toto2|gpt [files=kjv.txt] [vocab=4096]] [head_dim=D]
--
-- With a Muon-family optimizer the matrices inside the stack take it (at lr) and AdamW the rest, at
-- adamw_lr = 0 by default: frozen, so that every change is the Muon-family update's (at AdamW's
-- tuned rate the embedding's updates dominate every layer's change and hide the rule). Under
-- u-muP each of its Muon-family rules (toto2, spectral) is checked.
-- arch=gpt checks nanochat's GPT on a text corpus instead of the forecaster (lib/task.lua).
-- Results: runs/coord_check*/coord_check.json (every layer x width x step) and a table.

local tasks = require("lib.task")
local args = orrery.args{
  "Coordinate check: train one model at several widths (or depths) for a few steps at a large learning\n" ..
  "rate and measure every layer's activation RMS, and its change since step 0, on one fixed batch.",
  {"params", "strings", nil, "parametrisations to check (default umup,sp across widths, umup across depths)"},
  {"widths", "ints", {64, 128, 256, 512}, "the widths (d_model) compared", min = 1},
  {"depths", "ints", nil, "check across these depths at one width instead of across widths", min = 1},
  {"width", "int", 128, "the one width of a depth check", min = 1},
  {"alphas", "numbers", nil, "u-muP's residual exponents to compare (default 0.5,1 across depths; named in labels when given)", min = 0},
  {"steps", "int", 4, "training steps, each measured", min = 0},
  {"seeds", "int", 2, "seeds averaged at each point", min = 1},
  {"optimizer", "string", "adamw", "the optimizer of the hidden matrices", choices = {"adamw", "normuon", "muon", "dion2"}},
  {"rules", "strings", {"toto2", "spectral"}, "u-muP's Muon-family rules checked (with a Muon-family optimizer)"},
  {"lr", "number", nil, "one learning rate for every variant (default: about twice each variant's tuned optimum)", min = 0},
  {"adamw_lr", "number", 0, "AdamW's rate for what a Muon-family optimizer leaves (0: frozen)", min = 0},
  {"device", "string", "cpu", "where to train: cpu or cuda"},
  {"runs_dir", "string", "runs", "where the experiment's folder goes"},
  tasks.arguments,
}

local depths    = args.depths
local axis      = depths and "depth" or "width"
local params    = args.params or (axis == "depth" and {"umup"} or {"umup", "sp"})
local seeds     = args.seeds
local widths    = args.widths
local width     = args.width                                  -- the one width of a depth check
local alphas    = args.alphas or (axis == "depth" and {0.5, 1} or {0.5})
local points    = axis == "depth" and depths or widths          -- the columns of the table
local steps     = args.steps
local optimizer = args.optimizer
local muon_family = {normuon = true, muon = true, dion2 = true}
local rules     = args.rules

-- Large rates, as a coordinate check wants: about 2x each variant's tuned optimum at width 64
-- (see scripts/lr_transfer.lua and docs/results/lr_transfer/README.md).
local tuned = {adamw = {umup = 1.0, sp = 4e-3, mup = 4e-3},
               muon_family = {["umup/toto2"] = 0.5, ["umup/spectral"] = 0.0625, sp = 0.03, mup = 0.03}}
local adamw_lr = args.adamw_lr

local variants = {}
for _, p in ipairs(params) do
  for _, alpha in ipairs(p == "umup" and alphas or {0.5}) do
    local named = p == "umup" and (axis == "depth" or args.alphas)
    local suffix = named and string.format("/a%g", alpha) or ""
    local function umup(rule)
      local spec = {"umup", muon_rule = rule}
      if named then spec.depth_alpha, spec.base_depth = alpha, points[1] end
      return spec
    end
    if p == "umup" and muon_family[optimizer] then
      for _, rule in ipairs(rules) do
        variants[#variants + 1] = {label = "umup/" .. rule .. suffix, param = umup(rule), name = p,
                                   tuned = "umup/" .. rule}
      end
    elseif p == "umup" then
      variants[#variants + 1] = {label = "umup" .. suffix, param = umup(nil), name = p, tuned = "umup"}
    else
      variants[#variants + 1] = {label = p, param = p, name = p, tuned = p}
    end
  end
end
local function lr_of(v)
  if args.lr then return args.lr end
  return (muon_family[optimizer] and tuned.muon_family or tuned.adamw)[v.tuned] or 1e-3
end
local function optimizer_of(v)
  if not muon_family[optimizer] then return {optimizer, lr = lr_of(v), weight_decay = 0} end
  return {{optimizer, lr = lr_of(v), params = {role = "hidden", stack = true}},
          {"adamw", lr = adamw_lr, weight_decay = 0}}
end
local budget_per_step = {batch_size = 16, context_length = 256}  -- rows of 256 steps for either task

local dir = orrery.experiment_dir("coord_check", args.runs_dir)
local task = tasks.from_args(args, dir)
do
  local shapes = {}
  for _, at in ipairs(points) do shapes[#shapes + 1] = axis == "width" and {at, 2} or {width, at} end
  tasks.check(task, shapes)
end
local probe = {batch_size = 8, context_length = 256, seed = 12345}  -- the fixed batch

-- Across depth, an activation inside the stack is named by its layer's position: the first
-- layer's and the last layer's keep a place in the table (transformer.layers.first.attn...; a
-- single layer is both), the others are left out.
local function position_names(name, layers)
  if axis ~= "depth" then return {name} end
  local stack, i, rest = name:match("^(.-layers)%.(%d+)%.(.*)$")  -- toto2's transformer.layers.N, gpt's layers.N
  if not i then return {name} end
  i = tonumber(i)
  local names = {}
  if i == 0 then names[#names + 1] = stack .. ".first." .. rest end
  if i == layers - 1 then names[#names + 1] = stack .. ".last." .. rest end
  return names
end

local results = {params = {}, axis = axis, widths = axis == "width" and widths or {width},
                 depths = axis == "depth" and depths or nil, steps = steps, optimizer = optimizer}
for _, v in ipairs(variants) do
  -- by_layer[name][point index][t + 1] = {rms =, change =}, each the mean over seeds
  local by_layer, order = {}, {}
  local readout = {}               -- activations that a readout produces or mixes in
  for wi, at in ipairs(points) do
   local d_model = axis == "width" and at or width
   local layers = axis == "depth" and at or 2
   for seed = 0, seeds - 1 do
    local model = orrery.model(tasks.model(task, d_model, layers,
                                           {param = v.param, seed = seed, device = args.device}))
    for _, p in ipairs(model:describe().params) do
      if p.role == "readout" then
        local layer = p.name:gsub("%.weight$", "")
        readout[layer] = true
        readout[layer:gsub("%.[^.]+$", "") .. ".residual"] = true
      end
    end
    local at_init
    local function record(t)
      local acts, kept
      if t == 0 then
        acts, kept = model:activations{data = task.probe_data, batch_size = probe.batch_size,
                                       context_length = probe.context_length, seed = probe.seed, keep = true}
        at_init = kept
      else
        acts = model:activations{data = task.probe_data, batch_size = probe.batch_size,
                                 context_length = probe.context_length, seed = probe.seed, since = at_init}
      end
      for _, a in ipairs(acts) do
        for _, name in ipairs(position_names(a.name, layers)) do
          if not by_layer[name] then by_layer[name] = {}; order[#order + 1] = name end
          by_layer[name][wi] = by_layer[name][wi] or {}
          local cell = by_layer[name][wi][t + 1] or {rms = 0, change = 0}
          cell.rms = cell.rms + a.rms / seeds
          cell.change = cell.change + (a.change or 0) / seeds
          by_layer[name][wi][t + 1] = cell
        end
      end
    end
    record(0)
    orrery.train{
      model = model, data = task.probe_data, optimizer = optimizer_of(v),
      steps = steps, batch_size = budget_per_step.batch_size,
      context_length = budget_per_step.context_length, schedule = {kind = "constant", warmup = 0},
      clip = 0, seed = seed, quiet = true, runs_dir = dir,
      name = string.format("%s-w%d-L%d-s%d", v.label:gsub("/", "-"), d_model, layers, seed),
      log_every = 1, on_step = function(e) record(e.step) end,
    }
   end
    io.write(string.format("\r%s: %s %d done ", v.label, axis, at)); io.flush()
  end
  print()

  -- Worst ratio across the axis for every layer at every step, of the RMS and of the change since
  -- initialisation. A readout's output shrinks as 1/sqrt(width) at init by design (multiplier
  -- 1/fan_in) and is judged apart.
  local layers = {}
  local worst, worst_readout, worst_change = {value = 0}, {value = 0}, {value = 0}
  print(string.format("\n%s (%s, lr %g): activation RMS at step t (and at the last step its change since "
                      .. "step 0), max/min across %ss", v.label, optimizer, lr_of(v), axis))
  local header = string.format("%-46s %6s", "layer", "t")
  for _, w in ipairs(points) do header = header .. string.format(" %8s", (axis == "width" and "w" or "L") .. w) end
  print(header .. "    ratio")
  -- max/min across widths; nil for a layer that did not move at any width (frozen by adamw_lr = 0)
  -- or whose output is zero at every width.
  local function spread(values)
    local lo, hi = math.huge, 0
    for _, x in ipairs(values) do lo, hi = math.min(lo, x), math.max(hi, x) end
    if hi == 0 then return nil end
    return lo > 0 and hi / lo or math.huge
  end
  for _, name in ipairs(order) do
    local rows = {}
    for t = 0, steps do
      local rms, change = {}, {}
      for wi = 1, #points do
        local cell = by_layer[name][wi][t + 1]
        rms[wi], change[wi] = cell.rms, cell.change
      end
      local row = {t = t, rms = rms, ratio = spread(rms)}
      if t > 0 then row.change, row.change_ratio = change, spread(change) end
      rows[#rows + 1] = row
      local w = readout[name] and worst_readout or worst
      -- nil: zero at every point (gpt's zero-initialised output projections at step 0)
      if row.ratio and row.ratio > w.value then w.value, w.layer, w.t = row.ratio, name, t end
      if t > 0 and not readout[name] and row.change_ratio and row.change_ratio > worst_change.value then
        worst_change.value, worst_change.layer, worst_change.t = row.change_ratio, name, t
      end
      local function line(label, values, ratio)
        local text = string.format("%-46s %6s", name, label)
        for _, x in ipairs(values) do text = text .. string.format(" %8.3f", x) end
        print(text .. (ratio and string.format(" %8.2f", ratio) or "        -"))
      end
      if t == 0 or t == steps then line(tostring(t), rms, row.ratio) end
      if t == steps and t > 0 then line("d" .. t, change, row.change_ratio) end
    end
    layers[#layers + 1] = {name = name, readout = readout[name] or false, steps = rows}
  end
  results.params[v.label] = {lr = lr_of(v), layers = layers, worst = worst, worst_readout = worst_readout,
                             worst_change = worst_change}
  print(string.format("%s: worst max/min across %ss %.2f (%s, step %d); change since step 0 %.2f (%s, step %d); "
                      .. "readout outputs %.2f (%s, step %d)", v.label, axis, worst.value, worst.layer, worst.t,
                      worst_change.value, worst_change.layer or "-", worst_change.t or 0,
                      worst_readout.value, worst_readout.layer, worst_readout.t))
end

orrery.write_json(dir .. "/coord_check.json", results)
print("\nwritten " .. dir .. "/coord_check.json")
