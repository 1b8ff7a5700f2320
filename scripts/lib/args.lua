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

return M
