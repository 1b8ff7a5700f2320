#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "orrery/host/script_args.h"
#include "support.h"

namespace {
using test::orrery_cmd;

// Writes `body` to DIR/NAME and runs `orrery run DIR/NAME ARGS`.
test::CommandResult run_script(const std::string& dir, const std::string& name,
                               const std::string& body, const std::string& args = "") {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << body;
  return test::run_command(orrery_cmd("run " + path + (args.empty() ? "" : " " + args)));
}
}  // namespace

TEST_CASE("a script error reports script.lua:LINE and a non-zero exit") {
  auto dir = test::temp_dir("lua-error");
  auto r = run_script(dir, "broken.lua", "local x = 1\nlocal y = 2\nerror('boom')\n");
  CHECK(r.status == 1);
  CHECK(r.output.find("broken.lua:3: boom") != std::string::npos);
}

TEST_CASE("an unknown plugin option names the option, the plugin and the script line") {
  auto dir = test::temp_dir("lua-option");
  auto r = run_script(dir, "typo.lua",
                     "-- a typo in an option\n"
                     "local m = orrery.model{arch = {\"toto2\", d_modle = 64}}\n");
  CHECK(r.status == 1);
  INFO(r.output);
  CHECK(r.output.find("typo.lua:2: unknown option 'd_modle' for architecture plugin 'toto2'") != std::string::npos);
  CHECK(r.output.find("did you mean 'd_model'") != std::string::npos);
}

TEST_CASE("an unknown plugin name lists the available ones from Lua") {
  auto dir = test::temp_dir("lua-plugin");
  auto r = run_script(dir, "p.lua", "orrery.model{arch = 'transformerx'}\n");
  CHECK(r.status == 1);
  CHECK(r.output.find("p.lua:1: unknown architecture plugin 'transformerx'; available: gpt, mlp, toto2") != std::string::npos);
}

TEST_CASE("key=value pairs reach the script as a table with numbers converted") {
  auto dir = test::temp_dir("lua-args");
  auto r = run_script(dir, "a.lua",
                     "local a = ...\n"
                     "assert(a == args)\n"
                     "assert(args.steps == 5 and math.type(args.steps) == 'integer', 'steps')\n"
                     "assert(args.lr == 0.5 and args.name == 'x' and args.fast == true, 'others')\n"
                     "print('ok')\n", " steps=5 lr=0.5 name=x fast=true");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("ok") != std::string::npos);
}

// orrery.args: a declaration types and checks the command line, and prints --help.
const char* kDeclared = R"(local args, given = orrery.args{
  "Trains nothing; prints its arguments.",
  {"steps", "int", 300, "training steps", min = 1},
  {"lr", "number", 2e-3, "learning rate", min = 0},
  {"widths", "ints", {64, 128}, "widths", min = 8},
  {"rates", "numbers", nil, "rates"},
  {"params", "strings", {"sp", "umup"}, "parametrisations"},
  {"optimizer", "string", "adamw", "optimizer", choices = {"adamw", "normuon"}},
  {"fast", "bool", false, "a switch"},
  {"data", "path", nil, "a file"},
}
print(string.format("steps=%s:%s lr=%g widths=%s params=%s optimizer=%s fast=%s rates=%s data=%s given=%s",
                    args.steps, math.type(args.steps), args.lr, table.concat(args.widths, "/"),
                    table.concat(args.params, "/"), args.optimizer, tostring(args.fast), tostring(args.rates),
                    tostring(args.data), tostring(given.steps)))
orrery.experiment_dir("work", ".")  -- work: a folder that --help must never make
)";

// The parser itself, without a process: every refusal names the script and the argument.
TEST_CASE("parse_script_args types, checks and refuses the command line's name=value pairs") {
  orrery::ScriptArgs d;
  d.script = "x.lua";
  d.about = "What x does.";
  d.schema.add({"steps", "int", 300, "training steps", 1.0, {}, {}, {}})
      .add({"lr", "number", 2e-3, "learning rate", 0.0, {}, {}, {}})
      .add({"widths", "int_list", orrery::Json::array({64, 128}), "widths", 8.0, {}, {}, {}})
      .add({"params", "strings", orrery::Json::array({"sp"}), "parametrisations", {}, {}, {}, {}})
      .add({"optimizer", "string", "adamw", "optimizer", {}, {}, {"adamw", "normuon"}, {}})
      .add({"fast", "bool", false, "a switch", {}, {}, {}, {}})
      .add({"data", "path", nullptr, "a file", {}, {}, {}, {}});
  const orrery::Json v = orrery::parse_script_args(d, {{"steps", "1e3"}, {"widths", "8,16"}, {"fast", "true"}});
  CHECK(v["steps"] == 1000);
  CHECK(v["steps"].is_number_integer());
  CHECK(v["lr"] == 2e-3);
  CHECK(v["widths"] == orrery::Json::array({8, 16}));
  CHECK(v["fast"] == true);
  CHECK(v["data"].is_null());
  auto refused = [&](std::map<std::string, std::string> given, const std::string& message) {
    INFO(given.begin()->first << "=" << given.begin()->second);
    CHECK_THROWS_WITH(orrery::parse_script_args(d, given), Catch::Contains(message));
  };
  refused({{"stpes", "10"}}, "x.lua: unknown argument 'stpes' (did you mean 'steps'?); its arguments are steps, lr, widths, "
                             "params, optimizer, fast, data (see orrery run x.lua --help)");
  refused({{"steps", "4OO"}}, "x.lua: argument steps=4OO: \"4OO\" is not a whole number (see orrery run x.lua --help)");
  refused({{"steps", "-5"}}, "x.lua: argument 'steps' of this script must be >= 1, got number -5");
  refused({{"steps", "inf"}}, "argument steps=inf: \"inf\" is not a whole number");
  refused({{"lr", "1e999"}}, "argument lr=1e999: \"1e999\" is not a finite number");
  refused({{"widths", "abc"}}, "argument widths=abc: \"abc\" is not a whole number");
  refused({{"widths", "64,4"}}, "must be a list of numbers each >= 8, got array [64,4]");
  refused({{"optimizer", "sgd"}}, "must be one of adamw, normuon, got the string \"sgd\"");
  refused({{"fast", "1"}}, "argument fast=1: expected true or false");
  refused({{"params", "sp,"}}, "argument params=sp,: an empty item");
  refused({{"data", "/nowhere/x.csv"}}, "argument data=/nowhere/x.csv: no such file or folder");
  const std::string usage = orrery::script_usage(d);
  CHECK_THAT(usage, Catch::StartsWith("usage: orrery run x.lua [--resume] [name=value ...]\n\nWhat x does.\n"));
  CHECK_THAT(usage, Catch::Contains("  steps=300                 training steps [a whole number, at least 1]\n"));
  CHECK_THAT(usage, Catch::Contains("  widths=64,128             widths [whole numbers, comma-separated, at least 8]\n"));
  CHECK_THAT(usage, Catch::Contains("  optimizer=adamw           optimizer [one of adamw, normuon]\n"));
}

