-- Lua tables as the experiment scripts compare them.
local tables = {}

-- Whether two values are equal all the way down (tables by their keys and values).
function tables.same(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b end
  for k, v in pairs(a) do if not tables.same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

return tables
