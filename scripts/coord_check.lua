-- Coordinate check (Tensor Programs V; microsoft/mup's coord_check): train the same model at
-- several widths for a few steps with a deliberately large learning rate, and after every step
-- measure the RMS of every layer's activations on one fixed batch. A parametrisation that keeps
-- updates width-independent gives flat rows: the same RMS at every width. u-muP should stay
-- within a factor 1.5 across widths 64..512; SP, for contrast, drifts with width.
--
--   orrery run scripts/coord_check.lua [params=umup,sp] [widths=64,128,256,512] [steps=4]
--                                      [optimizer=adamw] [seeds=2]
--
-- Results: runs/coord_check*/coord_check.json (every layer x width x step) and a table.

local function list(s, default)
  if s == nil then return default end
  local out = {}
  for item in tostring(s):gmatch("[^,]+") do out[#out + 1] = tonumber(item) or item end
  return out
end

local params    = list(args.params, {"umup", "sp"})
local seeds     = tonumber(args.seeds) or 2
local widths    = list(args.widths, {64, 128, 256, 512})
local steps     = tonumber(args.steps) or 4
local optimizer = args.optimizer or "adamw"
-- Large rates, as a coordinate check wants: about 2x each parametrisation's tuned optimum
-- (see scripts/lr_transfer.lua).
local lr = {umup = tonumber(args.lr) or 1.0, sp = tonumber(args.lr) or 4e-3, mup = tonumber(args.lr) or 4e-3}
local budget_per_step = {batch_size = 16, context_length = 256}

local dir = orrery.experiment_dir("coord_check", args.runs_dir)
local probe = {batch_size = 8, context_length = 256, seed = 12345}  -- the fixed batch

local results = {params = {}, widths = widths, steps = steps, optimizer = optimizer}
for _, param in ipairs(params) do
  local by_layer, order = {}, {}  -- by_layer[name][width_index][t + 1] = rms, mean over seeds
  local readout = {}               -- activations that a readout produces or mixes in
  for wi, width in ipairs(widths) do
   for seed = 0, seeds - 1 do
    local model = orrery.model{
      arch = {"toto2", d_model = width, num_layers = 2, num_heads = 4},
      head = "quantile", param = param, seed = seed,
    }
    for _, p in ipairs(model:describe().params) do
      if p.role == "readout" then
        local layer = p.name:gsub("%.weight$", "")
        readout[layer] = true
        readout[layer:gsub("%.[^.]+$", "") .. ".residual"] = true
      end
    end
    local function record(t)
      for _, a in ipairs(model:activations(probe)) do
        if not by_layer[a.name] then by_layer[a.name] = {}; order[#order + 1] = a.name end
        by_layer[a.name][wi] = by_layer[a.name][wi] or {}
        by_layer[a.name][wi][t + 1] = (by_layer[a.name][wi][t + 1] or 0) + a.rms / seeds
      end
    end
    record(0)
    orrery.train{
      model = model, optimizer = {optimizer, lr = lr[param] or 1e-3, weight_decay = 0},
      steps = steps, batch_size = budget_per_step.batch_size,
      context_length = budget_per_step.context_length, schedule = {kind = "constant", warmup = 0},
      clip = 0, seed = seed, quiet = true, runs_dir = dir,
      name = string.format("%s-w%d-s%d", param, width, seed),
      log_every = 1, on_step = function(e) record(e.step) end,
    }
   end
    io.write(string.format("\r%s: width %d done ", param, width)); io.flush()
  end
  print()

  -- Worst ratio across widths for every layer at every step. A readout's output shrinks as
  -- 1/sqrt(width) at init by design (multiplier 1/fan_in) and is judged apart.
  local layers, worst, worst_readout = {}, {value = 0}, {value = 0}
  print(string.format("\n%s (%s, lr %g): activation RMS at step t, and max/min across widths", param,
                      optimizer, lr[param] or 1e-3))
  local header = string.format("%-46s %3s", "layer", "t")
  for _, w in ipairs(widths) do header = header .. string.format(" %8s", "w" .. w) end
  print(header .. "    ratio")
  for _, name in ipairs(order) do
    local rows = {}
    for t = 0, steps do
      local line, lo, hi, values = string.format("%-46s %3d", name, t), math.huge, 0, {}
      for wi = 1, #widths do
        local v = by_layer[name][wi][t + 1]
        values[wi] = v
        lo, hi = math.min(lo, v), math.max(hi, v)
        line = line .. string.format(" %8.3f", v)
      end
      local ratio = hi / lo
      rows[#rows + 1] = {t = t, rms = values, ratio = ratio}
      local w = readout[name] and worst_readout or worst
      if ratio > w.value then w.value, w.layer, w.t = ratio, name, t end
      if t == 0 or t == steps then print(line .. string.format(" %8.2f", ratio)) end
    end
    layers[#layers + 1] = {name = name, readout = readout[name] or false, steps = rows}
  end
  results.params[param] = {lr = lr[param], layers = layers, worst = worst, worst_readout = worst_readout}
  print(string.format("%s: worst max/min across widths %.2f (%s, step %d); readout outputs %.2f (%s, step %d)",
                      param, worst.value, worst.layer, worst.t, worst_readout.value,
                      worst_readout.layer, worst_readout.t))
end

orrery.write_json(dir .. "/coord_check.json", results)
print("\nwritten " .. dir .. "/coord_check.json")