TEST_CASE("orrery.args types the command line's values and fills the defaults") {
  auto dir = test::temp_dir("lua-declared");
  auto r = run_script(dir, "d.lua", kDeclared);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("steps=300:integer lr=0.002 widths=64/128 params=sp/umup optimizer=adamw fast=false rates=nil "
                      "data=nil given=nil") != std::string::npos);
  std::ofstream(dir + "/in.csv") << "x\n";
  r = run_script(dir, "d.lua", kDeclared, "steps=1e3 lr=0.5 widths=8,16,32 rates=0.5,-1 params=mup optimizer=normuon "
                                          "fast=true data=" + dir + "/in.csv");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("steps=1000:integer lr=0.5 widths=8/16/32 params=mup optimizer=normuon fast=true") != std::string::npos);
  CHECK(r.output.find("given=true") != std::string::npos);
}

TEST_CASE("orrery.args refuses a typo, a malformed or out-of-range value and a missing path before any work", "[slow]") {
  auto dir = test::temp_dir("lua-declared-bad");
  const std::string script = dir + "/d.lua";
  for (const auto& [given, message] : std::vector<std::pair<std::string, std::string>>{
           {"stpes=10", script + ": unknown argument 'stpes' (did you mean 'steps'?); its arguments are steps, lr, widths, "
                                  "rates, params, optimizer, fast, data (see orrery run " + script + " --help)"},
           {"steps=4OO", script + ": argument steps=4OO: \"4OO\" is not a whole number"},
           {"steps=-5", script + ": argument 'steps' of this script must be >= 1, got number -5"},
           {"steps=2.5", "argument steps=2.5: \"2.5\" is not a whole number"},
           {"steps=1e40", "argument steps=1e40: \"1e40\" is not a whole number"},
           {"lr=abc", "argument lr=abc: \"abc\" is not a finite number"},
           {"lr=nan", "argument lr=nan: \"nan\" is not a finite number"},
           {"widths=abc", "argument widths=abc: \"abc\" is not a whole number"},
           {"widths=64,,128", "argument widths=64,,128: an empty item; expected whole numbers, comma-separated"},
           {"widths=64,4", "argument 'widths' of this script must be a list of numbers each >= 8, got array [64,4]"},
           {"optimizer=sgd", "argument 'optimizer' of this script must be one of adamw, normuon, got the string \"sgd\""},
           {"fast=yes", "argument fast=yes: expected true or false"},
           {"steps=", "argument steps=: no value; expected a whole number"},
           {"data=nowhere.csv", "argument data=nowhere.csv: no such file or folder"}}) {
    auto r = run_script(dir, "d.lua", kDeclared, given);
    INFO(given << "\n" << r.output);
    CHECK(r.status == 1);
    CHECK(r.output.find(message) != std::string::npos);
    CHECK(r.output.find("stack traceback") == std::string::npos);  // the command line's mistake, not the script's
    CHECK(!std::filesystem::exists(dir + "/work"));
  }
}

