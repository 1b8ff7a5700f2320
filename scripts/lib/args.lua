-- Command-line arguments as the experiment scripts read them (`name=a,b,c`).
local M = {}

-- A comma-separated argument as a list (numbers where an item reads as one), or `default`
-- when it was not given.
function M.list(s, default)
  if s == nil then return default end
  local out = {}
  for item in tostring(s):gmatch("[^,]+") do out[#out + 1] = tonumber(item) or item end
  return out
end

-- The benchmark a script scores on: data= (or `default`), refused before any work starts when
-- it is not there, so that a long training never ends in "no such file".
function M.benchmark(s, default)
  local path = s or default
  local f = io.open(path, "r")
  if not f then error("data=" .. path .. ": no such benchmark folder or file", 0) end
  f:close()
  return path
end

-- A switch argument name=true|false: true or false (absent: `default`, false unless given);
-- anything else is refused rather than read as either.
function M.switch(args, name, default)
  if args[name] ~= nil and type(args[name]) ~= "boolean" then
    error(name .. " must be true or false, got '" .. tostring(args[name]) .. "'", 0)
  end
  if args[name] == nil then return default == true end
  return args[name]
end

-- A whole-number argument of at least `least` (absent: `default`); a fraction, a word or a
-- smaller number is refused with the name and what was given.
function M.whole(args, name, default, least)
  local v = args[name] and tonumber(args[name]) or default
  if args[name] and not tonumber(args[name]) or v ~= math.floor(v) or v < least then
    error(name .. " must be a whole number, at least " .. least .. ", got '" .. tostring(args[name]) .. "'", 0)
  end
  return v
end

return M
