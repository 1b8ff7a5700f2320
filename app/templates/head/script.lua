-- @NAME@.lua: the head '@NAME@' forecasts a series after a short training, beside the quantile head.
local args = orrery.args{
  "Train a small forecaster with the head '@NAME@' and with the quantile head, then forecast a seasonal series.",
  {"steps", "int", 200, "training steps of each run", min = 1},
}
local series = {}
for t = 1, 96 do series[t] = 10 + 3 * math.sin(2 * math.pi * t / 12) end
for _, head in ipairs{"@NAME@", "quantile"} do
  local model = orrery.model{arch = {"toto2", d_model = 32, num_layers = 2, num_heads = 2}, head = head,
                             patch_size = 16, seed = 0}
  local run = orrery.train{model = model, data = "synthetic", steps = args.steps, batch_size = 8, context_length = 128,
                           seed = 0, name = "@NAME@-" .. head}
  local f = model:forecast{values = series, horizon = 12}
  print(string.format("%-10s loss %.4f -> %.4f; next step: median %.2f, 10-90%% band %.2f to %.2f", head,
                      run.first_loss, run.final_loss, f.median[1], f.quantiles[1][1], f.quantiles[9][1]))
end