TEST_CASE("orrery run SCRIPT --help prints the declaration and starts no work", "[slow]") {
  auto dir = test::temp_dir("lua-declared-help");
  auto r = run_script(dir, "d.lua", kDeclared, "--help");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("usage: orrery run " + dir + "/d.lua [--resume] [name=value ...]") != std::string::npos);
  CHECK(r.output.find("Trains nothing; prints its arguments.") != std::string::npos);
  CHECK(r.output.find("  steps=300") != std::string::npos);
  CHECK(r.output.find("training steps [a whole number, at least 1]") != std::string::npos);
  CHECK(r.output.find("  widths=64,128") != std::string::npos);
  CHECK(r.output.find("[one of adamw, normuon]") != std::string::npos);
  CHECK(r.output.find("steps=300:integer") == std::string::npos);  // the script stopped at its declaration
  CHECK(!std::filesystem::exists(dir + "/work"));
  // A script that calls another orrery function before declaring anything is stopped there.
  r = run_script(dir, "u.lua", "orrery.experiment_dir('work', '.')\n", "--help");
  CHECK(r.status == 1);
  CHECK(r.output.find("the script calls orrery.experiment_dir before declaring its arguments with orrery.args") !=
        std::string::npos);
  CHECK(!std::filesystem::exists(dir + "/work"));
  // Every script in scripts/ declares its arguments, answers --help, and refuses a misspelt
  // argument and a malformed seed before any work (in a folder of its own, where no run can start).
  for (const auto& e : std::filesystem::directory_iterator(std::string(ORRERY_SOURCE_DIR) + "/scripts")) {
    if (e.path().extension() != ".lua") continue;
    auto h = test::run_command(orrery_cmd("run " + e.path().string() + " --help"));
    INFO(e.path() << "\n" << h.output);
    CHECK(h.status == 0);
    CHECK(h.output.find("arguments (default after =):") != std::string::npos);
    auto typo = test::run_command("cd '" + dir + "' && " + orrery_cmd("run " + e.path().string() + " stpes=10"));
    INFO(typo.output);
    CHECK(typo.status == 1);
    CHECK(typo.output.find("unknown argument 'stpes'") != std::string::npos);
    if (h.output.find("\n  seed=") != std::string::npos) {
      auto seed = test::run_command("cd '" + dir + "' && " + orrery_cmd("run " + e.path().string() + " seed=abc"));
      INFO(seed.output);
      CHECK(seed.status == 1);
      CHECK(seed.output.find("argument seed=abc: \"abc\" is not a whole number") != std::string::npos);
    }
  }
  CHECK(!std::filesystem::exists(dir + "/runs"));  // no script started a run
}

TEST_CASE("orrery.args refuses a declaration that cannot be right", "[slow]") {
  auto dir = test::temp_dir("lua-declared-wrong");
  for (const auto& [decl, message] : std::vector<std::pair<std::string, std::string>>{
           {"{\"steps\", \"int\", 3, \"a\"}, {\"steps\", \"int\", 3, \"b\"}", "argument 'steps' is declared twice"},
           {"{\"steps\", \"integer\", 3, \"a\"}", "type \"integer\" is not one of int, number, bool, string, path, ints"},
           {"{\"steps\", \"int\", 3}", "argument 'steps' needs one line of help (its fourth item)"},
           {"{\"steps\", \"int\", 0, \"a\", min = 1}", "argument 'steps' of orrery.args (a default) must be >= 1, got number 0"},
           {"{\"steps\", \"int\", 2.5, \"a\"}", "must be an integer, got number 2.5"},
           {"{\"my steps\", \"int\", 3, \"a\"}", "argument name \"my steps\" is not a name"},
           {"{\"steps\", \"int\", 3, \"a\", mx = 4}", "orrery.args: unknown field 'mx' (did you mean 'max'?); its fields are: min, max, choices"},
           {"{\"steps\", \"int\", 3, \"a\", choices = {\"x\"}}", "choices are for a string argument"}}) {
    auto r = run_script(dir, "w.lua", "orrery.args{" + decl + "}\n");
    INFO(decl << "\n" << r.output);
    CHECK(r.status == 1);
    CHECK(r.output.find(message) != std::string::npos);
  }
}

