-- Fine-tune a pretrained model on your own series and measure what it gained: the last test
-- windows of every series (as `orrery eval` chooses them, the GIFT-Eval way) are held out, the
-- model trains on everything before them, and both the pretrained and the tuned model are
-- scored on those windows next to the classical baselines.
--
-- PATH: a Hugging Face Toto 2.0 folder, an Orrery run folder or a model.safetensors.
-- FILE: a CSV, Parquet or Arrow file, or a glob of them. Wide: a time column and one column per
-- series; long: rows of (id, time, value). The frequency is inferred from the times unless given;
-- empty fields are missing values. Times are ISO dates unless timestamp_format says unix seconds or
-- R's fractional years.
--
-- With covariates (docs/covariates.md), the named columns are each series' covariate rows: the
-- tuned model learns role embeddings for them (the checkpoint gains them at zero, so it starts as
-- the pretrained model) and is scored with them (tuned) and without (tuned/no-covariates) on the
-- same test windows; the pretrained model, which cannot read them, is scored without. Covariates
-- named by `categorical` hold categories: each enters as one 0/1 row per category.
-- `static_covariates` names columns that hold one value per series (a store's size, or with
-- `categorical` its format): the tuned model gains a vector for each value (for each category),
-- at zero (docs/covariates.md#static-covariates), and both the training and the test read each
-- series' values. What they are worth is the difference to
-- the same fine-tuning without them (a second run); the pretrained model is scored without.
--
-- export=DIR writes the tuned model in its released layout (a Toto 2.0 model: a Hugging Face folder
-- that Python's toto-2 package loads with Toto2Model.from_pretrained(DIR)).
--
-- How long to fine-tune is chosen, not fixed (select=true, the default): fine-tunings of none, a
-- ninth, a third and all of `steps` train on everything before the validation windows (the
-- K windows a series just before the test, K = the test's count unless given); of the lengths
-- that beat none there window by window (a 90% bootstrap interval below 0), the one with the
-- lowest CRPS is run on everything before the test (scripts/lib/finetune.lua), and when none
-- does, the tuned model is the pretrained one. A small data set is harmed by a long fine-tuning
-- that a large one gains from. The choice goes to the run's selection.json; select=false runs
-- `steps` as given.

local args = orrery.args{
  "Fine-tune a pretrained model on your own series and measure what it gained: the last test windows of\n" ..
  "every series are held out, the model trains on everything before them (for a length chosen on the\n" ..
  "validation windows), and the pretrained and the tuned model are scored there beside the baselines.",
  {"model", "path", nil, "the pretrained model: a Hugging Face Toto 2.0 folder, a run folder or a weights file (required)"},
  {"data", "string", nil, "the series: a CSV, Parquet or Arrow file, or a glob of them (required)"},
  {"layout", "string", nil, "wide (a time column, a column a series) or long (id, time, value rows)"},
  {"frequency", "string", nil, "the series' frequency (default: inferred from the times)"},
  {"timestamp_format", "string", nil, "iso, unix or year (default iso)"},
  {"steps", "int", 300, "fine-tuning steps (the longest length tried with select=true)", min = 1},
  {"lr", "number", 3e-4, "fine-tuning learning rate, above 0", min = 0},
  {"batch", "int", 16, "series a step", min = 1},
  {"context", "int", 512, "steps a training series", min = 1},
  {"select", "bool", true, "choose the length on the validation windows (false: train steps as given)"},
  {"validation_windows", "int", nil, "validation windows a series (default: as many as the test has)", min = 1},
  {"past_covariates", "string", nil, "columns known only up to the forecast's start, comma-separated"},
  {"future_covariates", "string", nil, "columns known over the horizon too, comma-separated"},
  {"categorical", "string", nil, "covariate columns that hold categories, comma-separated"},
  {"static_covariates", "string", nil, "columns with one value a series, comma-separated"},
  {"device", "string", "cpu", "where to train: cpu or cuda"},
  {"name", "string", "finetune", "the tuned run's folder, runs/<name> (a fresh one if it exists)"},
  {"export", "string", nil, "also write the tuned model here in its released layout (Hugging Face Toto 2.0), a new or empty folder"},
}
if not args.model or not args.data then error("finetune.lua: give model=PATH and data=FILE (see --help)", 0) end
local tune = require("lib.finetune")
local device = args.device
local steps, batch, context = args.steps, args.batch, args.context
local lr = args.lr
if lr <= 0 then error("lr must be above 0, got " .. lr, 0) end
local choose = args.select
local validation_windows = args.validation_windows
if validation_windows and not choose then error("validation_windows needs select=true (it is where the length is chosen)", 0) end

-- One reading of the files serves training and the test alike: the same plugin and options.
local format = "csv"
for _, ext in ipairs{"parquet", "arrow", "feather", "ipc"} do
  if args.data:lower():match("%." .. ext .. "$") then format = "parquet" end
end
local function series(extra)
  local choice = {format, files = args.data, layout = args.layout, frequency = args.frequency,
                  timestamp_format = args.timestamp_format,
                  past_covariates = args.past_covariates, future_covariates = args.future_covariates,
                  categorical = args.categorical, static_covariates = args.static_covariates}
  for k, v in pairs(extra or {}) do choice[k] = v end
  return choice
end

local covariates = args.past_covariates ~= nil or args.future_covariates ~= nil
if args.export and (covariates or args.static_covariates) then
  error("export=" .. args.export .. ": the released Toto 2.0 layout has no covariate embeddings; fine-tune without " ..
        "covariates to export, or keep the tuned model in its run folder", 0)
end
local pretrained = orrery.load(args.model, device)
-- The model's static covariates as the data names them: a categorical column's as "column=category".
local statics = args.static_covariates and orrery.data(series()):describe().static_covariates or nil
local gains = {variate_roles = covariates or nil, static_covariates = statics}
local tuned = orrery.load(args.model, device, next(gains) and gains or nil)

-- Where the test windows start: orrery.eval reports them per data set.
local probe = orrery.eval{data = series(), baselines = {"seasonal_naive"}, quiet = true}
if #probe.configurations > 1 then
  error(args.data .. " holds series at several frequencies; fine-tune on one frequency at a time", 0)
end
local test = probe.configurations[1]
local held_out = test.windows * test.horizon
print(string.format("%s: %d series at %s; the last %d steps of each (%d window(s) of %d) are held out for the test",
                    args.data, test.items // test.windows, test.frequency, held_out, test.windows, test.horizon))
if covariates then
  local about = orrery.data(series()):describe()
  print(string.format("covariates: %d past-only and %d known-future column(s)%s; up to %d rows a series, targets first",
                      about.past_covariates, about.future_covariates,
                      args.categorical and (", one row per category of " .. args.categorical) or "", about.variates))
end
if statics then
  print("static covariates: " .. table.concat(statics, ", ") ..
        " (one value a series), learned from zero by the tuned model")
end

local recipe = {steps = steps, lr = lr, batch = batch, context = context, name = args.name,
                log_every = 25}
local choice
if choose then
  choice = tune.choose_steps{recipe = recipe, source = series, test = test, untrained = tuned,
                             validation_windows = validation_windows or test.windows,
                             load = function() return orrery.load(args.model, device, next(gains) and gains or nil) end}
  recipe.steps = choice.steps
end
local run_dir
if recipe.steps > 0 then
  run_dir = tune.train(tuned, series{exclude_last = held_out}, recipe).run_dir
else
  -- Nothing to train: the tuned model is the pretrained one (its new embeddings at zero), kept
  -- in a fresh folder of its own so that no earlier run's files are touched.
  run_dir = tune.fresh_folder("runs/" .. recipe.name)
  print("no length of fine-tuning beat the pretrained model on the validation windows, so the tuned weights are " ..
        "the pretrained ones" .. (next(gains) and " with the new embeddings at zero (tuned/no-covariates is the " ..
        "pretrained model)" or "") .. "; select=false fine-tunes for steps= regardless")
end
tuned:save(run_dir .. "/model.safetensors")
if choice then orrery.write_json(run_dir .. "/selection.json", choice) end
-- Back out to the released layout, for Python's toto-2 package (Toto2Model.from_pretrained).
if args.export then
  local ok, err = pcall(tuned.export, tuned, args.export)
  if not ok then
    error("export=" .. args.export .. ": " .. tostring(err) .. "; the tuned weights are kept in " .. run_dir ..
          "/model.safetensors (orrery export --model " .. run_dir .. " --out DIR writes them)", 0)
  end
  print("exported the tuned model to " .. args.export .. " (Hugging Face Toto 2.0: config.json, model.safetensors)")
end

local eval = orrery.eval{
  models  = {pretrained = pretrained, tuned = tuned},
  data    = series(),
  context = context,
  out     = run_dir,
}
local function find(name)
  for _, s in ipairs(eval.summary) do if s.model == name then return s end end
end
local a, b = find("pretrained"), find("tuned")
print(string.format("\nfine-tuning moved MASE %.3f -> %.3f and CRPS %.3f -> %.3f (ratios to seasonal naive). Run: %s",
                    a.mase, b.mase, a.crps, b.crps, run_dir))
local c = find("tuned/no-covariates")
if c then
  print(string.format("the tuned model without its covariates: MASE %.3f, CRPS %.3f", c.mase, c.crps))
end
