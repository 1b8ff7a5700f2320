-- Paired comparisons as the experiment scripts report them.
local stats = {}

-- The mean of x (per-unit differences: seeds, configurations) and a 90% bootstrap interval of
-- it (orrery.bootstrap: deterministic, so a rerun prints the same interval).
function stats.mean_interval(x, resamples)
  local function mean(picks) local t = 0 for _, i in ipairs(picks) do t = t + x[i] end return t / #picks end
  local all = {}
  for i = 1, #x do all[i] = i end
  local boot = orrery.bootstrap{n = #x, statistic = mean, resamples = resamples or 2000}
  return mean(all), boot.lo, boot.hi
end

return stats
