-- Count-based baselines for a language model's bits per byte, read from the rows a text source
-- draws (data:sample), scored the way orrery.train scores a model: every target after a row's
-- first position whose token stands for some bytes, its bits summed over those bytes.
--
--   unigram: each token's training frequency, add-one over the vocabulary;
--   bytes:   an order-n model of bytes (n - 1 bytes of context, none across a document's
--            start), interpolated with absolute discounting (Ney, Essen and Kneser 1994):
--            P(b | h) = (max(c(h b) - D, 0) + D * types(h) * P(b | h')) / c(h), where h' is h
--            without its oldest byte, down to add-one byte frequencies. Each level sums to 1.
-- A token's bits under the byte model are those of its bytes in turn, so both baselines and the
-- model are scored on the same bytes.
local M = {}

local byte, log, max, min = string.byte, math.log, math.max, math.min
local LOG2 = log(2)

-- The text of each token id, and the BOS id, read from the source's tokenizer once.
function M.codec(data)
  local bos = data:describe().bos
  local text = setmetatable({}, {__index = function(t, id)
    local s = id == bos and "" or data:decode({id})
    t[id] = s
    return s
  end})
  return {bos = bos, text = text}
end

-- Calls visit(ids, first, last) for each document piece of each row: the positions of the ids
-- after a BOS up to the next BOS or the row's end.
local function pieces(rows, bos, visit)
  for _, row in ipairs(rows) do
    local ids = row[1]
    local start = 1
    for t = 1, #ids + 1 do
      if t > #ids or ids[t] == bos then
        if t > start then visit(ids, start, t - 1) end
        start = t + 1
      end
    end
  end
end

-- rows: data:sample's table for a batch, [row][variate][step].
function M.unigram(vocab)
  local counts, total = {}, 0
  local model = {}
  function model.train(rows)
    for _, row in ipairs(rows) do
      for _, id in ipairs(row[1]) do counts[id] = (counts[id] or 0) + 1 end
      total = total + #row[1]
    end
  end
  function model.bits(id) return -log(((counts[id] or 0) + 1) / (total + vocab)) / LOG2 end
  return model
end

function M.bytes(order, discount)
  order = order or 5
  discount = discount or 0.75
  assert(order >= 1 and order <= 7, "ngram.bytes: order between 1 and 7 (contexts packed in 48 bits)")
  assert(discount > 0 and discount < 1, "ngram.bytes: a discount between 0 and 1 (each level must sum to 1)")
  local unigram, total = {}, 0
  local counts, totals, types = {}, {}, {}  -- keyed by (context << 3 | length) and that << 8 | byte
  local model = {}

  -- Counts each byte of s after its (up to order - 1) predecessors in s.
  function model.train_text(s)
    for i = 1, #s do
      local b = byte(s, i)
      unigram[b] = (unigram[b] or 0) + 1
      total = total + 1
      local ctx = 0
      for k = 1, min(order - 1, i - 1) do
        ctx = ctx | (byte(s, i - k) << (8 * (k - 1)))
        local h = (ctx << 3) | k
        local hb = (h << 8) | b
        local c = counts[hb]
        if c then counts[hb] = c + 1 else counts[hb] = 1; types[h] = (types[h] or 0) + 1 end
        totals[h] = (totals[h] or 0) + 1
      end
    end
  end

  -- Bits of s's bytes from position first to last, each given its predecessors in s.
  function model.bits_text(s, first, last)
    local bits = 0
    for i = first, last do
      local b = byte(s, i)
      local p = ((unigram[b] or 0) + 1) / (total + 256)
      local ctx = 0
      for k = 1, min(order - 1, i - 1) do
        ctx = ctx | (byte(s, i - k) << (8 * (k - 1)))
        local h = (ctx << 3) | k
        local t = totals[h]
        if not t then break end  -- no longer context was seen either
        p = (max((counts[(h << 8) | b] or 0) - discount, 0) + discount * types[h] * p) / t
      end
      bits = bits - log(p) / LOG2
    end
    return bits
  end
  return model
end

-- Trains a byte model on the rows' documents pieces (BOS dropped, each piece's bytes in order).
function M.train_bytes(model, rows, codec)
  pieces(rows, codec.bos, function(ids, first, last)
    local parts = {}
    for t = first, last do parts[#parts + 1] = codec.text[ids[t]] end
    model.train_text(table.concat(parts))
  end)
end

-- Bits and bytes over the rows' scored targets (positions 2..#row whose tokens have bytes) for
-- a unigram (per token) and a byte model (per byte, within each document piece).
function M.score(rows, codec, unigram, bytes)
  local u_bits, b_bits, n_bytes = 0, 0, 0
  pieces(rows, codec.bos, function(ids, first, last)
    local parts, offset = {}, 0
    for t = first, last do parts[#parts + 1] = codec.text[ids[t]] end
    local s = table.concat(parts)
    for t = first, last do
      local n = #codec.text[ids[t]]
      if t >= 2 and n > 0 then
        u_bits = u_bits + unigram.bits(ids[t])
        b_bits = b_bits + bytes.bits_text(s, offset + 1, offset + n)
        n_bytes = n_bytes + n
      end
      offset = offset + n
    end
  end)
  return {unigram_bits = u_bits, bytes_bits = b_bits, bytes = n_bytes}
end

return M
