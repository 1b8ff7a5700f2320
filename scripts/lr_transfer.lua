-- Learning-rate transfer across widths (Tensor Programs V, Figure 1; u-muP). For each
-- parametrisation and width, train the same small Toto-style model at a grid of learning rates
-- (log2 steps of an octave until the minimum is bracketed, then half-octaves around it), with
-- depth, head count and token budget fixed, over several seeds. Fit a parabola in log2(lr)
-- around each width's best point: under u-muP the optimum should stay put (moving at most half
-- an octave across the widths); under SP it drifts as the model widens.
--
--   orrery run scripts/lr_transfer.lua [params=sp,umup] [widths=64,128,256,512] [seeds=2]
--                                      [steps=100] [optimizer=adamw|normuon]
--
-- With optimizer=normuon the swept rate is NorMuon's (matrices inside the stack) while AdamW
-- keeps every other parameter at a fixed rate (adamw_lr, default each parametrisation's AdamW
-- optimum): does u-muP's Muon-family rule (depth^-1/2 only, with the spectral shape scale)
-- transfer NorMuon's rate across widths as its Adam rule does AdamW's?
-- Results: runs/lr_transfer*/lr_transfer.json and a table; each training run has its folder.

local function list(s, default)
  if s == nil then return default end
  local out = {}
  for item in tostring(s):gmatch("[^,]+") do out[#out + 1] = tonumber(item) or item end
  return out
end

local params    = list(args.params, {"sp", "umup"})
local widths    = list(args.widths, {64, 128, 256, 512})
local seeds     = tonumber(args.seeds) or 2
local steps     = tonumber(args.steps) or 100
local optimizer = args.optimizer or "adamw"
local layers    = tonumber(args.layers) or 2
-- Where each search starts (log2 lr) and its bounds; the search walks downhill from there.
local start  = {adamw = {sp = -9, mup = -9, umup = 0}, normuon = {sp = -6, mup = -6, umup = -4}}
local bounds = {adamw = {sp = {-16, -3}, mup = {-16, -3}, umup = {-6, 5}},
                normuon = {sp = {-12, 2}, mup = {-12, 2}, umup = {-12, 4}}}
local adamw_lr = {sp = 2^-9, mup = 2^-9, umup = 2^0}   -- the AdamW groups' rate under normuon
if args.adamw_lr then for k in pairs(adamw_lr) do adamw_lr[k] = tonumber(args.adamw_lr) end end
assert(start[optimizer], "optimizer must be adamw or normuon, got " .. optimizer)

local dir = orrery.experiment_dir("lr_transfer", args.runs_dir)
local t0 = os.time()
local runs_done = 0

-- Mean final loss (the last quarter of the run) over seeds; math.huge when training diverged.
local function loss_at(param, width, log2_lr)
  local lr = 2^log2_lr
  local losses, sum = {}, 0
  for seed = 0, seeds - 1 do
    local model = orrery.model{
      arch = {"toto2", d_model = width, num_layers = layers, num_heads = 4},
      head = "quantile", param = param, seed = seed,
    }
    local opt = {"adamw", lr = lr, weight_decay = 0}
    if optimizer == "normuon" then
      opt = {{"normuon", lr = lr, params = {role = "hidden", stack = true}},
             {"adamw", lr = adamw_lr[param], weight_decay = 0}}
    end
    local ok, run = pcall(orrery.train, {
      model = model, data = {"synthetic", seed = 1000 + seed}, optimizer = opt,
      steps = steps, batch_size = 16, context_length = 256,
      schedule = {kind = "wsd", warmup = 0.1, decay = 0.3}, clip = 0,
      seed = seed, quiet = true, log_every = math.max(1, steps // 4), runs_dir = dir,
      name = string.format("%s-w%d-lr%+.1f-s%d", param, width, log2_lr, seed),
    })
    local l = ok and run.final_loss or math.huge
    if l ~= l then l = math.huge end  -- NaN
    losses[#losses + 1] = l
    sum = sum + l
    runs_done = runs_done + 1
  end
  io.write(string.format("\r%-5s width %4d  log2 lr %+5.1f  loss %8.4f   (%d runs, %ds)   ", param,
                         width, log2_lr, sum / seeds, runs_done, os.time() - t0))
  io.flush()
  return sum / seeds, losses
end

-- Least-squares parabola through (x, y); returns the vertex x, or nil when not convex.
local function parabola_vertex(xs, ys)
  local n, sx, sx2, sx3, sx4, sy, sxy, sx2y = #xs, 0, 0, 0, 0, 0, 0, 0
  for i = 1, n do
    local x, y = xs[i], ys[i]
    sx, sx2, sx3, sx4 = sx + x, sx2 + x * x, sx3 + x^3, sx4 + x^4
    sy, sxy, sx2y = sy + y, sxy + x * y, sx2y + x * x * y
  end
  -- Normal equations for y = a x^2 + b x + c, by Cramer's rule.
  local function det(m) return m[1][1] * (m[2][2] * m[3][3] - m[2][3] * m[3][2])
                             - m[1][2] * (m[2][1] * m[3][3] - m[2][3] * m[3][1])
                             + m[1][3] * (m[2][1] * m[3][2] - m[2][2] * m[3][1]) end
  local A = {{sx4, sx3, sx2}, {sx3, sx2, sx}, {sx2, sx, n}}
  local D = det(A)
  if math.abs(D) < 1e-12 then return nil end
  local a = det({{sx2y, sx3, sx2}, {sxy, sx2, sx}, {sy, sx, n}}) / D
  local b = det({{sx4, sx2y, sx2}, {sx3, sxy, sx}, {sx2, sy, n}}) / D
  if a <= 0 then return nil end
  return -b / (2 * a)
end

local results = {config = {params = params, widths = widths, seeds = seeds, steps = steps,
                           optimizer = optimizer, layers = layers, batch_size = 16,
                           context_length = 256, metric = "mean loss over the last quarter"},
                 curves = {}}
for _, param in ipairs(params) do
  results.curves[param] = {}
  local centre = start[optimizer][param] or -8
  local lo, hi = table.unpack(bounds[optimizer][param] or {-16, 4})
  for _, width in ipairs(widths) do
    local seen = {}   -- log2 lr -> mean loss
    local per_seed = {}
    local function eval(x)
      if x < lo or x > hi then return math.huge end
      if not seen[x] then seen[x], per_seed[x] = loss_at(param, width, x) end
      return seen[x]
    end
    -- Octave steps downhill until the best point has worse neighbours on both sides.
    local best = centre
    eval(best)
    while true do
      local l, r = eval(best - 1), eval(best + 1)
      if l < seen[best] and l <= r then best = best - 1
      elseif r < seen[best] then best = best + 1
      else break end
    end
    eval(best - 0.5); eval(best + 0.5)          -- half-octave refinement
    for _, x in ipairs{best - 0.5, best + 0.5} do
      if (seen[x] or math.huge) < seen[best] then best = x end
    end
    -- Parabola over the finite points within an octave of the best.
    local xs, ys, points = {}, {}, {}
    for x, y in pairs(seen) do
      points[#points + 1] = {log2_lr = x, lr = 2^x, loss = y < math.huge and y or nil, losses = per_seed[x]}
      if math.abs(x - best) <= 1 and y < math.huge then xs[#xs + 1], ys[#ys + 1] = x, y end
    end
    table.sort(points, function(a, b) return a.log2_lr < b.log2_lr end)
    local fit = parabola_vertex(xs, ys)
    if not fit or fit < best - 1 or fit > best + 1 then fit = best end
    results.curves[param][tostring(width)] = {points = points, best_log2_lr = best, fitted_log2_lr = fit,
                                             best_loss = seen[best]}
    centre = math.floor(best)  -- the next width starts from here
  end
end
print()

-- The loss table, one row per parametrisation and width, and the optimum's drift.
local all = {}
for _, param in ipairs(params) do
  for _, c in pairs(results.curves[param]) do for _, p in ipairs(c.points) do all[p.log2_lr] = true end end
end
local columns = {}
for x in pairs(all) do columns[#columns + 1] = x end
table.sort(columns)
local header = string.format("\n%-5s %6s", "param", "width")
for _, x in ipairs(columns) do header = header .. string.format(" %7s", string.format("%+.1f", x)) end
print(header .. "   best  fitted")
results.shift = {}
for _, param in ipairs(params) do
  for _, width in ipairs(widths) do
    local c = results.curves[param][tostring(width)]
    local byx = {}
    for _, p in ipairs(c.points) do byx[p.log2_lr] = p.loss or math.huge end
    local line = string.format("%-5s %6d", param, width)
    for _, x in ipairs(columns) do
      local v = byx[x]
      line = line .. (v == nil and "       ." or v == math.huge and "    div" or string.format(" %7.4f", v))
    end
    print(line .. string.format("  %+5.1f  %+6.2f", c.best_log2_lr, c.fitted_log2_lr))
  end
  local first = results.curves[param][tostring(widths[1])].fitted_log2_lr
  local last = results.curves[param][tostring(widths[#widths])].fitted_log2_lr
  local doublings = math.log(widths[#widths] / widths[1], 2)
  results.shift[param] = {octaves = last - first, per_doubling = (last - first) / doublings}
  print(string.format("%-5s optimum moves %+.2f octaves from width %d to %d (%+.2f per doubling)",
                      param, last - first, widths[1], widths[#widths], (last - first) / doublings))
end
print("(columns: log2 of the learning rate; 'div' = diverged; " .. optimizer .. ", " .. layers ..
      " layers, " .. steps .. " steps, " .. seeds .. " seeds)")
orrery.write_json(dir .. "/lr_transfer.json", results)
print(string.format("written %s/lr_transfer.json (%d runs, %d s)", dir, runs_done, os.time() - t0))