TEST_CASE("a script trains, forecasts and leaves a run directory") {
  auto dir = test::temp_dir("lua-train");
  auto r = run_script(dir, "t.lua", R"(
local m = orrery.model{arch = {"toto2", d_model = 32, num_layers = 1, num_heads = 2}, seed = 1}
local seen = 0
local r = orrery.train{model = m, steps = 6, batch_size = 4, context_length = 64, log_every = 2,
                       name = "t", runs_dir = args.runs, every = 2,
                       on_step = function(ev) seen = seen + 1 end}
assert(seen == 3, "callback count " .. seen)
local f = m:forecast{values = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, horizon = 3}
assert(#f.median == 3 and #f.quantiles == 9 and #f.levels == 9)
-- A context ensemble: the mean of the forecasts from the last 4 steps and from all 10.
local last4 = m:forecast{values = {7, 8, 9, 10}, horizon = 3}
local both = m:forecast{values = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, horizon = 3, contexts = {4, 10}}
assert(math.abs(both.median[2] - (f.median[2] + last4.median[2]) / 2) < 1e-9, "ensemble median " .. both.median[2])
local ok, err = pcall(m.forecast, m, {values = {1, 2, 3}, horizon = 3, contexts = {4, 0.5}})
assert(not ok and tostring(err):find("model:forecast: contexts%[2%] must be a whole number"), tostring(err))
assert(type(r.val_loss) == "number" and r.val_loss > 0, "val_loss " .. tostring(r.val_loss))
print("run_dir=" .. r.run_dir)
)", "runs=" + dir + "/runs");
  INFO(r.output);
  REQUIRE(r.status == 0);
  for (auto f : {"config.json", "metrics.jsonl", "summary.json"})
    CHECK(std::ifstream(dir + "/runs/t/" + f).good());
  // config.json lists the parametrisation's factors per kind of parameter: every parameter
  // counted once, and the stack's residual weights.
  const auto config = orrery::Json::parse(test::read_text(dir + "/runs/t/config.json"));
  REQUIRE(config.contains("scales"));
  int64_t tensors = 0;
  for (const auto& row : config["scales"]["parameters"]) {
    CHECK(row.contains("lr_adam"));
    CHECK(row.contains("eps"));
    tensors += row["tensors"].get<int64_t>();
  }
  CHECK(tensors == static_cast<int64_t>(config["routing"][0]["tensors"]));
  CHECK(config["scales"]["residual"]["layers"] == 1);
  std::ifstream metrics(dir + "/runs/t/metrics.jsonl");
  std::string events;
  for (std::string line; std::getline(metrics, line);) {
    auto ev = orrery::Json::parse(line);
    REQUIRE(ev.contains("event"));
    events += ev["event"].get<std::string>() + " ";
  }
  // Validation at the last step by default, after the final checkpoint (on by default: every
  // 30 minutes, on Ctrl-C and at the end).
  CHECK(events == "train train train checkpoint val end ");
  CHECK(std::ifstream(dir + "/runs/t/forecasts.jsonl").good());

  // A second run with the same name never overwrites the first.
  auto again = test::run_command(orrery_cmd("run " + dir + "/t.lua runs=" + dir + "/runs"));
  CHECK(again.status == 0);
  CHECK(again.output.find("run_dir=" + dir + "/runs/t-1") != std::string::npos);
}

TEST_CASE("a run records validation losses and forecast snapshots on held-out data") {
  auto dir = test::temp_dir("lua-val");
  auto r = run_script(dir, "v.lua", R"lua(
local m = orrery.model{arch = {"toto2", d_model = 16, num_layers = 1, num_heads = 1}, seed = 2}
local function events(run_dir, file)
  local out = {}
  for line in io.lines(run_dir .. "/" .. file) do
    out[#out + 1] = line:match('"event":"(%a+)"') .. "@" .. (line:match('"step":(%d+)') or "")
  end
  return table.concat(out, " ")
end
local a = orrery.train{model = m, steps = 20, batch_size = 2, context_length = 64, log_every = 5,
                       val_every = 10, name = "a", runs_dir = args.runs, quiet = true}
print("a: " .. events(a.run_dir, "metrics.jsonl") .. " | " .. events(a.run_dir, "forecasts.jsonl"))
local b = orrery.train{model = m, data = orrery.data{"synthetic", variates = 2}, steps = 4,
                       batch_size = 2, context_length = 64, log_every = 2, val_batches = 0,
                       forecast_series = 1, name = "b", runs_dir = args.runs, quiet = true}
print("b: " .. events(b.run_dir, "metrics.jsonl") .. " | " .. events(b.run_dir, "forecasts.jsonl"))
)lua", "runs=" + dir + "/runs");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("a: train@5 train@10 val@10 train@15 train@20 val@20 checkpoint@20 end@ | forecast@10 forecast@20") !=
        std::string::npos);
  // A data object: the held-out source is made from its plugin choice; no validation batches.
  CHECK(r.output.find("b: train@2 train@4 checkpoint@4 end@ | forecast@4") != std::string::npos);
}

TEST_CASE("an error inside a training callback points at the callback's line") {
  auto dir = test::temp_dir("lua-callback");
  auto r = run_script(dir, "cb.lua",
                     "local m = orrery.model{arch = {'toto2', d_model = 16, num_layers = 1, num_heads = 1}}\n"
                     "orrery.train{model = m, steps = 2, batch_size = 2, context_length = 64, log_every = 1,\n"
                     "  runs_dir = args.runs, quiet = true, on_step = function(ev)\n"
                     "    error('stop here')\n"
                     "  end}\n", "runs=" + dir + "/runs");
  CHECK(r.status == 1);
  CHECK(r.output.find("cb.lua:4: stop here") != std::string::npos);
}

TEST_CASE("the REPL prints expressions, continues multi-line input and survives errors") {
  auto dir = test::temp_dir("repl");
  std::ofstream(dir + "/in.txt") << "1 + 2\n=type(orrery.train)\nfunction f(x)\nreturn x * 10\nend\nf(4)\nerror('x')\nprint('still here')\n";
  auto r = test::run_command("HOME=" + dir + " " + orrery_cmd("repl < " + dir + "/in.txt"));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("\n3\n") != std::string::npos);
  CHECK(r.output.find("\n\"function\"\n") != std::string::npos);
  CHECK(r.output.find("\n40\n") != std::string::npos);
  CHECK(r.output.find("stdin:1: x") != std::string::npos);
  CHECK(r.output.find("still here") != std::string::npos);
  CHECK(std::ifstream(dir + "/.orrery_history").good());
}

TEST_CASE("orrery plugins lists every plugin, as a table and as JSON") {
  auto table = test::run_command(orrery_cmd("plugins"));
  CHECK(table.status == 0);
  for (auto name : {"toto2", "mlp", "gpt", "quantile", "point", "studentt_mixture", "categorical", "adamw", "sgd",
                    "muon", "normuon", "dion2", "sp", "mup", "umup", "synthetic", "observability", "csv", "text"})
    CHECK(table.output.find(name) != std::string::npos);
  auto json = test::run_command(orrery_cmd("plugins --json"));
  REQUIRE(json.status == 0);
  auto arr = orrery::Json::parse(json.output);
  // parquet is built where Arrow is found (the pyarrow wheel beside torch; see cmake/setup.sh).
  const bool parquet = table.output.find("parquet") != std::string::npos;
  CHECK(arr.size() == 19u + parquet);
  for (const auto& p : arr)
    for (auto key : {"kind", "name", "version", "description", "options"}) CHECK(p.contains(key));
}

TEST_CASE("every command answers --help") {
  for (auto cmd : {"--help", "plugins --help", "run --help", "repl --help", "forecast --help"}) {
    auto r = test::run_command(orrery_cmd(cmd));
    INFO(cmd);
    CHECK(r.status == 0);
    CHECK(r.output.find("usage: orrery") != std::string::npos);
  }
}

