-- A small GPT trained the nanochat way on a text corpus, on the CPU in about ten minutes:
-- a BPE tokenizer trained on the training documents, nanochat's GPT, NorMuon for its matrices and
-- AdamW for the rest (lib/nanochat.lua), warmup-constant-warmdown. Then it scores the model and
-- two count-based baselines (lib/ngram.lua: a unigram over tokens and a byte n-gram, each trained
-- on as many training tokens as the model) on the same held-out rows, val_batches batches of
-- them, in bits per byte, each difference with a bootstrap interval over the batches; and samples
-- text.
--
--   bible -l1000 "gen1:1-rev22:21" > kjv.txt
--
-- Writes runs/<name>/ (the run, as orrery.train writes it; its validation events use 4 batches),
-- model.safetensors, tokenizer.json and nanogpt.json (the bits per byte, the differences, the
-- samples). Load it again in `orrery repl` with orrery.load(run_dir) and a text source built with
-- tokenizer = that file (docs/language.md).
local nanochat = require("lib.nanochat")
local ngram = require("lib.ngram")

local args = orrery.args{
  "A small GPT trained the nanochat way on a text corpus, scored in bits per byte beside a unigram and\n" ..
  "a byte n-gram on the same held-out rows, then sampled. The corpus: bible -l1000 \"gen1:1-rev22:21\" > kjv.txt",
  {"files", "string", "kjv.txt", "the text corpus (a file or a glob)"},
  {"vocab", "int", 4096, "the BPE tokenizer's vocabulary, ids above the 256 bytes", min = 257},
  {"width", "int", 128, "d_model", min = 1},
  {"depth", "int", 4, "layers", min = 1},
  {"heads", "int", 4, "attention heads", min = 1},
  {"context", "int", 256, "tokens a row", min = 2},
  {"batch", "int", 16, "rows a step", min = 1},
  {"steps", "int", 600, "training steps", min = 1},
  {"seed", "int", 0, "seed of the weights and the rows", min = 0},
  {"order", "int", 5, "the byte n-gram baseline's order", min = 1},
  {"val_batches", "int", 16, "held-out batches scored (the interval resamples them)", min = 2},
  {"prompt", "string", "And God said", "what the samples continue"},
  {"samples", "int", 3, "samples drawn", min = 0},
  {"sample_steps", "int", 60, "tokens a sample", min = 1},
  {"name", "string", "nanogpt", "the run folder's name"},
  {"runs_dir", "string", "runs", "where the run folder goes"},
}
local files, prompt = args.files, args.prompt
local vocab, width, depth, heads = args.vocab, args.width, args.depth, args.heads
local context, batch, steps, seed = args.context, args.batch, args.steps, args.seed
local order, val_batches = args.order, args.val_batches
local samples, sample_steps = args.samples, args.sample_steps
require("lib.task").require_corpus(files, "nanogpt.lua")

local text = {"text", files = files, vocab_size = vocab}
local data = orrery.data(text)
local held = data:held_out()
local about = data:describe()
print(string.format("nanogpt: %s, %d documents (%d held out), %d ids, %.2f bytes per token", files, about.documents,
                    about.validation_documents, about.vocab_size, about.bytes_per_token))

-- The baselines see as many training tokens as the model trains on, drawn as the model's rows are.
local codec = ngram.codec(data)
local unigram, bytes = ngram.unigram(about.vocab_size), ngram.bytes(order)
local rows_per_draw = 64
local train_rows = steps * batch
for i = 0, math.ceil(train_rows / rows_per_draw) - 1 do
  local rows = data:sample(math.min(rows_per_draw, train_rows - i * rows_per_draw), context, 1000000 + i)
  unigram.train(rows)
  ngram.train_bytes(bytes, rows, codec)
end
local model = orrery.model{arch = {"gpt", vocab_size = about.vocab_size, d_model = width, num_layers = depth,
                                   num_heads = heads, sequence_len = context},
                           head = {"categorical", classes = about.vocab_size}, param = "sp", patch_size = 1}
