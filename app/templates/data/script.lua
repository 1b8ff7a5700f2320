-- @NAME@.lua: a small forecaster trained on the data source '@NAME@', then asked to continue a wave.
local args = orrery.args{
  "Train a small forecaster on the data source '@NAME@' and forecast one of its series.",
  {"steps", "int", 200, "training steps", min = 1},
  {"noise", "number", 0.1, "the source's noise", min = 0},
}
local data = orrery.data{"@NAME@", noise = args.noise}
print("the source draws waves of periods " .. table.concat(data:describe().periods, ", "))
local model = orrery.model{arch = {"toto2", d_model = 32, num_layers = 2, num_heads = 2}, patch_size = 16, seed = 0}
local run = orrery.train{model = model, data = {"@NAME@", noise = args.noise}, steps = args.steps, batch_size = 8,
                         context_length = 128, seed = 0, name = "@NAME@-waves"}
local history = {}
for t = 1, 96 do history[t] = math.sin(2 * math.pi * t / 12) end
local f = model:forecast{values = history, horizon = 12}
print(string.format("loss %.4f -> %.4f; the wave's next three steps: %.2f %.2f %.2f (median)", run.first_loss,
                    run.final_loss, f.median[1], f.median[2], f.median[3]))
