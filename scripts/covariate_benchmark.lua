-- Do known-future covariates help on real series? Each forecaster is scored on the same windows
-- with and without them, and the change is reported paired window by window, with a 90%
-- bootstrap over the windows (docs/covariates.md).
--
-- The data, R's (assets/data, assets/covariates): the seat-belt series (drivers, front- and
-- rear-seat casualties) with the petrol price, the distance driven and the 1983 seat-belt law as
-- known-future covariates; New York's ozone with the temperature and the wind; two beavers' body
-- temperatures with their activity outside the retreat; Freeny's quarterly revenue with its
-- price index, income level and market potential; Box and Jenkins's sales with their leading
-- indicator; the real price of frozen orange juice with Orlando's freezing degree days (Stock and
-- Watson's, from R's AER package; assets/README.md). sets=fpp scores the dynamic-regression
-- examples of Hyndman and Athanasopoulos's textbook instead (fpp2, fpp3): Victoria's daily
-- electricity demand in 2014 with the working days and the temperature, an insurer's monthly
-- quotations with its TV advertising, US consumption's quarterly changes with those of income,
-- production, savings and unemployment; sets=all both. The windows: GIFT-Eval's
-- test windows and the rolling validation origins before them. The forecasters: seasonal naive,
-- ETS and ARIMA, each also through the in-context regression (BASELINE/regression), ARIMA also
-- with the covariates as regressors (arima/xreg, a regression with ARIMA errors), each through
-- the regression over the covariates' lags 0..regression_lags too (BASELINE/lagged-regression: a
-- leading indicator, an effect that arrives late; 0 leaves it out), and with
-- model=PATH a model: through the regression, and, if it reads variate roles, with its
-- covariates as rows (NAME) against without them (NAME/no-covariates). Several paths (the seeds
-- of one recipe) are pooled: each window's change is the mean over them of the log ratio. Last,
-- each comparison on the test windows alone, reading the covariates always and only on the data
-- sets where they helped on the validation windows (a choice the test never informs).
-- Results: runs/covariate_benchmark/covariate_benchmark.json.

local stats = require("lib.stats")
local args = orrery.args{
  "Do known-future covariates help on real series? Each forecaster scored on the same windows with and\n" ..
  "without them, the change paired window by window with a 90% bootstrap over the windows.",
  {"model", "strings", nil, "models to score beside the baselines (several: the seeds of one recipe, pooled)"},
  {"baselines", "strings", {"seasonal_naive", "ets", "arima"}, "classical forecasters scored"},
  {"regression_lags", "int", 6, "the lagged regression's covariate lags 0..N (0: leave it out)", min = 0},
  {"sets", "strings", {"r"}, "data sets or suites: r (R's seven), fpp (the textbook's three), all, or names"},
  {"runs_dir", "string", "runs", "where covariate_benchmark/ goes"},
}
local dir = args.runs_dir .. "/covariate_benchmark"
os.execute("mkdir -p '" .. dir .. "'")

-- The bundled seat-belt CSV leaves out R's `law` column (as a target it has no MASE scale); as a
-- covariate it is the law in force: 1 from February 1983 (in force from 31 January 1983).
local seatbelts = dir .. "/seatbelts.csv"
do
  local into = assert(io.open(seatbelts, "w"))
  local first = true
  for line in io.lines("assets/data/seatbelts.csv") do
    if first then
      into:write(line, ",law\n")
      first = false
    else
      local year = assert(tonumber(line:match("^([^,]+),")), "assets/data/seatbelts.csv: a row without a time: " .. line)
      into:write(line, year >= 1983 + 1 / 12 - 1e-6 and ",1\n" or ",0\n")
    end
  end
  into:close()
end