local run = {model = model, data = text, optimizer = nanochat.optimizer(width), steps = steps, batch_size = batch,
             context_length = context, seed = seed, val_batches = math.min(4, val_batches),
             val_every = math.max(1, steps // 6), forecast_series = 0,
             name = args.name, runs_dir = args.runs_dir}
for k, v in pairs(nanochat.schedules(steps)) do run[k] = v end
local r = orrery.train(run)
if r.interrupted then print("nanogpt: interrupted at step " .. r.steps) end

model:save(r.run_dir .. "/model.safetensors")
orrery.data{"text", files = files, vocab_size = vocab, save_tokenizer = r.run_dir .. "/tokenizer.json"}

-- The model and the baselines on the same held-out rows, batch by batch: paired, so the
-- interval of a difference is a bootstrap over the batches.
local per_batch = {gpt = {}, unigram = {}, bytes = {}, n = {}}
for i = 1, val_batches do
  local rows = held:sample(batch, context, i - 1)
  local s = ngram.score(rows, codec, unigram, bytes)
  local m = model:score(held, batch, context, i - 1)
  assert(m.units == s.bytes, "the model and the baselines scored different bytes")
  per_batch.gpt[i], per_batch.unigram[i], per_batch.bytes[i], per_batch.n[i] = m.bits, s.unigram_bits, s.bytes_bits, s.bytes
end
local function bpb(name, picks)
  local bits, n = 0, 0
  for _, i in ipairs(picks) do bits, n = bits + per_batch[name][i], n + per_batch.n[i] end
  return bits / n
end
local all = {}
for i = 1, val_batches do all[i] = i end
local function versus(name)  -- gpt's bits per byte minus a baseline's, with a 90% interval
  local boot = orrery.bootstrap{n = val_batches, statistic = function(picks) return bpb("gpt", picks) - bpb(name, picks) end}
  return {difference = bpb("gpt", all) - bpb(name, all), low = boot.lo, high = boot.hi}
end
local n_bytes = 0
for i = 1, val_batches do n_bytes = n_bytes + per_batch.n[i] end

local texts = {}
for i = 1, samples do
  local ids = model:generate{values = data:encode(prompt), steps = sample_steps, temperature = 0.8, top_k = 40, seed = i}
  texts[i] = prompt .. data:decode(ids)
end

local gram = "bytes_" .. order .. "gram"
local result = {
  files = files, vocab_size = about.vocab_size, parameters = r.parameters, steps = r.steps, seconds = r.seconds,
  seed = seed, train_tokens = train_rows * context,
  validation = {batches = val_batches, rows = val_batches * batch, bytes = n_bytes},
  bits_per_byte = {gpt = bpb("gpt", all), unigram = bpb("unigram", all), [gram] = bpb("bytes", all)},
  gpt_minus = {unigram = versus("unigram"), [gram] = versus("bytes")},
  samples = texts,
}
orrery.write_json(r.run_dir .. "/nanogpt.json", result)

print(string.format("\nvalidation bits per byte: %d held-out rows of %d tokens (%d bytes), the same rows for each;" ..
                    "\nthe difference from gpt with a 90%% bootstrap interval over the %d batches:", val_batches * batch,
                    context, n_bytes, val_batches))
local function line(label, value, vs)
  local text = string.format("  %-36s %.3f", label, value)
  if vs then text = text .. string.format("   gpt %+.3f [%+.3f, %+.3f]", vs.difference, vs.low, vs.high) end
  print(text)
end
line("unigram over tokens", result.bits_per_byte.unigram, result.gpt_minus.unigram)
line("byte " .. order .. "-gram (absolute discounting)", result.bits_per_byte[gram], result.gpt_minus[gram])
line(string.format("gpt, %.1fM parameters, %d steps", r.parameters / 1e6, r.steps), result.bits_per_byte.gpt)
print("\nsamples (temperature 0.8, top-k 40):")
for _, s in ipairs(texts) do print("  " .. s:gsub("\n", "\n  ")) end
print("\n" .. r.run_dir .. "/nanogpt.json")
