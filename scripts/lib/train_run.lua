-- One training run for lib/parallel_runs.lua, in a process of its own: spec= names a file of Lua
-- source returning {model = orrery.model's table, train = orrery.train's table}; the run's
-- outcome ({ok, val_loss, final_loss} or {ok = false, error}) goes to result= as JSON.
local scripts = debug.getinfo(1, "S").source:match("^@(.*)/lib/[^/]*$") or "."
package.path = scripts .. "/?.lua;" .. package.path
local parallel = require("lib.parallel_runs")
local args = orrery.args{
  "One training run of lib/parallel_runs.lua, in a process of its own.",
  {"spec", "path", nil, "a file of Lua source returning {model = ..., train = ...}"},
  {"result", "string", nil, "where the run's outcome goes, as JSON"},
}
if not (args.spec and args.result) then error("lib/train_run.lua needs spec=FILE and result=FILE", 0) end
local run = dofile(args.spec)
run.train.model = orrery.model(run.model)
orrery.write_json(args.result, parallel.outcome(pcall(orrery.train, run.train)))
