-- Optimizer duel: NorMuon vs Muon vs AdamW on Toto's pinball (quantile) objective, at equal
-- steps on the same data and seeds. The matrices inside the transformer stack go to the
-- optimizer under test; everything else (patch embedding, head, biases, gains) stays on AdamW at
-- one fixed rate, as in Toto 2.0's split. Reported: the final loss, and the steps each needs to
-- reach a target loss (by default the loss AdamW ends at).
--
-- Results: runs/optimizer_duel*/optimizer_duel.json (loss curves and the table).

local args = orrery.args{
  "Optimizer duel: NorMuon vs Muon vs AdamW on Toto's pinball objective, at equal steps on the same data\n" ..
  "and seeds; the final loss, and the steps each needs to reach a target loss.",
  {"steps", "int", 400, "training steps", min = 1},
  {"seeds", "int", 2, "seeds each contender trains", min = 1},
  {"param", "string", "sp", "the parametrisation", choices = {"sp", "mup", "umup"}},
  {"width", "int", 128, "d_model", min = 4},
  {"adamw_lr", "number", 2e-3, "AdamW's rate (and the rate of what the Muon family leaves)", min = 0},
  {"muon_lr", "number", 0.02, "Muon's rate", min = 0},
  {"normuon_lr", "number", 0.02, "NorMuon's rate", min = 0},
  {"target", "number", nil, "the target loss (default: the loss AdamW ends at)"},
  {"runs_dir", "string", "runs", "where the experiment's folder goes"},
}
local steps  = args.steps
local seeds  = args.seeds
local param  = args.param
local width  = args.width
local every  = math.max(1, steps // 40)
local lr = {adamw = args.adamw_lr, muon = args.muon_lr, normuon = args.normuon_lr}

local contenders = {
  {name = "adamw", optimizer = {"adamw", lr = lr.adamw}},
  {name = "muon", optimizer = {{"muon", lr = lr.muon, params = {role = "hidden", stack = true}},
                               {"adamw", lr = lr.adamw}}},
  {name = "normuon", optimizer = {{"normuon", lr = lr.normuon, params = {role = "hidden", stack = true}},
                                  {"adamw", lr = lr.adamw}}},
}

local dir = orrery.experiment_dir("optimizer_duel", args.runs_dir)
local results = {config = {steps = steps, seeds = seeds, param = param, width = width, lr = lr},
                 contenders = {}}
for _, c in ipairs(contenders) do
  local curve, final, seconds = {}, 0, 0   -- curve[k] = {step, loss} averaged over seeds
  for seed = 0, seeds - 1 do
    local model = orrery.model{arch = {"toto2", d_model = width, num_layers = 4, num_heads = 4},
                               head = "quantile", param = param, seed = seed}
    local k = 0
    local run = orrery.train{
      model = model, data = {"synthetic", seed = 1000 + seed}, optimizer = c.optimizer,
      steps = steps, batch_size = 16, context_length = 256, seed = seed,
      schedule = {kind = "wsd", warmup = 0.05, decay = 0.3}, log_every = every, quiet = true,
      runs_dir = dir, name = string.format("%s-s%d", c.name, seed),
      on_step = function(e)
        k = k + 1
        curve[k] = curve[k] or {step = e.step, loss = 0}
        curve[k].loss = curve[k].loss + e.loss / seeds
      end,
    }
    final, seconds = final + run.final_loss / seeds, seconds + run.seconds / seeds
    io.write(string.format("\r%-8s seed %d: final loss %.4f in %.0f s   ", c.name, seed, run.final_loss, run.seconds))
    io.flush()
  end
  results.contenders[#results.contenders + 1] = {name = c.name, curve = curve,
                                                 final_loss = final, seconds = seconds}
end
print()

local target = args.target or results.contenders[1].final_loss
results.target = target
print(string.format("\n%s, width %d, %d steps, %d seeds; target loss %.4f\n", param, width, steps, seeds, target))
print(string.format("%-8s %10s %16s %10s", "optimizer", "final loss", "steps to target", "s per run"))
for _, c in ipairs(results.contenders) do
  for _, p in ipairs(c.curve) do
    if p.loss <= target then c.steps_to_target = p.step; break end
  end
  print(string.format("%-8s %10.4f %16s %10.1f", c.name, c.final_loss,
                      c.steps_to_target and tostring(c.steps_to_target) or "not reached", c.seconds))
end
orrery.write_json(dir .. "/optimizer_duel.json", results)
print("\nwritten " .. dir .. "/optimizer_duel.json (loss curves: mean over seeds of each logging window)")
