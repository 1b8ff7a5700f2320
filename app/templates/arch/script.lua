-- @NAME@.lua: the architecture '@NAME@' trains beside the patch MLP baseline, same head, data and seed.
local args = orrery.args{
  "Train the architecture '@NAME@' and the patch MLP baseline on the synthetic prior, then score both on the Nile.",
  {"steps", "int", 200, "training steps of each run", min = 1},
  {"d_model", "int", 64, "the width of both", min = 1},
}
for _, arch in ipairs{"@NAME@", "mlp"} do
  local model = orrery.model{arch = {arch, d_model = args.d_model}, head = "quantile", patch_size = 16, seed = 0}
  local run = orrery.train{model = model, data = "synthetic", steps = args.steps, batch_size = 8, context_length = 128,
                           seed = 0, name = "@NAME@-" .. arch}
  print(string.format("%-10s %d parameters, loss %.4f -> %.4f", arch, model:parameters(), run.first_loss, run.final_loss))
end