TEST_CASE("Ctrl-C in the REPL interrupts a running call and keeps the REPL") {
  // A real terminal: tmux runs the REPL, send-keys types, capture-pane reads the screen.
  auto dir = test::temp_dir("repl-ctrl-c");
  const std::string session = "orrery-test-" + std::to_string(::getpid());
  const std::string tmux = "tmux -L " + session + " ";
  auto keys = [&](const std::string& k) { return test::run_command(tmux + "send-keys -t t " + k); };
  REQUIRE(test::run_command(tmux + "new-session -d -s t -x 160 -y 40 \"HOME=" + dir + " '" +
                            ORRERY_BIN + "' repl\"").status == 0);
  auto screen = [&] { return test::run_command(tmux + "capture-pane -p -t t").output; };
  auto wait_for = [&](const std::string& text) {
    for (int i = 0; i < 100; ++i) {
      if (screen().find(text) != std::string::npos) return true;
      ::usleep(100000);
    }
    return false;
  };
  REQUIRE(wait_for("orrery>"));
  keys("'x = orrery.tr' Tab");  // completion from the live API table
  CHECK(wait_for("x = orrery.train"));
  keys("C-u");
  keys("'while true do end' Enter");
  ::usleep(500000);
  keys("C-c");
  CHECK(wait_for("interrupted"));
  keys("'m = orrery.model{arch={\"toto2\", d_model=16, num_layers=1, num_heads=1}}' Enter");
  keys("'r = orrery.train{model=m, steps=1000000, batch_size=2, context_length=64, quiet=true, runs_dir=\"" +
       dir + "/runs\"}' Enter");
  ::usleep(1500000);
  keys("C-c");
  keys("'print(\"alive\", r == nil)' Enter");  // r stays nil: the call was interrupted
  CHECK(wait_for("alive   true"));
  std::ifstream summary(dir + "/runs/run/summary.json");
  REQUIRE(summary.good());
  CHECK(orrery::Json::parse(summary)["interrupted"] == true);
  INFO(screen());
  test::run_command(tmux + "kill-server");
}

TEST_CASE("bad values at the Lua boundary are errors, not crashes") {
  auto dir = test::temp_dir("lua-boundary");
  auto r = run_script(dir, "b.lua", R"(
local t = {}; t.self = t
local ok, err = pcall(orrery.write_json, args.dir .. "/x.json", t)
assert(not ok and err:find("nested too deeply"), err)
local m = orrery.model{arch = {"toto2", d_model = 16, num_layers = 1, num_heads = 1}}
ok, err = pcall(m.forecast, m, {series = "abc", horizon = 3})
assert(not ok and err:find("series must be a list"), err)
assert(getmetatable(m) == false, "metatable is hidden")
print("ok")
)", "dir=" + dir);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("ok") != std::string::npos);
}

TEST_CASE("architectures and heads swap with one word in a script") {
  auto dir = test::temp_dir("lua-swap");
  auto r = run_script(dir, "swap.lua", R"(
for _, arch in ipairs{"toto2", "mlp"} do
  for _, head in ipairs{"quantile", "point"} do
    local m = orrery.model{arch = {arch, d_model = 16, num_layers = 1}, head = head}
    orrery.train{model = m, steps = 3, batch_size = 2, context_length = 64, quiet = true,
                 name = arch .. "-" .. head, runs_dir = args.dir .. "/runs"}
    local f = m:forecast{values = {1, 2, 3, 4, 5, 6, 7, 8}, horizon = 40}
    assert(#f.quantiles == 9 and #f.median == 40, arch .. "/" .. head)
    print(arch, head, "ok")
  end
end
)", "dir=" + dir);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("mlp\tpoint\tok") != std::string::npos);
}

TEST_CASE("orrery forecast writes every series' quantiles from saved weights") {
  auto dir = test::temp_dir("cli-forecast");
  auto model = test::tiny_model(3);
  model->save_weights(dir + "/model.safetensors");
  {
    std::ofstream csv(dir + "/in.csv");
    csv << "\"time\",\"a\",\"b\"\n";
    for (int t = 0; t < 70; ++t)
      csv << 2000 + t / 12.0 << "," << 100 + t << "," << (t == 5 ? std::string("") : std::to_string(3.5 * t)) << "\n";
  }
  auto r = test::run_command(orrery_cmd("forecast --model " + dir + " --input " + dir +
                                        "/in.csv --horizon 5 --out " + dir + "/out.csv"));
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::ifstream out(dir + "/out.csv");
  std::string header;
  std::getline(out, header);
  CHECK(header.rfind("step,time,a_q0.1,a_q0.2", 0) == 0);
  CHECK(header.find("b_q0.9") != std::string::npos);
  int rows = 0;
  for (std::string line; std::getline(out, line); ++rows) {
    std::vector<double> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(std::stod(c));
    REQUIRE(cells.size() == 2 + 18);
    CHECK(cells[1] == Approx(2000 + (69 + rows + 1) / 12.0));
    for (int q = 1; q < 9; ++q) CHECK(cells[2 + q] >= cells[1 + q]);  // sorted levels, series a
  }
  CHECK(rows == 5);

  auto bad = test::run_command(orrery_cmd("forecast --model " + dir + "/in.csv --input " + dir + "/in.csv --horizon 5"));
  CHECK(bad.status == 1);
  CHECK(bad.output.find("in.csv: not a valid safetensors file") != std::string::npos);
}

TEST_CASE("an optimizer of any Lua type is checked, never read as a table it is not") {
  auto dir = test::temp_dir("lua-optimizer-types");
  // The documented name-only form trains; every other type is an error at the script line.
  auto r = run_script(dir, "o.lua", R"(
local m = orrery.model{arch = {"toto2", d_model = 16, num_layers = 1, num_heads = 1}}
local function try(opt)
  return pcall(orrery.train, {model = m, optimizer = opt, steps = 2, batch_size = 2, context_length = 64,
                              quiet = true, runs_dir = args.runs, val_batches = 0, forecast_series = 0})
end
for i = 1, 20 do assert(try("adamw"), "the name-only form") end
for _, bad in ipairs{5, true, function() end, m, {5}, {{"adamw"}, 7}, {"adamw", lr = "fast"}} do
  local ok, err = try(bad)
  assert(not ok, "accepted a " .. type(bad))
  print(err)
end
print("done")
)", "runs=" + dir + "/runs");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("orrery.train: optimizer must be a plugin name or a table like {\"name\", option = value}, got a number") != std::string::npos);
  CHECK(r.output.find("got a boolean") != std::string::npos);
  CHECK(r.output.find("got a function") != std::string::npos);
  CHECK(r.output.find("got a userdata") != std::string::npos);
  CHECK(r.output.find("optimizer: its first entry must be the plugin's name (a string)") != std::string::npos);
  CHECK(r.output.find("optimizer[2] must be a plugin name") != std::string::npos);
  CHECK(r.output.find("option 'lr' of optimizer plugin 'adamw' must be a number, got the string \"fast\"") != std::string::npos);
  CHECK(r.output.find("done") != std::string::npos);
}

