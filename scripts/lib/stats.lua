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

-- Per-unit differences of logs (d[i] = log a_i - log b_i) as the relative change of the
-- geometric mean, exp(mean) - 1, with its 90% bootstrap interval, and the verdict the scripts
-- report: "better" (below 1 throughout), "worse", or "no difference" when the interval holds 0.
function stats.relative_change(d)
  local mean, lo, hi = stats.mean_interval(d)
  local r = {change = math.exp(mean) - 1, low = math.exp(lo) - 1, high = math.exp(hi) - 1}
  r.verdict = r.high < 0 and "better" or r.low > 0 and "worse" or "no difference"
  r.text = string.format("%+.1f%% [%+.1f%%, %+.1f%%] %s", 100 * r.change, 100 * r.low, 100 * r.high, r.verdict)
  return r
end

-- One line of a paired comparison over windows, printed under `label` (padded to `width`): the
-- relative change with its interval from 5 windows on, the change alone below that. Returns what
-- the scripts keep in their JSON ({change, low, high, verdict, windows} or {change, windows}),
-- nil for no windows.
function stats.paired_line(label, d, width)
  if #d == 0 then return nil end
  if #d >= 5 then
    local change = stats.relative_change(d)
    print(string.format("%-" .. width .. "s %8d   %s", label, #d, change.text))
    change.text, change.windows = nil, #d
    return change
  end
  local mean = 0
  for _, v in ipairs(d) do mean = mean + v / #d end
  print(string.format("%-" .. width .. "s %8d   %+.1f%% (too few windows for an interval)", label, #d, 100 * (math.exp(mean) - 1)))
  return {change = math.exp(mean) - 1, windows = #d}
end

-- One comparison over all `windows` (keys "set/...") and then data set by data set: `change(key)`
-- gives a window's log ratio (nil leaves the window out). Prints a line each (the sets' indented)
-- and keeps them as summary["label (all)"] and summary["label (set)"].
function stats.paired_by_set(summary, label, windows, data_sets, change, width)
  for _, set in ipairs({{name = "all"}, table.unpack(data_sets)}) do
    local d = {}
    for _, key in ipairs(windows) do
      if set.name == "all" or key:find(set.name .. "/", 1, true) == 1 then
        local v = change(key)
        if v then d[#d + 1] = v end
      end
    end
    summary[label .. " (" .. set.name .. ")"] = stats.paired_line(set.name == "all" and label or ("  " .. set.name), d, width)
  end
end

return stats
