-- Training runs side by side: each run of a list in an orrery process of its own
-- (lib/train_run.lua), at most `jobs` at a time, for sweeps whose runs are independent
-- (lr_transfer.lua jobs=N: the seeds and rates a search step needs train at once, on a
-- many-core machine or sharing one GPU). A run is {model = orrery.model's table, train =
-- orrery.train's table without `model`}; each comes back as {ok = true, val_loss, final_loss}
-- or {ok = false, error = message}, what pcall(orrery.train, ...) says in this process (jobs = 1
-- trains here, in order). A loss that is not finite comes back as nil. A process that stops
-- without an answer (killed, a bad model table) is the caller's error, with its output.
local parallel = {}

-- A value as Lua source that reads back exactly (%q writes floats in hexadecimal).
local function source(v)
  local t = type(v)
  if t == "number" or t == "string" or t == "boolean" then return string.format("%q", v) end
  if t ~= "table" then error("parallel_runs: a run's settings hold a " .. t .. ", which another process cannot read", 0) end
  local parts = {}
  for k, x in pairs(v) do parts[#parts + 1] = "[" .. source(k) .. "] = " .. source(x) end
  return "{" .. table.concat(parts, ", ") .. "}"
end

local function shell_quote(text) return "'" .. text:gsub("'", "'\\''") .. "'" end

local function finite(x) return type(x) == "number" and x == x and x > -math.huge and x < math.huge end

-- One run's outcome, as lib/train_run.lua reports it: a loss that is not finite is left out (nil),
-- as JSON cannot hold it.
function parallel.outcome(ok, run)
  if not ok then return {ok = false, error = tostring(run)} end
  return {ok = true, val_loss = finite(run.val_loss) and run.val_loss or nil,
          final_loss = finite(run.final_loss) and run.final_loss or nil}
end

local function train_here(run)
  local settings = {}
  for k, v in pairs(run.train) do settings[k] = v end
  settings.model = orrery.model(run.model)
  return parallel.outcome(pcall(orrery.train, settings))
end

local function read_text(path)
  local f = io.open(path, "r")
  if not f then return "" end
  local text = f:read("a")
  f:close()
  return text
end

local batches = 0   -- names this process's files apart from an earlier process's in the same folder

-- Trains `runs` with at most `jobs` processes at a time; `dir` holds each process's settings,
-- answer and output while it runs (hidden .run-* files, removed once read, and those an earlier
-- stopped sweep left removed at its first call). Returns the outcomes in order. When a process
-- stops without an answer, the others are stopped (SIGTERM: each keeps its checkpoint) before
-- the error. A slot that frees starts the next run at once, whichever run ended. Ctrl-C in a
-- terminal reaches every process (they share its process group); a signal to this process alone
-- stops it only once the runs it waits for are done.
function parallel.train(runs, jobs, dir)
  local out = {}
  if jobs <= 1 then
    for i, run in ipairs(runs) do out[i] = train_here(run) end
    return out
  end
  if batches == 0 then os.execute("rm -f " .. shell_quote(dir) .. "/.run-*") end
  batches = batches + 1
  local program = shell_quote(orrery.program())
  local child = assert(package.searchpath("lib.train_run", package.path), "parallel_runs: lib/train_run.lua is missing")
  -- One thread each unless the caller chose: jobs processes share the machine's cores.
  local threads = "OMP_NUM_THREADS=" .. (os.getenv("OMP_NUM_THREADS") or "1")
  local running = {}
  local function forget(job)
    for _, ext in ipairs({".lua", ".json", ".log"}) do os.remove(job.base .. ext) end
  end
  local function finish(job)
    local _, how, code = job.handle:close()
    local ok_read, answer = pcall(orrery.read_json, job.base .. ".json")
    if ok_read then
      out[job.index] = answer
      forget(job)
      return
    end
    local log = read_text(job.base .. ".log")
    for _, other in ipairs(running) do
      if other.pid and other.pid > 0 then os.execute("kill -TERM " .. other.pid .. " 2>/dev/null") end
    end
    for _, other in ipairs(running) do other.handle:close(); forget(other) end
    running = {}
    error(string.format("parallel_runs: run %d (%s) stopped without an answer (%s %s); its output, kept in %s.log:\n%s",
                        job.index, runs[job.index].train.name or "unnamed", how, tostring(code), job.base, log), 0)
  end
  -- The next process to finish: whichever ends first, seen as its answer file or (Linux) as a
  -- zombie waiting to be closed; where /proc is missing, the oldest.
  local function next_done()
    while true do
      for k, job in ipairs(running) do
        local answer = io.open(job.base .. ".json", "r")
        if answer then answer:close(); return table.remove(running, k) end
      end
      for k, job in ipairs(running) do
        local stat = io.open("/proc/" .. tostring(job.pid) .. "/stat", "r")
        if not stat then return table.remove(running, 1) end
        local state = stat:read("a"):match(".*%) (%a)")  -- after the last ')': a name may hold one
        stat:close()
        if state == "Z" then return table.remove(running, k) end
      end
      -- Not os.execute: system() ignores SIGINT in this process while the sleep runs.
      io.popen("sleep 0.2"):close()
    end
  end
  for i, run in ipairs(runs) do
    local base = string.format("%s/.run-%d-%d-%d", dir, os.time(), batches, i)
    local f = assert(io.open(base .. ".lua", "w"))
    f:write("return ", source(run), "\n")
    f:close()
    -- The shell says its process id, then becomes the run (exec keeps the id): what stops it.
    local command = string.format("echo $$; exec env %s %s run %s spec=%s result=%s > %s 2>&1", threads, program,
                                  shell_quote(child), shell_quote(base .. ".lua"), shell_quote(base .. ".json"),
                                  shell_quote(base .. ".log"))
    local handle = assert(io.popen(command, "r"))
    running[#running + 1] = {index = i, base = base, handle = handle, pid = math.tointeger(tonumber(handle:read("l")))}
    if #running >= jobs then finish(next_done()) end
  end
  while #running > 0 do finish(next_done()) end
  return out
end

return parallel
