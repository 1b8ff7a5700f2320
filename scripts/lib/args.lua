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

-- A whole-number argument of at least `least` (absent: `default`); a fraction, a word, a smaller
-- number or one past Lua's integers (1e40) is refused with the name and what was given.
function M.whole(args, name, default, least)
  local v = args[name] and tonumber(args[name]) or default
  if args[name] and not tonumber(args[name]) or not math.tointeger(v) or v < least then
    error(name .. " must be a whole number, at least " .. least .. ", got '" .. tostring(args[name]) .. "'", 0)
  end
  return math.tointeger(v)
end

-- A positive, finite number argument (absent: `default`); a word, zero or less, or infinity is
-- refused with the name.
function M.positive(args, name, default)
  local v = args[name] == nil and default or tonumber(args[name])
  if not (v and v > 0 and v < math.huge) then error(name .. " must be a positive number, got '" .. tostring(args[name]) .. "'", 0) end
  return v
end

-- sets=NAME,...: which of `data_sets` (each {name = , suite = }) a script scores, in their order
-- of mention, each once; a name may also be a suite's (every set of that `suite`) or `all`.
-- Absent: `default`. An unknown name or an empty list is refused, naming what is known.
function M.sets(s, data_sets, default)
  local by_name, suites, known, chosen, seen = {}, {}, {}, {}, {}
  for _, set in ipairs(data_sets) do
    by_name[set.name], known[#known + 1] = set, set.name
    if set.suite and not suites[set.suite] then suites[set.suite], suites[#suites + 1] = true, set.suite end
  end
  suites.all, suites[#suites + 1] = true, "all"
  local function choose(set)
    if not seen[set] then chosen[#chosen + 1], seen[set] = set, true end
  end
  for name in tostring(s or default):gmatch("[^,]+") do
    if by_name[name] then
      choose(by_name[name])
    elseif suites[name] then
      for _, set in ipairs(data_sets) do if name == "all" or set.suite == name then choose(set) end end
    else
      error("sets: unknown data set '" .. name .. "' (known: " .. table.concat(known, ", ") .. "; or " ..
            table.concat(suites, ", ") .. ")", 0)
    end
  end
  if #chosen == 0 then error("sets: name at least one data set, got '" .. tostring(s) .. "'", 0) end
  return chosen
end

return M
