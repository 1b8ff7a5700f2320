-- A scaling study: models of growing size along Toto 2.0's preset shapes (width and depth grow
-- together) trained with one recipe -- the untuned default or a proxy search's -- whose rates
-- u-muP carries from the proxy's depth (CompleteP's depth rule, umup's default) to every shape,
-- each for the same number of training points per parameter. Each size's run keeps its rate until
-- its own decay and checkpoints where the decays of shorter budgets begin, and those decays
-- branch off it: one run gives a size several budgets. Then the held-out loss is fitted
--   by size:        L(N) = E + A N^-alpha           (the full budgets, a fixed points-per-parameter)
--   jointly:        L(N, D) = E + A N^-alpha + B D^-beta   (Chinchilla's approach 3, every budget)
-- with bootstrap intervals over runs, and refitted without the largest size to see how well it
-- is predicted.
--
--
-- The default, five sizes from 78k to 1.15M parameters at 20 points per parameter, takes about
-- 11 minutes on 2 CPU cores. Toto 2.0's own shapes on GPUs:
--   orrery run scripts/scaling.lua shapes=256x4,512x6,1024x24,1536x36 head_dim=64 batch=64 \
--       context=4096 recipe=runs/proxy_search/proxy_search.json proxy_depth=12 device=cuda
-- Run again, it resumes: finished runs are read back (their checkpoints), unfinished ones go on.
-- Results: runs/<name>/scaling.json, a table, and plots/scaling.svg.

local proxy = require("lib.proxy")

local args = orrery.args{
  "A scaling study: models of growing size (width and depth together) trained with one recipe at a fixed\n" ..
  "number of points per parameter, shorter budgets branched off each run, the held-out loss fitted by size\n" ..
  "and jointly (Chinchilla's approach 3) with bootstrap intervals, and the largest size predicted.",
  {"shapes", "strings", {"32x1", "48x2", "64x2", "96x3", "128x4"}, "widthxdepth of each size, at least 3"},
  {"head_dim", "int", 16, "channels per attention head (every width a multiple)", min = 1},
  {"points_per_param", "number", 20, "training points per parameter of each size's full budget", min = 0},
  {"fractions", "numbers", {0.25, 0.5}, "the shorter budgets, as shares of the full one, each in (0, 1)", min = 0, max = 1},
  {"batch", "int", 16, "series a step", min = 1},
  {"context", "int", 256, "steps a training series", min = 1},
  {"recipe", "path", nil, "a proxy search's proxy_search.json (default: the untuned recipe)"},
  {"proxy_depth", "int", 2, "the depth the recipe's rates were tuned at", min = 1},
  {"val_batches", "int", 16, "held-out batches of the loss", min = 1},
  {"bootstrap", "int", 1000, "bootstrap resamples of each fit", min = 0},
  {"device", "string", "cpu", "where to train: cpu or cuda"},
  {"name", "string", "scaling", "the study's folder under runs_dir"},
  {"runs_dir", "string", "runs", "where the study's folder goes"},
}

local head_dim = args.head_dim
local shapes = {}
for _, item in ipairs(args.shapes) do
  local w, d = item:match("^%s*(%d+)x(%d+)%s*$")
  if not w then error("shapes takes width x depth pairs such as 64x2,128x4, got '" .. item .. "'", 0) end
  w, d = tonumber(w), tonumber(d)
  if w % head_dim ~= 0 then error("shapes: width " .. w .. " is not a multiple of head_dim " .. head_dim, 0) end
  shapes[#shapes + 1] = {width = w, depth = d, heads = w // head_dim, label = item:gsub("%s", "")}
end
if #shapes < 3 then error("shapes: a scaling fit needs at least 3 shapes, got " .. #shapes, 0) end
local ppp = args.points_per_param
local fractions = args.fractions
for _, f in ipairs(fractions) do
  if not (f > 0 and f < 1) then error("fractions are shares of the full budget in (0, 1), got " .. f, 0) end
end
table.sort(fractions)
local batch, context = args.batch, args.context
local proxy_depth = args.proxy_depth
local val_batches = args.val_batches
local device = args.device
local recipe = args.recipe and proxy.load(args.recipe) or proxy.default
local dir = args.runs_dir .. "/" .. args.name
local points_per_step = batch * context

-- One size: its full run, checkpointed where each shorter budget's decay starts, then a decay
-- branched off each checkpoint. Returns its points {params, tokens, loss, run, budget}.
local t0 = os.time()
local function train_size(shape)
  local probe = proxy.model(recipe, shape, 0, device, proxy_depth)
  local n = probe:parameters()
  local full = math.max(20, math.ceil(ppp * n / points_per_step))
  local budgets = {}
  for _, f in ipairs(fractions) do
    local b = math.max(10, math.floor(f * full + 0.5))
    if b > (budgets[#budgets] or 0) and b < full then budgets[#budgets + 1] = b end
  end
  budgets[#budgets + 1] = full
  -- The decay of a budget b takes its last recipe.decay share; the full run's stable phase
  -- passes every shorter budget's decay start, where it is checkpointed.
  local starts, at = {}, {}
  for i = 1, #budgets - 1 do
    starts[i] = math.floor(budgets[i] * (1 - recipe.decay) + 0.5)
    at[#at + 1] = starts[i]
  end
  local run_options = {steps = full, batch = batch, context = context, seed = 0, runs_dir = dir .. "/runs",
                       warmup_of = budgets[1]}
  -- Every run checkpoints its last step, so that a rerun of the script reads it back.
  local function train(steps, name, extra)
    local model = proxy.model(recipe, shape, 0, device, proxy_depth)
    local options = proxy.merged(proxy.train_options(recipe, proxy.merged(run_options, {steps = steps, name = name})),
                                 proxy.merged({model = model, val_batches = val_batches, resume = true,
                                               checkpoint_at = {steps}}, extra))
    return orrery.train(options)
  end
  local points = {}
  at[#at + 1] = full
  local main = train(full, shape.label .. "-full", {checkpoint_at = at})
  points[#budgets] = {params = n, tokens = full * points_per_step, loss = main.val_loss, run = shape.label,
                      budget = full}
  for i = 1, #budgets - 1 do
    local branch = string.format("%s/checkpoints/step-%09d", main.run_dir, starts[i])
    local r = train(budgets[i], string.format("%s-%d", shape.label, budgets[i]), {branch = branch})
    points[i] = {params = n, tokens = budgets[i] * points_per_step, loss = r.val_loss, run = shape.label,
                 budget = budgets[i]}
  end
  io.write(string.format("\r%-8s %9d parameters  %6d steps  loss %.4f  (%ds)%s\n", shape.label, n, full,
                         main.val_loss, os.time() - t0, string.rep(" ", 20)))
  return points
end

local all, by_size = {}, {}
for _, shape in ipairs(shapes) do
  local pts = train_size(shape)
  for _, p in ipairs(pts) do all[#all + 1] = p end
  by_size[#by_size + 1] = pts[#pts]
end

local bootstrap = args.bootstrap
local function fit_points(list)
  local out = {}
  for i, p in ipairs(list) do out[i] = {params = p.params, tokens = p.tokens, loss = p.loss, run = p.run} end
  return out
end
local size_law = orrery.fit_scaling{points = fit_points(by_size), law = "size", bootstrap = bootstrap}
local joint_law = orrery.fit_scaling{points = fit_points(all), law = "joint", bootstrap = bootstrap}

print(string.format("\n%-8s %10s %10s   %s", "shape", "params", "points", "held-out loss by budget (steps)"))
for s, shape in ipairs(shapes) do
  local row = {}
  for _, p in ipairs(all) do
    if p.run == shape.label then row[#row + 1] = string.format("%d: %.4f", p.budget, p.loss) end
  end
  print(string.format("%-8s %10d %10.3g   %s", shape.label, by_size[s].params, by_size[s].tokens,
                      table.concat(row, "   ")))
end
local function interval(law, key)
  local i = law.intervals[key]
  return string.format("%.3f [%.3f, %.3f]", law[key], i[1], i[2])
end
print(string.format("\nL(N) = E + A N^-alpha at %g points per parameter: E %s, alpha %s", ppp,
                    interval(size_law, "E"), interval(size_law, "alpha")))
if size_law.holdout then
  print(string.format("  fitted without %s, it predicts that size's loss within %.2f%%", shapes[#shapes].label,
                      100 * size_law.holdout.error))
end
print(string.format("L(N, D) = E + A N^-alpha + B D^-beta: E %s, alpha %s, beta %s", interval(joint_law, "E"),
                    interval(joint_law, "alpha"), interval(joint_law, "beta")))
if joint_law.holdout then
  print(string.format("  fitted without %s, it predicts that size's losses within %.2f%%", shapes[#shapes].label,
                      100 * joint_law.holdout.error))
end
local results = {shapes = shapes, points = all, size = size_law, joint = joint_law, points_per_param = ppp,
                 recipe = recipe, recipe_from = args.recipe, proxy_depth = proxy_depth, seconds = os.time() - t0}
orrery.write_json(dir .. "/scaling.json", results)
orrery.plot(dir)   -- runs/<name>/plots/scaling.svg (the dashboard's Scaling tab), and the runs' loss curves
print(string.format("\n%d s; written: %s/scaling.json", os.time() - t0, dir))
