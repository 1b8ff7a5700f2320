-- What a width or depth sweep trains (scripts/lr_transfer.lua, scripts/coord_check.lua), by
-- arch=: Toto 2.0's forecaster on the synthetic prior (toto2, the default), or nanochat's GPT
-- on a text corpus (gpt: files=kjv.txt vocab=4096), so that one sweep checks a transfer claim
-- on series and on language. Both take rows of 256 steps (patches of 32 values, or tokens).
-- `data(seed)` is what a run of that seed trains on; `probe_data` the one source a coordinate
-- check trains and measures every seed on.
local M = {}

-- The arguments that choose the task, for a sweep script's orrery.args.
M.arguments = {
  {"arch", "string", "toto2", "what the sweep trains: toto2 on the synthetic prior, or gpt on a text corpus",
   choices = {"toto2", "gpt"}},
  {"head_dim", "int", nil, "channels per attention head, width / head_dim heads (default: 4 heads at every width)", min = 1},
  {"files", "string", "kjv.txt", "arch=gpt: the text corpus (a file or a glob)"},
  {"vocab", "int", 4096, "arch=gpt: the tokenizer's vocabulary, ids above the 256 bytes", min = 257},
}

-- The task for `args` (typed by M.arguments); `dir` is the experiment's folder, where a GPT task
-- keeps the tokenizer it trains once for every run (each run then loads it instead of training its
-- own; a resumed sweep finds it there).
function M.from_args(args, dir)
  local arch = args.arch
  -- Attention heads: 4 at every width, so a head grows with the width, or head_dim=D: width / D
  -- heads of D channels each, the head's size fixed as models grow in practice.
  local head_dim = args.head_dim
  local function heads(width)
    if not head_dim then return 4 end
    if width % head_dim ~= 0 then error("head_dim=" .. head_dim .. " does not divide width " .. width, 0) end
    return width // head_dim
  end
  if arch == "toto2" then
    return {
      arch = arch, context_length = 256, head_dim = head_dim,
      model = function(width, depth)
        return {arch = {"toto2", d_model = width, num_layers = depth, num_heads = heads(width)}, head = "quantile"}
      end,
      data = function(seed) return {"synthetic", seed = 1000 + seed} end,  -- paired with the model's seed
      probe_data = {"synthetic"},                                          -- one source for every seed
    }
  end
  if head_dim and head_dim % 2 == 1 then
    error("head_dim must be even for arch=gpt (rotary embeddings turn pairs of channels), got " .. head_dim, 0)
  end
  local files, vocab = args.files, args.vocab
  M.require_corpus(files, "arch=gpt")
  -- A resumed sweep keeps the tokenizer its finished runs were trained with.
  local tokenizer = dir .. "/tokenizer.json"
  local kept = io.open(tokenizer, "rb")
  if kept then kept:close() else orrery.data{"text", files = files, vocab_size = vocab, save_tokenizer = tokenizer} end
  local text = {"text", files = files, tokenizer = tokenizer}
  return {
    arch = arch, context_length = 256, files = files, vocab = vocab, head_dim = head_dim,
    model = function(width, depth)
      return {arch = {"gpt", vocab_size = vocab, d_model = width, num_layers = depth, num_heads = heads(width),
                      sequence_len = 256},
              head = {"categorical", classes = vocab}, patch_size = 1}
    end,
    data = function() return text end,  -- the run's seed draws its rows
    probe_data = text,
  }
end

-- Stops `who` with a clear error when `files` names a file that cannot be read, with the Debian
-- command that writes the default corpus (a glob is left to the text source, which names a
-- pattern that matches nothing).
function M.require_corpus(files, who)
  if tostring(files):find("[%*%?%[]") then return end
  local f = io.open(files, "rb")
  if not f then
    error(who .. ": no corpus at '" .. files .. "': write the King James Bible there with\n" ..
          "  bible -l1000 \"gen1:1-rev22:21\" > kjv.txt\nor name your text with files=PATH (or a glob: files='corpus/*.txt')", 0)
  end
  f:close()
end

-- Stops with the task's error (a head_dim that does not divide a width) before anything trains:
-- `shapes` is every {width, depth} the caller will build.
function M.check(task, shapes)
  for _, at in ipairs(shapes) do task.model(at[1], at[2]) end
end

-- A model spec of the task's at (width, depth) with the caller's fields (param, seed, device).
function M.model(task, width, depth, fields)
  local spec = task.model(width, depth)
  for k, v in pairs(fields) do spec[k] = v end
  return spec
end

return M
