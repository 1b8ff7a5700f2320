-- @NAME@.lua: the optimizer '@NAME@' trains a small Toto-style forecaster beside AdamW, same seed.
local args = orrery.args{
  "Train one small forecaster with the optimizer '@NAME@' and with AdamW, same model, data and seed.",
  {"steps", "int", 200, "training steps of each run", min = 1},
  {"lr", "number", 1e-2, "the learning rate of '@NAME@'", min = 0},
}
for _, optimizer in ipairs{{"@NAME@", lr = args.lr}, {"adamw", lr = 2e-3}} do
  local model = orrery.model{arch = {"toto2", d_model = 32, num_layers = 2, num_heads = 2}, head = "quantile", seed = 0}
  local run = orrery.train{model = model, data = "synthetic", optimizer = optimizer, steps = args.steps,
                           batch_size = 8, context_length = 128, seed = 0, name = "@NAME@-" .. optimizer[1]}
  print(string.format("%-10s loss %.4f -> %.4f (%s)", optimizer[1], run.first_loss, run.final_loss, run.run_dir))
end
