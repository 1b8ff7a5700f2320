-- nanochat's way to train a GPT, as data (nanochat/gpt.py setup_optimizer and
-- scripts/base_train.py; shared/reference/optimizers-and-parametrisations.md section 6):
-- NorMuon (Polar Express, Keller's shape factor, normalised along the longer side, cautious
-- weight decay) for the matrices of the blocks, and AdamW with its own rate, betas and decay for
-- the embeddings, the unembedding and the per-layer scalars. The AdamW rates of the embeddings
-- and the unembedding are scaled by 1/sqrt(d_model / 768), the width nanochat tuned them at.
-- Momentum warmup and the decay of weight decay to zero act on NorMuon alone (AdamW groups
-- follow only the learning-rate schedule: schedules = {"lr"}), under one warmup-constant-
-- warmdown learning-rate schedule. The groups, rates, betas and the learning-rate schedule are
-- HEAD's; the momentum warmup (0.85 -> 0.95 over 300 steps) and the linear decay of weight decay
-- are nanochat's before 6ed7d1d.
--
-- Not taken from nanochat HEAD: MuonEq's row equilibration and Muon+'s renormalisation (the
-- optimizer is nanochat's before 4e014d3), and its batch-size and depth rules for the rates and
-- for Muon's weight decay (0.28, HEAD's reference value, is taken as it is).
-- The per-layer residual scalars are kept as offsets from 1 (gpt.cpp), so their weight decay
-- pulls them toward 1, where nanochat's pulls toward 0.
local M = {}

-- base_train.py's defaults.
M.defaults = {matrix_lr = 0.02, embedding_lr = 0.3, unembedding_lr = 0.008, scalar_lr = 0.5,
              weight_decay = 0.28}

-- The optimizer groups for a model of width d_model; o overrides M.defaults, and
-- o.value_embeddings = false leaves out the group of a GPT built without them.
function M.optimizer(d_model, o)
  o = setmetatable(o or {}, {__index = M.defaults})
  assert(type(d_model) == "number" and d_model > 0, "nanochat.optimizer: d_model must be a positive width")
  local s = (d_model / 768) ^ -0.5
  local function adamw(lr, beta1, beta2, weight_decay, names)
    return {"adamw", lr = lr, beta1 = beta1, beta2 = beta2, eps = 1e-10, weight_decay = weight_decay,
            decay_vectors = true, params = {name = names}, schedules = {"lr"}}
  end
  local groups = {
    adamw(o.unembedding_lr * s, 0.8, 0.96, 0.01, "*lm_head*"),
    adamw(o.embedding_lr * s, 0.8, 0.995, 0.001, "*wte*"),
    o.value_embeddings ~= false and adamw(o.embedding_lr * s * 0.5, 0.8, 0.995, 0.01, "*value_embedding*") or nil,
    adamw(o.scalar_lr * 0.01, 0.8, 0.95, 0.05, "*resid_lambdas*"),
    adamw(o.scalar_lr, 0.96, 0.95, 0, "*x0_lambdas*"),
    {"normuon", lr = o.matrix_lr, momentum = 0.95, beta2 = 0.9, weight_decay = o.weight_decay,
     cautious_wd = true, normalise_axis = "longer", adjust_lr = "keller", orthogonaliser = "polar_express"},
  }
  local out = {}  -- the list without the hole a left-out group leaves
  for i = 1, 6 do out[#out + 1] = groups[i] end
  return out
end

-- The run options of the schedules: a 40-step warmup, a linear warmdown over the last 65% to
-- 5% of the rate, momentum 0.85 -> 0.95 over 300 steps, weight decay linear to zero.
function M.schedules(steps)
  return {
    schedule = {kind = "wsd", warmup = math.min(40, math.floor(steps / 10)), decay = 0.65, decay_shape = "linear",
                min_lr = 0.05},
    momentum = {from = 0.85, to = 0.95, warmup = math.min(300, steps)},
    weight_decay_schedule = "linear",
  }
end

return M
