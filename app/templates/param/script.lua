-- @NAME@.lua: the parametrisation '@NAME@' beside sp, on the same model, data, optimizer and seed.
local args = orrery.args{
  "Train one small forecaster under the parametrisation '@NAME@' and under sp, same optimizer and seed.",
  {"steps", "int", 200, "training steps of each run", min = 1},
  {"readout_lr", "number", 1.0, "the learning-rate multiplier of readouts under '@NAME@'", min = 0},
}
for _, param in ipairs{{"@NAME@", readout_lr = args.readout_lr}, "sp"} do
  local label = type(param) == "table" and param[1] or param
  local model = orrery.model{arch = {"toto2", d_model = 32, num_layers = 2, num_heads = 2}, param = param, seed = 0}
  local run = orrery.train{model = model, data = "synthetic", optimizer = {"adamw", lr = 2e-3}, steps = args.steps,
                           batch_size = 8, context_length = 128, seed = 0, name = "@NAME@-" .. label}
  print(string.format("%-10s loss %.4f -> %.4f", label, run.first_loss, run.final_loss))
end