local data_sets = {
  {name = "seatbelts", data = {"csv", files = seatbelts, timestamp_format = "year", columns = "drivers,front,rear",
                               future_covariates = "PetrolPrice,kms,law"}},
  {name = "airquality", data = {"csv", files = "assets/data/airquality.csv", columns = "ozone",
                                future_covariates = "temp,wind"}},
  {name = "beaver1", data = {"csv", files = "assets/covariates/beaver1.csv", columns = "temp", future_covariates = "activ"}},
  {name = "beaver2", data = {"csv", files = "assets/covariates/beaver2.csv", columns = "temp", future_covariates = "activ"}},
  {name = "freeny", data = {"csv", files = "assets/covariates/freeny.csv", timestamp_format = "year", columns = "revenue",
                            future_covariates = "price_index,income_level,market_potential"}},
  -- No calendar: read in file order and scored as a yearly series is (a horizon of 6, no season).
  {name = "bjsales", data = {"csv", files = "assets/covariates/bjsales.csv", timestamp = "none", frequency = "A",
                             columns = "sales", future_covariates = "lead"}},
  {name = "frozen_juice", data = {"csv", files = "assets/covariates/frozen_juice.csv", timestamp_format = "year",
                                  columns = "real_price", future_covariates = "fdd"}},
  -- sets=fpp: the dynamic-regression examples of Hyndman and Athanasopoulos's textbook (fpp2, fpp3).
  {name = "elecdaily", suite = "fpp", data = {"csv", files = "assets/covariates/elecdaily.csv", columns = "demand",
                                              future_covariates = "workday,temperature"}},
  {name = "insurance", suite = "fpp", data = {"csv", files = "assets/covariates/insurance.csv", columns = "quotes",
                                              future_covariates = "tv_advert"}},
  {name = "us_change", suite = "fpp", data = {"csv", files = "assets/covariates/us_change.csv", columns = "consumption",
                                              future_covariates = "income,production,savings,unemployment"}},
}
for _, set in ipairs(data_sets) do set.suite = set.suite or "r" end
-- sets=NAME,...: score these data sets only (the windows of the others are left out); a name may
-- be a suite's, r (R's seven, the default), fpp (the textbook's three) or all.
data_sets = require("lib.args").sets(args.sets, data_sets)
local regression_lags = args.regression_lags
local baselines = args.baselines
local models, seeds = {}, {}
for _, path in ipairs(args.model or {}) do
  seeds[#seeds + 1] = "model" .. (#seeds + 1)
  models[seeds[#seeds]] = orrery.load(path)
end

-- Every window's CRPS by forecaster: scores[window key][forecaster].
local scores, names, windows = {}, {}, {}
for _, set in ipairs(data_sets) do
  for _, split in ipairs({"test", "validation"}) do
    local r = orrery.eval{models = models, data = set.data, baselines = baselines, split = split, regression_lags = regression_lags,
                          validation_windows = split == "validation" and 20 or nil, windows = true, quiet = true}
    for _, s in ipairs(r.summary) do names[s.model] = true end
    for _, w in ipairs(r.windows) do
      local key = table.concat({set.name, split, w.term, w.window}, "/")
      if not scores[key] then scores[key] = {}; windows[#windows + 1] = key end
      scores[key][w.model] = w.crps
    end
  end
end

-- The comparisons: what the covariates change for each forecaster, paired by window; for the
-- models, {with, without} of each seed, pooled.
local pairs_of = {}
for _, b in ipairs(baselines) do
  pairs_of[#pairs_of + 1] = {label = b .. "/regression vs " .. b, each = {{b .. "/regression", b}}}
  if regression_lags > 0 then
    pairs_of[#pairs_of + 1] = {label = b .. "/lagged-regression vs " .. b, each = {{b .. "/lagged-regression", b}}}
    pairs_of[#pairs_of + 1] = {label = b .. "/lagged-regression vs " .. b .. "/regression",
                               each = {{b .. "/lagged-regression", b .. "/regression"}}}
  end
  -- A baseline that takes the covariates as regressors itself (ARIMA: statsforecast's AutoARIMA with X).
  if names[b .. "/xreg"] then pairs_of[#pairs_of + 1] = {label = b .. "/xreg vs " .. b, each = {{b .. "/xreg", b}}} end
end
local function over_seeds(label, with, without)
  local each = {}
  for _, m in ipairs(seeds) do
    if names[m .. with] and names[m .. without] then each[#each + 1] = {m .. with, m .. without} end
  end
  if #each > 0 then pairs_of[#pairs_of + 1] = {label = label .. (#each > 1 and " (" .. #each .. " models)" or ""), each = each} end
end
over_seeds("model/regression vs model/no-covariates", "/regression", "/no-covariates")
over_seeds("model/lagged-regression vs model/no-covariates", "/lagged-regression", "/no-covariates")
over_seeds("model vs model/no-covariates", "", "/no-covariates")
if seeds[1] and not names[seeds[1] .. "/no-covariates"] then
  over_seeds("model/regression vs model", "/regression", "")
  over_seeds("model/lagged-regression vs model", "/lagged-regression", "")
end

local results = {windows = {}, summary = {}}
for _, key in ipairs(windows) do results.windows[#results.windows + 1] = {window = key, crps = scores[key]} end
-- Each comparison over all windows, then data set by data set (an interval needs 5 windows).
print(string.format("%-64s %8s   %s", "with covariates / without - 1 (CRPS)", "windows", "90% bootstrap over windows"))
-- A window's log ratio for one of a comparison's pairs {with, without}, nil where either is missing.
local function log_ratio(key, ab)
  local a, b = scores[key][ab[1]], scores[key][ab[2]]
  if a and b and a > 0 and b > 0 then return math.log(a / b) end
end
for _, p in ipairs(pairs_of) do
  stats.paired_by_set(results.summary, p.label, windows, data_sets, function(key)
    local sum, n = 0, 0
    for _, ab in ipairs(p.each) do
      local r = log_ratio(key, ab)
      if r then sum, n = sum + r, n + 1 end
    end
    return n == #p.each and sum / n or nil
  end, 64)
end

-- Covariates where they helped: per data set, each forecaster reads them only if they lowered
-- its CRPS on that set's validation windows (the mean log ratio below 0), and the test windows
-- alone, which the choice never sees, score it against reading them always.
results.chosen = {}
print(string.format("\n%-64s %8s   %s", "on the test windows: always / chosen on validation", "windows", "90% bootstrap over windows"))
for _, p in ipairs(pairs_of) do
  local use = {}  -- use[set][i]: whether p.each[i]'s covariates are read on that set's test windows
  for _, set in ipairs(data_sets) do
    use[set.name] = {}
    for i, ab in ipairs(p.each) do
      local sum, n = 0, 0
      for _, key in ipairs(windows) do
        local r = key:find(set.name .. "/validation/", 1, true) == 1 and log_ratio(key, ab)
        if r then sum, n = sum + r, n + 1 end
      end
      use[set.name][i] = n > 0 and sum / n < 0
    end
  end
  local always, chosen, against = {}, {}, {}
  for _, key in ipairs(windows) do
    local set, split = key:match("^([^/]+)/([^/]+)/")
    if split == "test" then
      local a, c, n = 0, 0, 0
      for i, ab in ipairs(p.each) do
        local r = log_ratio(key, ab)
        if r then a, c, n = a + r, c + (use[set][i] and r or 0), n + 1 end
      end
      if n == #p.each then
        always[#always + 1], chosen[#chosen + 1], against[#against + 1] = a / n, c / n, (c - a) / n
      end
    end
  end
  results.summary[p.label .. " (test, always)"] = stats.paired_line(p.label, always, 64)
  results.summary[p.label .. " (test, chosen)"] = stats.paired_line("  chosen on validation", chosen, 64)
  results.summary[p.label .. " (test, chosen vs always)"] = stats.paired_line("  chosen / always", against, 64)
  results.chosen[p.label] = use
end
orrery.write_json(dir .. "/covariate_benchmark.json", results)
print("results: " .. dir .. "/covariate_benchmark.json")