TEST_CASE("meaningless training lengths and empty series are errors, not silent successes") {
  auto dir = test::temp_dir("lua-meaningless");
  auto r = run_script(dir, "m.lua", R"(
local m = orrery.model{arch = {"toto2", d_model = 16, num_layers = 1, num_heads = 1}}
local function train(t)
  t.model, t.batch_size, t.context_length, t.quiet, t.runs_dir = m, 2, 64, true, args.runs
  return select(2, pcall(orrery.train, t))
end
print(train{steps = 0/0})
print(train{steps = 1e30})
print(train{steps = 2.5})
print(train{stepz = 3})
print(train{schedule = {warmup = 0/0}})
print(select(2, pcall(m.forecast, m, {values = {}, horizon = 3})))
print(select(2, pcall(m.forecast, m, {series = {{1, 2, 3}, {0/0, 0/0}}, horizon = 3})))
print(select(2, pcall(m.forecast, m, {values = {1, 2, 3}, horizon = 0})))
print(select(2, pcall(m.forecast, m, {values = {1, 2, 3}, horizon = 2.5})))
print(select(2, pcall(orrery.model, {seed = -1})))
print(select(2, pcall(orrery.model, {"toto2"})))
)", "runs=" + dir + "/runs");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("option 'steps' of orrery.train must be a finite number, got number NaN") != std::string::npos);
  CHECK(r.output.find("option 'steps' of orrery.train must be <= 1e+12") != std::string::npos);
  CHECK(r.output.find("option 'steps' of orrery.train must be an integer, got number 2.5") != std::string::npos);
  CHECK(r.output.find("unknown option 'stepz' for orrery.train (did you mean 'steps'?)") != std::string::npos);
  CHECK(r.output.find("model, data, optimizer, on_step, name, runs_dir, every, resume, branch, steps") != std::string::npos);
  CHECK(r.output.find("option 'warmup' of the learning-rate schedule must be a finite number") != std::string::npos);
  CHECK(r.output.find("model:forecast: values is empty: there is nothing to forecast from") != std::string::npos);
  CHECK(r.output.find("model:forecast: series[2] has no observed value") != std::string::npos);
  CHECK(r.output.find("forecast horizon must be at least 1, got 0") != std::string::npos);
  CHECK(r.output.find("model:forecast: horizon must be a whole number, got 2.5") != std::string::npos);
  CHECK(r.output.find("orrery.model: seed must be >= 0, got -1") != std::string::npos);
  CHECK(r.output.find("orrery.model takes name = value fields only, got a number key") != std::string::npos);
  // None of them started a run.
  CHECK(!std::ifstream(dir + "/runs/run/summary.json").good());
}

TEST_CASE("orrery run refuses a folder, a missing file and a binary chunk") {
  auto dir = test::temp_dir("lua-run-paths");
  auto folder = test::run_command(orrery_cmd("run " + dir));
  CHECK(folder.status == 1);
  CHECK(folder.output.find("orrery: " + dir + " is a folder, not a Lua script") != std::string::npos);
  auto missing = test::run_command(orrery_cmd("run " + dir + "/none.lua"));
  CHECK(missing.status == 1);
  CHECK(missing.output.find("cannot open " + dir + "/none.lua") != std::string::npos);
  std::ofstream(dir + "/bin.lua") << "\x1bLua";
  auto binary = test::run_command(orrery_cmd("run " + dir + "/bin.lua"));
  CHECK(binary.status == 1);
  CHECK(binary.output.find("attempt to load a binary chunk") != std::string::npos);
}

TEST_CASE("a run folder, a weights file and a released checkpoint each load as what they are") {
  auto dir = test::temp_dir("lua-load-kinds");
  auto r = run_script(dir, "k.lua", R"(
local m = orrery.model{arch = {"toto2", d_model = 16, num_layers = 1, num_heads = 1}, seed = 4}
local run = orrery.train{model = m, steps = 2, batch_size = 2, context_length = 64, quiet = true,
                         runs_dir = args.runs, name = "saved"}
-- A run folder without saved weights says how to save them.
print(select(2, pcall(orrery.load, run.run_dir)))
m:save(run.run_dir .. "/model.safetensors")
local values = {1, 2, 3, 4, 5, 6, 7, 8}
local a = m:forecast{values = values, horizon = 4}
for _, path in ipairs{run.run_dir, run.run_dir .. "/model.safetensors", run.run_dir .. "/config.json"} do
  local b = orrery.load(path):forecast{values = values, horizon = 4}
  assert(a.median[4] == b.median[4], path)
end
print(select(2, pcall(orrery.load, args.runs)))
print("loaded")
)", "runs=" + dir + "/runs");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("/runs/saved is an Orrery run folder without saved weights: it has no model.safetensors. "
                      "A script saves them with model:save(run.run_dir .. \"/model.safetensors\")") != std::string::npos);
  CHECK(r.output.find("/runs holds no model") != std::string::npos);
  CHECK(r.output.find("loaded") != std::string::npos);
}

