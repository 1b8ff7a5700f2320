-- Choosing data sets by name, for the benchmark scripts (their arguments themselves are declared
-- with orrery.args, which types and checks them).
local M = {}

-- sets=NAME,...: which of `data_sets` (each {name = , suite = }) a script scores, in their order
-- of mention, each once; a name may also be a suite's (every set of that `suite`) or `all`.
-- `names` is the list orrery.args read. An unknown name or an empty list is refused, naming what
-- is known.
function M.sets(names, data_sets)
  local by_name, suites, known, chosen, seen = {}, {}, {}, {}, {}
  for _, set in ipairs(data_sets) do
    by_name[set.name], known[#known + 1] = set, set.name
    if set.suite and not suites[set.suite] then suites[set.suite], suites[#suites + 1] = true, set.suite end
  end
  suites.all, suites[#suites + 1] = true, "all"
  local function choose(set)
    if not seen[set] then chosen[#chosen + 1], seen[set] = set, true end
  end
  for _, name in ipairs(names) do
    if by_name[name] then
      choose(by_name[name])
    elseif suites[name] then
      for _, set in ipairs(data_sets) do if name == "all" or set.suite == name then choose(set) end end
    else
      error("sets: unknown data set '" .. name .. "' (known: " .. table.concat(known, ", ") .. "; or " ..
            table.concat(suites, ", ") .. ")", 0)
    end
  end
  if #chosen == 0 then error("sets: name at least one data set", 0) end
  return chosen
end

return M