TEST_CASE("a model's scaler window travels with its weights and changes what it reads") {
  auto dir = test::temp_dir("lua-scaler-window");
  auto r = run_script(dir, "w.lua", R"(
local function model(window)
  return orrery.model{arch = {"toto2", d_model = 16, num_layers = 1, num_heads = 1}, patch_size = 4,
                      scaler_window = window, seed = 4}
end
local m = model(2)
assert(m:describe().scaler_window == 2)
assert(model(nil):describe().scaler_window == nil)  -- the whole history: specs stay as they were
local run = orrery.train{model = m, steps = 2, batch_size = 2, context_length = 32, quiet = true,
                         runs_dir = args.runs, name = "windowed"}
m:save(run.run_dir .. "/model.safetensors")
local trend = {}
for t = 1, 40 do trend[t] = 10 + t + math.sin(t) end
local a = m:forecast{values = trend, horizon = 4}
for _, path in ipairs{run.run_dir, run.run_dir .. "/model.safetensors"} do
  local loaded = orrery.load(path)
  assert(loaded:describe().scaler_window == 2, path)
  assert(loaded:forecast{values = trend, horizon = 4}.median[4] == a.median[4], path)
end
-- Loaded into a model of another window, the weights are refused; the same initial weights read
-- through the whole history's statistics forecast otherwise.
print(select(2, pcall(function() return model(0):load(run.run_dir .. "/model.safetensors") end)))
assert(model(0):forecast{values = trend, horizon = 4}.median[4] ~= model(2):forecast{values = trend, horizon = 4}.median[4])
print(select(2, pcall(model, -1)))
print("windowed")
)", "runs=" + dir + "/runs");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("scaler_window must be 0 (the whole history) or a number of patches, got -1") != std::string::npos);
  CHECK(r.output.find("/runs/windowed/model.safetensors does not match this model: saved with scaler_window 2, the model "
                      "has 0 (orrery.load builds a model as it was saved)") != std::string::npos);
  CHECK(r.output.find("windowed") != std::string::npos);
}

TEST_CASE("the logged learning rate is every optimizer group's") {
  auto dir = test::temp_dir("lua-lr-groups");
  auto r = run_script(dir, "g.lua", R"(
local m = orrery.model{arch = {"toto2", d_model = 16, num_layers = 2, num_heads = 1}, param = "umup"}
local lrs
orrery.train{model = m, steps = 2, batch_size = 2, context_length = 64, log_every = 2, quiet = true,
             runs_dir = args.runs, schedule = {kind = "constant", warmup = 0},
             optimizer = {{"normuon", lr = 0.02, params = {role = "hidden", stack = true}}, {"adamw", lr = 3e-3}},
             on_step = function(e) lrs = e.lr end}
print(string.format("normuon %.4g adamw %.4g", lrs["normuon:hidden"], lrs["adamw:rest"]))
)", "runs=" + dir + "/runs");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("normuon 0.02 adamw 0.003") != std::string::npos);
}

TEST_CASE("model:activations measures each layer's change since a kept measurement, and refuses a mismatch") {
  auto dir = test::temp_dir("lua-activations");
  auto r = run_script(dir, "a.lua", R"(
local m = orrery.model{arch = {"toto2", d_model = 32, num_layers = 1, num_heads = 2}, seed = 1}
local before, kept = m:activations{batch_size = 2, keep = true}
assert(type(kept) == "userdata" and #before > 5, "kept activations")
assert(select("#", m:activations{batch_size = 2}) == 1, "one value without keep")
local same = m:activations{batch_size = 2, since = kept}
for i, a in ipairs(same) do assert(a.change == 0 and a.rms == before[i].rms, a.name) end
orrery.train{model = m, steps = 3, batch_size = 2, context_length = 256, quiet = true, runs_dir = ")" + dir + R"("}
local moved = 0
for _, a in ipairs(m:activations{batch_size = 2, since = kept}) do
  assert(a.change >= 0, a.name)
  if a.change > 0 then moved = moved + 1 end
end
assert(moved > 5, "training moved the activations")
local ok, err = pcall(m.activations, m, {batch_size = 2, since = {}})
assert(not ok and err:find("since %(the second value of a call with keep = true%) must be an orrery.Activations"), err)
local other = orrery.model{arch = {"toto2", d_model = 32, num_layers = 2, num_heads = 2}}
ok, err = pcall(other.activations, other, {batch_size = 2, since = kept})
assert(not ok and err:find("no counterpart in the earlier measurement"), err)
ok, err = pcall(m.activations, m, {batch_size = 3, since = kept})
assert(not ok and err:find("no counterpart"), err)
print("ok")
)");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("ok") != std::string::npos);
}

TEST_CASE("orrery.search resumes by name, fails bad trials without stopping, and names what is wrong") {
  auto dir = test::temp_dir("lua-search");
  const std::string study = "local n = tonumber(args.n)\n"
                            "local s = orrery.search{name = 'q', trials = n, runs_dir = '" + dir + "/runs', quiet = true,\n"
                            "  space = {x = {'real', -2, 2}, k = {'int', 1, 4, step = 1}, c = {'categorical', 'a', 'b'},\n"
                            "           w = {'log', 1e-3, 1, when = {c = 'b'}}},\n"
                            "  objective = function(t)\n"
                            "    if t.number == 2 then error('trial two breaks') end\n"
                            "    assert((t.params.w ~= nil) == (t.params.c == 'b'), 'a conditional dimension')\n"
                            "    return (t.params.x - 0.5)^2 + t.params.k\n"
                            "  end}\n"
                            "print('trials', #s.trials, s.trials[3].state, s.best.value < 2.5)\n";
  auto first = run_script(dir, "s.lua", study, "n=6");
  INFO(first.output);
  REQUIRE(first.status == 0);
  CHECK(first.output.find("trials\t6\tfailed\ttrue") != std::string::npos);
  auto again = run_script(dir, "s.lua", study, "n=9");  // the same study, three more trials
  INFO(again.output);
  CHECK(again.output.find("trials\t9\tfailed\ttrue") != std::string::npos);

  auto bad = run_script(dir, "bad.lua", "orrery.search{name = 'b', runs_dir = '" + dir + "/runs',\n"
                                        "  space = {x = {'cube', 0, 1}}, objective = function() return 0 end}\n");
  CHECK(bad.status == 1);
  CHECK(bad.output.find("bad.lua:1: orrery.search: space.x: unknown kind 'cube'") != std::string::npos);
  auto all_fail = run_script(dir, "fail.lua", "orrery.search{name = 'f', trials = 3, quiet = true, runs_dir = '" + dir +
                                                  "/runs',\n  space = {x = {'real', 0, 1}}, objective = function() return 'x' end}\n");
  CHECK(all_fail.status == 1);
  CHECK(all_fail.output.find("every trial of study 'f' failed; the first: the objective returned a string") != std::string::npos);
  auto other = run_script(dir, "other.lua", "orrery.search{name = 'q', trials = 1, quiet = true, runs_dir = '" + dir +
                                                "/runs',\n  space = {x = {'real', 0, 1}}, objective = function() return 0 end}\n");
  CHECK(other.status == 1);
  CHECK(other.output.find("was created with another search space") != std::string::npos);
}

TEST_CASE("orrery.bootstrap resamples units with replacement, skips nil, and refuses bad arguments", "[slow]") {
  auto dir = test::temp_dir("lua-bootstrap");
  auto r = run_script(dir, "b.lua", R"(
local seen, calls = {}, 0
local boot = orrery.bootstrap{n = 4, resamples = 300, statistic = function(picks)
  calls = calls + 1
  assert(#picks == 4, "n picks")
  for _, p in ipairs(picks) do assert(math.type(p) == "integer" and p >= 1 and p <= 4, "pick range"); seen[p] = true end
  if picks[1] == picks[2] then return nil end  -- a resample that says nothing
  return picks[1]
end}
assert(calls == 300 and #seen == 4, "every unit drawn")
assert(#boot.draws + boot.skipped == 300 and boot.skipped > 30 and boot.skipped < 120, "skipped " .. boot.skipped)
for i = 2, #boot.draws do assert(boot.draws[i - 1] <= boot.draws[i], "ascending") end
assert(boot.lo == 1 and boot.hi == 4, "interval over picks")
-- The same seed gives the same draws; another seed others.
local function mean_of(x) return function(picks) local t = 0 for _, i in ipairs(picks) do t = t + x[i] end return t / #picks end end
local x = {0.3, -0.1, 0.5, 0.2, 0.0}
local a = orrery.bootstrap{n = 5, statistic = mean_of(x)}
local b = orrery.bootstrap{n = 5, statistic = mean_of(x)}
local c = orrery.bootstrap{n = 5, statistic = mean_of(x), seed = 7}
assert(a.lo == b.lo and a.hi == b.hi, "deterministic")
assert(a.lo ~= c.lo or a.hi ~= c.hi, "seeded")
assert(a.lo < 0.18 and a.hi > 0.18 and a.lo > -0.1 and a.hi < 0.5, "interval around the mean")
local wide = orrery.bootstrap{n = 5, statistic = mean_of(x), level = 0.99}
assert(wide.lo <= a.lo and wide.hi >= a.hi, "a wider level, a wider interval")
print("ok")
)");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("ok") != std::string::npos);
  const std::pair<const char*, const char*> bad[] = {
      {"orrery.bootstrap{statistic = function() return 1 end}", "orrery.bootstrap: n = the number of paired units"},
      {"orrery.bootstrap{n = 3}", "orrery.bootstrap: statistic = function(picks) return a number end is required"},
      {"orrery.bootstrap{n = 3, statistic = function() return 'x' end}", "statistic returned a string, not a number"},
      {"orrery.bootstrap{n = 3, statistic = function() return 1 end, level = 1}", "level must be between 0 and 1"},
      {"orrery.bootstrap{n = 3, statistic = function() return 1 end, resamples = 0}", "resamples must be at least 1, got 0"},
      {"orrery.bootstrap{n = 3, statistic = function() return 1 end, sed = 1}", "unknown field 'sed'"},
      {"orrery.bootstrap{n = 40000, statistic = function() return 1 end}", "at most 32768 units, got 40000"},
      {"orrery.bootstrap{n = 3, statistic = function() error('inside') end}", "bad.lua:1: inside"},
  };
  for (const auto& [lua, message] : bad) {
    auto e = run_script(dir, "bad.lua", std::string(lua) + "\n");
    INFO(lua << "\n" << e.output);
    CHECK(e.status == 1);
    CHECK(e.output.find(message) != std::string::npos);
  }
}
