// The error catalogue: every row of docs/errors.md (bad input, the message the user sees, the
// exit code) reproduced by running the real `orrery` program on it. Each row writes its own
// fixture files into a folder of its own and runs one command there through /bin/sh; the row
// passes when the exit code is the documented one and standard error holds the documented
// message. A last test case reads docs/errors.md and checks that its rows and this table agree
// row for row: the same ids, messages and exit codes, so neither can change without the other.
#include <catch2/catch.hpp>

#include <ATen/Context.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "orrery/host/launch_env.h"
#include "support.h"

extern char** environ;

namespace fs = std::filesystem;

namespace {

// What a row needs beyond the program itself; rows whose need is missing are skipped with a WARN.
enum class Need { nothing, parquet, other_user, no_cuda };

struct Row {
  std::string id;
  int exit;
  std::string message;  // what standard error holds, as docs/errors.md quotes it
  // Writes the row's files into its folder and returns the shell command that runs orrery
  // there ("$ORRERY" is the program).
  std::function<std::string(const std::string& dir)> setup;
  Need need = Need::nothing;
};

struct Outcome {
  int exit = -1;
  std::string err;
  bool skipped = false;
  std::string why;  // why it was skipped, or why its setup failed
};

void write(const std::string& dir, const std::string& name, const std::string& text) {
  fs::create_directories(fs::path(dir + "/" + name).parent_path());
  std::ofstream(dir + "/" + name, std::ios::binary) << text;
}

// A script that declares two arguments with orrery.args.
const char* kDeclaring = R"(local args = orrery.args{
  "A test.",
  {"steps", "int", 10, "training steps", min = 1},
  {"data", "path", nil, "a benchmark"},
}
print(args.steps)
)";

// A script run by `orrery run script.lua`.
std::string script(const std::string& dir, const std::string& lua) {
  write(dir, "script.lua", lua);
  return "\"$ORRERY\" run script.lua";
}

// The variables torchrun sets, for a job of two on this machine, by hand (dp rows).
// The port is one nothing listens on now, as `orrery launch` picks it.
std::string ranks_env() {
  return "export MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(orrery::free_local_port("the test needs one")) +
         " WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 LOCAL_RANK=0 ORRERY_DIST_TIMEOUT=10 OMP_NUM_THREADS=1; ";
}

const std::string kModel = "local m = orrery.model{arch = {\"toto2\", d_model = 32, num_layers = 1, num_heads = 2}}\n";

// A model script: kModel, then `lua` (so its errors are at line 2).
std::string with_model(const std::string& dir, const std::string& lua) { return script(dir, kModel + lua + "\n"); }

// A csv data source over one file of the given text, with `options` added to the plugin choice.
std::string csv_source(const std::string& dir, const std::string& file, const std::string& text,
                       const std::string& options = "") {
  write(dir, file, text);
  return script(dir, "orrery.data{\"csv\", files = \"" + file + "\"" + options + "}\n");
}

// A safetensors file from its header text and data bytes: u64 header length, header, data.
std::string safetensors(const std::string& header, const std::string& data) {
  const uint64_t n = header.size();
  std::string out(reinterpret_cast<const char*>(&n), 8);
  return out + header + data;
}

// `orrery forecast` of a small CSV with the weights file `file`.
std::string forecast_with(const std::string& dir, const std::string& file, const std::string& bytes) {
  write(dir, file, bytes);
  write(dir, "in.csv", "a\n1\n2\n3\n4\n5\n");
  return "\"$ORRERY\" forecast --model " + file + " --input in.csv --horizon 4";
}

// `orrery forecast` with a saved model (kModel's) of the CSV `name` holding `text`.
std::string forecast_input(const std::string& dir, const std::string& name, const std::string& text) {
  write(dir, "make.lua", kModel + "m:save(\"model.safetensors\")\n");
  write(dir, name, text);
  return "\"$ORRERY\" run make.lua && \"$ORRERY\" forecast --model model.safetensors --input " + name + " --horizon 3";
}

// A plugin folder `plugins` holding a link to `file` under the given name.
void plugin_link(const std::string& dir, const std::string& file, const std::string& name) {
  fs::create_directories(dir + "/plugins");
  fs::create_symlink(file, dir + "/plugins/" + name);
}

std::string unsafe_plugin(const std::string& name) { return std::string(ORRERY_TEST_UNSAFE_PLUGIN_DIR) + "/" + name + ".so"; }

// Runs the parquet fixture maker: the venv's pyarrow writes DIR/NAME from a line of Python
// that makes a table `t`.
void parquet(const std::string& dir, const std::string& name, const std::string& table) {
  write(dir, "make.py", "import sys, pyarrow as pa, pyarrow.parquet as pq\nt = " + table +
                            "\npq.write_table(t, sys.argv[1])\n");
  const std::string python = std::string(ORRERY_SOURCE_DIR) + "/.venv/bin/python";
  if (test::run_command("'" + python + "' '" + dir + "/make.py' '" + dir + "/" + name + "'").status != 0)
    throw std::runtime_error("pyarrow could not write " + name);
}

// Runs the command as another user where the files' permissions would not stop root.
std::string as_other_user(const std::string& command) {
  return (::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "") + command;
}

// A run that checkpoints every step (see the checkpoint rows).
void resumable(const std::string& dir) {
  write(dir, "script.lua", kModel + "orrery.train{model = m, steps = args.steps or 3, batch_size = args.batch or 2, "
                                    "context_length = 64, quiet = true, name = \"r\", checkpoint_every = 1, log_every = 1, "
                                    "on_step = function(e) if e.step == args.stop then error(\"stop\") end end}\n");
}

const std::string kDaily = [] {
  std::string s = "time,a\n";
  for (int d = 1; d <= 28; ++d) s += "2024-02-" + std::string(d < 10 ? "0" : "") + std::to_string(d) + "," + std::to_string(d % 7) + "\n";
  return s;
}();

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      // The command line.
      {"cli-no-command", 2, "usage: orrery <command> [options]", [](auto&) { return "\"$ORRERY\""; }},
      {"cli-unknown-command", 2, "orrery: unknown command 'forcast' (did you mean 'forecast'?)",
       [](auto&) { return "\"$ORRERY\" forcast"; }},
      {"cli-run-no-script", 2, "usage: orrery run SCRIPT.lua [--resume] [key=value ...]",
       [](auto&) { return "\"$ORRERY\" run"; }},
      {"cli-run-not-key-value", 1, "orrery: run: argument 'steps' is not key=value (see orrery run --help)",
       [](auto& d) { return script(d, "print(args.steps)\n") + " steps"; }},
      {"cli-run-unknown-flag", 1,
       "orrery: run: unknown flag '--resum' (the flags are --resume and --help; script arguments are key=value; see orrery run --help)",
       [](auto& d) { return script(d, "print(args.steps)\n") + " --resum"; }},
      {"cli-run-argument-twice", 1, "orrery: run: argument 'steps' is given twice",
       [](auto& d) { return script(d, "print(args.steps)\n") + " steps=1 steps=2"; }},
      // A script's own arguments, declared with orrery.args: refused before any work.
      {"script-argument-unknown", 1,
       "orrery: script.lua: unknown argument 'stpes' (did you mean 'steps'?); its arguments are steps, data (see orrery run script.lua --help)",
       [](auto& d) { return script(d, kDeclaring) + " stpes=10"; }},
      {"script-argument-malformed", 1,
       "orrery: script.lua: argument steps=4OO: \"4OO\" is not a whole number (see orrery run script.lua --help)",
       [](auto& d) { return script(d, kDeclaring) + " steps=4OO"; }},
      {"script-argument-out-of-range", 1,
       "orrery: script.lua: argument 'steps' of this script must be >= 1, got number -5 (see orrery run script.lua --help)",
       [](auto& d) { return script(d, kDeclaring) + " steps=-5"; }},
      {"script-argument-empty", 1,
       "orrery: script.lua: argument steps=: no value; expected a whole number (see orrery run script.lua --help)",
       [](auto& d) { return script(d, kDeclaring) + " steps="; }},
      {"script-argument-no-path", 1, "orrery: script.lua: argument data=nowhere: no such file or folder",
       [](auto& d) { return script(d, kDeclaring) + " data=nowhere"; }},
      {"script-help-undeclared", 1,
       "orrery: script.lua:1: script.lua --help: the script calls orrery.model before declaring its arguments with orrery.args",
       [](auto& d) { return script(d, "orrery.model{arch = \"mlp\"}\n") + " --help"; }},
      {"cli-script-missing", 1, "orrery: cannot open missing.lua: No such file or directory",
       [](auto&) { return "\"$ORRERY\" run missing.lua"; }},
      {"cli-script-folder", 1, "orrery: scripts is a folder, not a Lua script",
       [](auto& d) { fs::create_directories(d + "/scripts"); return "\"$ORRERY\" run scripts"; }},
      {"cli-plugins-unknown-argument", 1, "orrery: plugins: unknown argument '--jsn' (see orrery plugins --help)",
       [](auto&) { return "\"$ORRERY\" plugins --jsn"; }},
      {"cli-forecast-no-arguments", 2, "usage: orrery forecast --model PATH --input FILE.csv --horizon H",
       [](auto&) { return "\"$ORRERY\" forecast"; }},
      {"cli-forecast-missing-flags", 1,
       "orrery: forecast: --model, --input and --horizon are required (see orrery forecast --help)",
       [](auto&) { return "\"$ORRERY\" forecast --input in.csv"; }},
      {"cli-forecast-not-a-number", 1, "orrery: forecast: --horizon takes a whole number, got 'soon'",
       [](auto&) { return "\"$ORRERY\" forecast --model m --input in.csv --horizon soon"; }},
      {"cli-forecast-flag-without-value", 1, "orrery: forecast: --horizon needs a value",
       [](auto&) { return "\"$ORRERY\" forecast --model m --input in.csv --horizon"; }},
      {"cli-forecast-unknown-flag", 1, "orrery: forecast: unknown argument '--horizn' (see orrery forecast --help)",
       [](auto&) { return "\"$ORRERY\" forecast --model m --input in.csv --horizn 3"; }},
      {"cli-new-plugin-extra-argument", 1,
       "orrery: new: unexpected argument 'bar': orrery new plugin KIND NAME (see orrery new --help)",
       [](auto&) { return "\"$ORRERY\" new plugin optimizer foo bar"; }},
      {"cli-forecast-regression-lags-rows", 1,
       "orrery: forecast: --regression-lags 1000 needs at least 1004 rows, and in.csv has 168: the fit leaves out the "
       "first K steps; give at most 164 lags",
       [](auto& d) {
         std::string in = "y,p\n", fut = "p\n";
         for (int t = 0; t < 168; ++t) in += std::to_string(t % 9) + "," + std::to_string(t % 4) + "\n";
         for (int t = 0; t < 4; ++t) fut += std::to_string(t) + "\n";
         write(d, "in.csv", in);
         write(d, "fut.csv", fut);
         return "\"$ORRERY\" forecast --model m.safetensors --input in.csv --horizon 4 --target y --future-covariates p "
                "--future fut.csv --regression --regression-lags 1000";
       }},
      {"cli-forecast-season-without-box-cox", 1,
       "orrery: forecast: --season sets the blocks of Box-Cox's exponent and the season of --combine's baselines; "
       "with --no-box-cox give --combine, or leave --season out",
       [](auto&) { return "\"$ORRERY\" forecast --model m --input in.csv --horizon 3 --no-box-cox --season 12"; }},
      {"cli-forecast-combine-check-alone", 1,
       "orrery: forecast: --combine-check checks a combination; give --combine",
       [](auto&) { return "\"$ORRERY\" forecast --model m --input in.csv --horizon 3 --combine-check"; }},
      {"cli-forecast-check-origins-unused", 1,
       "orrery: forecast: --check-origins sets the horizons a check scores; with --no-box-cox give --combine-check, "
       "or leave --check-origins out",
       [](auto&) { return "\"$ORRERY\" forecast --model m --input in.csv --horizon 3 --no-box-cox --check-origins 2"; }},
      {"cli-forecast-box-cox-average-unused", 1,
       "orrery: forecast: --box-cox-average averages the Box-Cox forecast with the plain one; --no-box-cox asks for none; "
       "give one",
       [](auto&) { return "\"$ORRERY\" forecast --model m --input in.csv --horizon 3 --no-box-cox --box-cox-average"; }},
      {"cli-forecast-box-cox-average-twice", 1,
       "orrery: forecast: --box-cox-average and --no-box-cox-average ask for different forecasts; give one",
       [](auto&) {
         return "\"$ORRERY\" forecast --model m --input in.csv --horizon 3 --box-cox-average --no-box-cox-average";
       }},
      {"cli-eval-box-cox-average-no-model", 1, "orrery: eval: --box-cox-average sets how models forecast: give --model",
       [](auto&) { return "\"$ORRERY\" eval --baselines naive --box-cox-average"; }},
      {"cli-eval-check-origins-zero", 1, "orrery: eval: --check-origins must be at least 1 (the horizons a check scores), got 0",
       [](auto&) { return "\"$ORRERY\" eval --model m --check-origins 0"; }},
      {"cli-eval-check-origins-no-model", 1, "orrery: eval: --check-origins sets how models forecast: give --model",
       [](auto&) { return "\"$ORRERY\" eval --baselines naive --check-origins 3"; }},
      {"cli-forecast-box-cox-twice", 1,
       "orrery: forecast: --box-cox and --no-box-cox ask for different transforms; give one",
       [](auto&) { return "\"$ORRERY\" forecast --model m --input in.csv --horizon 3 --box-cox --no-box-cox"; }},
      {"cli-forecast-bad-device", 1,
       "orrery: device must be \"cpu\", \"cuda\" (\"cuda:N\" for one GPU) or \"mps\", got \"tpu\"",
       [](auto& d) {
         write(d, "make.lua", kModel + "m:save(\"model.safetensors\")\n");
         write(d, "in.csv", "a\n1\n2\n3\n");
         return "\"$ORRERY\" run make.lua && \"$ORRERY\" forecast --model model.safetensors --input in.csv --horizon 2 --device tpu";
       }},
      {"cli-eval-unknown-baseline", 1, "orrery: unknown baseline \"theeta\" (known: naive, seasonal_naive, theta, ets, arima)",
       [](auto& d) { write(d, "daily.csv", kDaily); return "\"$ORRERY\" eval --baselines naive,theeta --data daily.csv"; }},
      {"cli-eval-context", 1, "orrery: evaluation: context must be at least 1 step, got 0",
       [](auto& d) { write(d, "daily.csv", kDaily); return "\"$ORRERY\" eval --baselines naive --data daily.csv --context 0"; }},
      // --context as a list: empty, a context twice, negative, tiny, huge and non-UTF-8 entries.
      {"cli-eval-context-empty", 1, "orrery: evaluation: give at least one context (steps of history a model reads)",
       [](auto& d) { write(d, "daily.csv", kDaily); return "\"$ORRERY\" eval --baselines naive --data daily.csv --context ''"; }},
      {"cli-eval-context-twice", 1, "orrery: evaluation: context 64 given twice",
       [](auto& d) { write(d, "daily.csv", kDaily); return "\"$ORRERY\" eval --baselines naive --data daily.csv --context 64,64"; }},
      {"cli-eval-context-negative", 1, "orrery: evaluation: context must be at least 1 step, got -5",
       [](auto& d) { write(d, "daily.csv", kDaily); return "\"$ORRERY\" eval --baselines naive --data daily.csv --context -5,512"; }},
      {"cli-eval-context-tiny", 1, "orrery: eval: --context takes a whole number, got '1e-40'",
       [](auto& d) { write(d, "daily.csv", kDaily); return "\"$ORRERY\" eval --baselines naive --data daily.csv --context 64,1e-40"; }},
      {"cli-eval-context-huge", 1, "orrery: eval: --context takes a whole number, got '99999999999999999999'",
       [](auto& d) { write(d, "daily.csv", kDaily); return "\"$ORRERY\" eval --baselines naive --data daily.csv --context 99999999999999999999"; }},
      {"cli-eval-context-bytes", 1, "orrery: eval: --context takes a whole number, got",
       [](auto& d) { write(d, "daily.csv", kDaily); return "\"$ORRERY\" eval --baselines naive --data daily.csv --context \"$(printf '\\377\\376')\""; }},
      {"cli-eval-split", 1, "orrery: eval: --split must be test or validation, got 'bogus'",
       [](auto& d) { write(d, "daily.csv", kDaily); return "\"$ORRERY\" eval --baselines naive --data daily.csv --split bogus"; }},
      {"cli-eval-validation-windows", 1, "orrery: eval: --validation-windows needs --split validation",
       [](auto& d) { write(d, "daily.csv", kDaily); return "\"$ORRERY\" eval --baselines naive --data daily.csv --validation-windows 5"; }},
      {"cli-eval-box-cox", 1, "orrery: eval: --box-cox sets how models forecast: give --model",
       [](auto& d) { write(d, "daily.csv", kDaily); return "\"$ORRERY\" eval --baselines naive --data daily.csv --box-cox"; }},
      {"cli-eval-sign-average", 1, "orrery: eval: --sign-average averages models' forecasts: give --model",
       [](auto& d) { write(d, "daily.csv", kDaily); return "\"$ORRERY\" eval --baselines naive --data daily.csv --sign-average"; }},
      {"cli-eval-regression-lags", 1, "orrery: eval: --regression-lags must be 0 or the largest lag in steps, got -2",
       [](auto& d) { write(d, "daily.csv", kDaily); return "\"$ORRERY\" eval --baselines naive --data daily.csv --regression-lags -2"; }},
      {"eval-constant-series", 1,
       "orrery: data set 'flat': series 'flat' does not change (at lag 12) in the 24 steps before test window 1, so its "
       "MASE is undefined (its seasonal error is 0); leave the series out of the data set",
       [](auto& d) {
         std::string text = "time,a\n";
         for (int y = 2024; y < 2027; ++y)
           for (int m = 1; m <= 12; ++m) text += std::to_string(y) + "-" + (m < 10 ? "0" : "") + std::to_string(m) + "-01,7\n";
         write(d, "flat.csv", text);
         return "\"$ORRERY\" eval --baselines naive --data flat.csv";
       }},
      {"eval-duplicate-names", 1,
       "orrery: evaluation: data sets 1 and 2 are both named 'a' (from bench/x.csv and bench/y.csv); each data set is "
       "scored once, under a name of its own",
       [](auto& d) {
         write(d, "bench/x.csv", kDaily);
         write(d, "bench/y.csv", kDaily);
         write(d, "bench/manifest.json", "{\"datasets\": [{\"name\": \"a\", \"file\": \"x.csv\", \"frequency\": \"D\"}, "
                                         "{\"name\": \"a\", \"file\": \"y.csv\", \"frequency\": \"D\"}]}");
         return "\"$ORRERY\" eval --baselines naive --data bench";
       }},
      {"eval-manifest-outside", 1,
       "orrery: bench/manifest.json: datasets[1]: \"file\" \"../elsewhere/x.csv\" leaves the benchmark folder; name a file inside "
       "bench (a benchmark folder is self-contained)",
       [](auto& d) {
         write(d, "elsewhere/x.csv", kDaily);
         write(d, "bench/manifest.json", "{\"datasets\": [{\"name\": \"a\", \"file\": \"../elsewhere/x.csv\", \"frequency\": \"D\"}]}");
         return "\"$ORRERY\" eval --baselines naive --data bench";
       }},
      {"eval-manifest-duplicate-key", 1,
       "orrery: bench/manifest.json: the key \"file\" is given twice in one object",
       [](auto& d) {
         write(d, "bench/x.csv", kDaily);
         write(d, "bench/manifest.json",
               "{\"datasets\": [{\"name\": \"a\", \"file\": \"x.csv\", \"file\": \"y.csv\", \"frequency\": \"D\"}]}");
         return "\"$ORRERY\" eval --baselines naive --data bench";
       }},
      {"eval-manifest-unknown-key", 1,
       "orrery: bench/manifest.json: datasets[1]: unknown key \"horizon\" (an entry reads name, file and frequency; what, source, "
       "series, length and licence only describe it)",
       [](auto& d) {
         write(d, "bench/x.csv", kDaily);
         write(d, "bench/manifest.json",
               "{\"datasets\": [{\"name\": \"a\", \"file\": \"x.csv\", \"frequency\": \"D\", \"horizon\": \"12\"}]}");
         return "\"$ORRERY\" eval --baselines naive --data bench";
       }},
      {"eval-box-cox-number", 1,
       "orrery: script.lua:1: orrery.eval: box_cox must be true (Guerrero's exponent), false or \"checked\", got a number",
       [](auto& d) {
         write(d, "daily.csv", kDaily);
         write(d, "script.lua", "orrery.eval{data = \"daily.csv\", baselines = {\"naive\"}, box_cox = 1}\n");
         return "\"$ORRERY\" run script.lua";
       }},
      {"eval-box-cox-average-no-model", 1,
       "orrery: script.lua:1: orrery.eval: box_cox_average sets how models forecast: give a model",
       [](auto& d) {
         write(d, "daily.csv", kDaily);
         write(d, "script.lua", "orrery.eval{data = \"daily.csv\", baselines = {\"naive\"}, box_cox_average = false}\n");
         return "\"$ORRERY\" run script.lua";
       }},
      {"eval-box-cox-average-unused", 1,
       "orrery: script.lua:1: orrery.eval: box_cox_average averages the Box-Cox forecast with the plain one; with "
       "box_cox = false, leave it out",
       [](auto& d) {
         write(d, "daily.csv", kDaily);
         write(d, "script.lua", "orrery.eval{data = \"daily.csv\", baselines = {\"naive\"}, box_cox = false, "
                                "box_cox_average = true}\n");
         return "\"$ORRERY\" run script.lua";
       }},
      {"eval-check-origins-no-model", 1,
       "orrery: script.lua:1: orrery.eval: check_origins sets how models forecast: give a model",
       [](auto& d) {
         write(d, "daily.csv", kDaily);
         write(d, "script.lua", "orrery.eval{data = \"daily.csv\", baselines = {\"naive\"}, check_origins = 3}\n");
         return "\"$ORRERY\" run script.lua";
       }},
      {"eval-validation-windows-capped", 0,
       "orrery: note: evaluation: data set 'yearly' (short term) holds 2 validation window(s) (at most a tenth of the "
       "steps before the test windows), not the 1000000000 asked for",
       [](auto& d) {
         std::string yearly = "time,value\n";
         for (int y = 1901; y <= 2000; ++y) yearly += std::to_string(y) + "-01-01," + std::to_string(50 + (y * 37) % 23) + "\n";
         write(d, "yearly.csv", yearly);
         return "\"$ORRERY\" eval --baselines naive --data yearly.csv --split validation --validation-windows 1000000000 --out e";
       }},
      {"cli-bench-unknown", 2,
       "orrery: bench: unknown benchmark 'speed' (bench data, bench train, bench generate or bench forecast; see orrery bench --help)",
       [](auto&) { return "\"$ORRERY\" bench speed"; }},

      // Lua scripts.
      {"lua-syntax-error", 1, "orrery: script.lua:3: unexpected symbol near <eof>",
       [](auto& d) { return script(d, "local steps = 10\nlocal x =\n"); }},
      {"lua-binary-chunk", 1, "orrery: script.lua: attempt to load a binary chunk (mode is 't')",
       [](auto& d) { return script(d, std::string("\x1bLuaT\0\x19\x93\r\n", 10)); }},
      {"lua-runtime-error", 1, "orrery: script.lua:2: no data for 2024",
       [](auto& d) { return script(d, "local year = 2024\nerror(\"no data for \" .. year)\n"); }},

      // Experiments: search, scaling fits.
      {"search-grid-too-large", 1,
       "orrery: script.lua:1: study 'g': the grid has 1e+18 points (x: 1000000001 values, y: 1000000001 values), more than a study can number (2^53); "
       "give the dimensions larger steps, or use tpe or random",
       [](auto& d) {
         return script(d, "orrery.search{name = 'g', sampler = 'grid', quiet = true, trials = 2,\n"
                          "  space = {x = {'int', 0, 1e9}, y = {'int', 0, 1e9}}, objective = function(t) return t.params.x end}\n");
       }},
      {"search-every-trial-nan", 1,
       "orrery: script.lua:1: orrery.search: every trial of study 'n' failed; the first: the objective returned nan",
       [](auto& d) {
         return script(d, "orrery.search{name = 'n', quiet = true, trials = 3, space = {x = {'real', 0, 1}},\n"
                          "  objective = function(t) return 0 / 0 end}\n");
       }},
      {"scaling-negative-loss", 1,
       "orrery: script.lua:1: orrery.fit_scaling: a power law in loss needs losses above 0, but the point at params 1000 has loss -0.5 (fit a loss, such as "
       "cross-entropy or CRPS, not a gain or a difference)",
       [](auto& d) {
         return script(d, "orrery.fit_scaling{points = {{params = 1e3, loss = -0.5}, {params = 1e4, loss = -0.6}, "
                          "{params = 1e5, loss = -0.7}}}\n");
       }},
      {"scaling-flat-warning", 0,
       "orrery: warning: orrery.fit_scaling: the loss does not fall with size over these points (the best law is flat",
       [](auto& d) {
         return script(d, "orrery.fit_scaling{bootstrap = 10, points = {{params = 1e3, loss = 1}, {params = 1e4, loss = 1.1}, "
                          "{params = 1e5, loss = 1.2}}}\n");
       }},

      // Options of orrery.model, orrery.train, orrery.data, orrery.eval and the plugins.
      {"opt-unknown-plugin-option", 1,
       "orrery: script.lua:1: unknown option 'd_modle' for architecture plugin 'toto2' (did you mean 'd_model'?); its options are: preset, d_model,",
       [](auto& d) { return script(d, "orrery.model{arch = {\"toto2\", d_modle = 32}}\n"); }},
      {"opt-wrong-type", 1,
       "orrery: script.lua:1: option 'd_model' of architecture plugin 'toto2' must be an integer, got the string \"big\"",
       [](auto& d) { return script(d, "orrery.model{arch = {\"toto2\", d_model = \"big\"}}\n"); }},
      {"opt-fractional-count", 1,
       "orrery: script.lua:1: option 'num_layers' of architecture plugin 'toto2' must be an integer, got number 1.5",
       [](auto& d) { return script(d, "orrery.model{arch = {\"toto2\", num_layers = 1.5}}\n"); }},
      {"opt-not-finite", 1, "orrery: script.lua:2: option 'steps' of orrery.train must be a finite number, got number NaN",
       [](auto& d) { return with_model(d, "orrery.train{model = m, steps = 0/0}"); }},
      {"opt-below-minimum", 1, "orrery: script.lua:2: option 'lr' of optimizer plugin 'adamw' must be >= 0, got number -0.001",
       [](auto& d) { return with_model(d, "orrery.train{model = m, optimizer = {\"adamw\", lr = -1e-3}, steps = 1}"); }},
      {"opt-above-maximum", 1, "orrery: script.lua:2: option 'steps' of orrery.train must be <= 1e+12, got number 1e+30",
       [](auto& d) { return with_model(d, "orrery.train{model = m, steps = 1e30}"); }},
      {"opt-not-a-choice", 1,
       "orrery: script.lua:1: option 'preset' of architecture plugin 'toto2' must be one of \"\", toto2-4m, toto2-22m,",
       [](auto& d) { return script(d, "orrery.model{arch = {\"toto2\", preset = \"toto2-5m\"}}\n"); }},
      {"opt-unknown-train-option", 1,
       "orrery: script.lua:2: unknown option 'stepz' for orrery.train (did you mean 'steps'?); its options are: model,",
       [](auto& d) { return with_model(d, "orrery.train{model = m, stepz = 3}"); }},
      {"opt-unknown-field", 1,
       "orrery: script.lua:1: orrery.model: unknown field 'arhc' (did you mean 'arch'?); its fields are: arch, head, param, patch_size, scaler_window, covariate_lags, seed, device",
       [](auto& d) { return script(d, "orrery.model{arhc = \"toto2\"}\n"); }},
      {"opt-inconsistent", 1, "orrery: script.lua:1: architecture plugin 'toto2': d_model 30 is not divisible by num_heads 4",
       [](auto& d) { return script(d, "orrery.model{arch = {\"toto2\", d_model = 30, num_heads = 4}}\n"); }},
      {"opt-missing-model", 1, "orrery: script.lua:1: orrery.train: model = orrery.model{...} is required",
       [](auto& d) { return script(d, "orrery.train{steps = 10}\n"); }},
      {"opt-bad-device", 1,
       "orrery: script.lua:1: device must be \"cpu\", \"cuda\" (\"cuda:N\" for one GPU) or \"mps\", got \"tpu\"",
       [](auto& d) { return script(d, "orrery.model{device = \"tpu\"}\n"); }},
      {"opt-device-not-built", 1,
       "orrery: script.lua:1: device \"cuda\": this LibTorch cannot use it (built without it, or no such GPU or driver here); use device \"cpu\"",
       [](auto& d) { return script(d, "orrery.model{device = \"cuda\"}\n"); }, Need::no_cuda},
      {"opt-patch-size", 1, "orrery: script.lua:1: patch_size must be at least 1, got 0",
       [](auto& d) { return script(d, "orrery.model{patch_size = 0}\n"); }},
      {"opt-eval-context", 1, "orrery: script.lua:1: evaluation: context must be at least 1 step, got -1",
       [](auto& d) {
         write(d, "daily.csv", kDaily);
         return script(d, "orrery.eval{data = \"daily.csv\", baselines = {\"naive\"}, context = -1, quiet = true}\n");
       }},
      {"opt-eval-split", 1, "orrery: script.lua:1: orrery.eval: split must be \"test\" or \"validation\", got \"bogus\"",
       [](auto& d) {
         write(d, "daily.csv", kDaily);
         return script(d, "orrery.eval{data = \"daily.csv\", baselines = {\"naive\"}, split = \"bogus\", quiet = true}\n");
       }},
      {"opt-eval-validation-windows", 1, "orrery: script.lua:1: orrery.eval: validation_windows must be at least 1, got 0",
       [](auto& d) {
         write(d, "daily.csv", kDaily);
         return script(d, "orrery.eval{data = \"daily.csv\", baselines = {\"naive\"}, split = \"validation\", "
                          "validation_windows = 0, quiet = true}\n");
       }},
      {"opt-plugin-kind", 1,
       "orrery: script.lua:1: orrery.plugins: unknown kind \"parametrization\" (did you mean 'parametrisation'?); the kinds are architecture, head, optimizer, parametrisation and data",
       [](auto& d) { return script(d, "print(#orrery.plugins(\"parametrization\"))\n"); }},
      {"opt-data-option-range", 1, "orrery: script.lua:1: option 'holdout' of data plugin 'csv' must be <= 1, got number 2",
       [](auto& d) { return csv_source(d, "a.csv", "a\n1\n2\n", ", holdout = 2"); }},
      {"opt-files-required", 1, "orrery: script.lua:1: data plugin 'csv': option files is required",
       [](auto& d) { return script(d, "orrery.data{\"csv\"}\n"); }},
      {"context-shorter-than-patch", 1,
       "orrery: script.lua:2: context_length 16 must be a multiple of the patch size 32 and at least two patches",
       [](auto& d) { return with_model(d, "orrery.train{model = m, steps = 1, context_length = 16, quiet = true}"); }},
      {"early-steps-beyond-patch", 1,
       "orrery: script.lua:2: early_steps 40 is more than the model's patch size 32 (it weighs the first steps of each target patch)",
       [](auto& d) { return with_model(d, "orrery.train{model = m, steps = 1, context_length = 64, early_steps = 40, early_weight = 4, quiet = true}"); }},
      {"early-weight-nothing-left", 1,
       "orrery: script.lua:2: early_weight 0 on all 32 steps of each target patch leaves nothing to train on",
       [](auto& d) { return with_model(d, "orrery.train{model = m, steps = 1, context_length = 64, early_steps = 32, early_weight = 0, quiet = true}"); }},

      // Plugins.
      {"plugin-unknown", 1,
       "orrery: script.lua:1: unknown architecture plugin 'toto3' (did you mean 'toto2'?); available: gpt, mlp, toto2",
       [](auto& d) { return script(d, "orrery.model{arch = \"toto3\"}\n"); }},
      {"plugin-abi-mismatch", 0,
       "orrery: warning: refused plugin plugins/mismatched.so: built for plugin ABI 999 with LibTorch 1.13.0, but this host has plugin ABI",
       [](auto& d) {
         plugin_link(d, std::string(ORRERY_TEST_PLUGIN_DIR) + "/mismatched.so", "mismatched.so");
         return "ORRERY_PLUGIN_PATH=plugins \"$ORRERY\" plugins";
       }},
      {"plugin-other-torch", 0, "orrery: warning: refused plugin plugins/other_torch.so: built for plugin ABI",
       [](auto& d) {
         plugin_link(d, std::string(ORRERY_TEST_PLUGIN_DIR) + "/other_torch.so", "other_torch.so");
         return "ORRERY_PLUGIN_PATH=plugins \"$ORRERY\" plugins";
       }},
      {"plugin-not-a-library", 0, "orrery: warning: refused plugin plugins/notes.so: plugins/notes.so: invalid ELF header",
       [](auto& d) {
         write(d, "plugins/notes.so", std::string(200, '#') + "\nnot a shared library, a text file named .so\n");
         return "ORRERY_PLUGIN_PATH=plugins \"$ORRERY\" plugins";
       }},
      {"plugin-no-entry-point", 0,
       "orrery: warning: refused plugin plugins/core.so: not an Orrery plugin (no orrery_plugin_abi entry point)",
       [](auto& d) {
         plugin_link(d, (fs::path(ORRERY_BIN).parent_path().parent_path() / "lib" / "liborrery_core.so").string(), "core.so");
         return "ORRERY_PLUGIN_PATH=plugins \"$ORRERY\" plugins";
       }},
      {"plugin-describe-throws", 0,
       "orrery: warning: refused plugin plugins/throwing_describe.so: its entry point orrery_plugin_describe failed: cannot build the option schema",
       [](auto& d) {
         plugin_link(d, unsafe_plugin("throwing_describe"), "throwing_describe.so");
         return "ORRERY_PLUGIN_PATH=plugins \"$ORRERY\" plugins";
       }},
      {"plugin-describe-throws-non-std", 0,
       "orrery: warning: refused plugin plugins/throwing_describe.so: its entry point orrery_plugin_describe failed: it threw an exception that is not a std::exception",
       [](auto& d) {
         plugin_link(d, unsafe_plugin("throwing_describe"), "throwing_describe.so");
         return "ORRERY_TEST_THROW=other ORRERY_PLUGIN_PATH=plugins \"$ORRERY\" plugins";
       }},
      {"plugin-factory-error", 1,
       "orrery: script.lua:1: data plugin 'throwing': option what = \"error\" asks for this error",
       [](auto& d) {
         plugin_link(d, unsafe_plugin("throwing"), "throwing.so");
         return "ORRERY_PLUGIN_PATH=plugins " + script(d, "orrery.data{\"throwing\", what = \"error\"}\n");
       }},
      {"plugin-factory-throws", 1,
       "orrery: script.lua:1: data plugin 'throwing' (plugins/throwing.so) failed: vector::_M_range_check: __n (which is 3) >= this->size() (which is 3)",
       [](auto& d) {
         plugin_link(d, unsafe_plugin("throwing"), "throwing.so");
         return "ORRERY_PLUGIN_PATH=plugins " + script(d, "orrery.data{\"throwing\", what = \"std\"}\n");
       }},
      {"plugin-factory-throws-non-std", 1,
       "orrery: script.lua:1: data plugin 'throwing' (plugins/throwing.so) failed: it threw an exception that is not a std::exception",
       [](auto& d) {
         plugin_link(d, unsafe_plugin("throwing"), "throwing.so");
         return "ORRERY_PLUGIN_PATH=plugins " + script(d, "orrery.data{\"throwing\", what = \"other\"}\n");
       }},
      {"plugin-static-initialiser-throws", 134,
       "orrery: the plugin plugins/static_throw.so aborted the program while it was being loaded",
       [](auto& d) {
         plugin_link(d, unsafe_plugin("static_throw"), "static_throw.so");
         return "ORRERY_PLUGIN_PATH=plugins \"$ORRERY\" plugins";
       }},
      {"plugin-aborts-on-load", 134, "orrery: the plugin plugins/aborting.so aborted the program while it was being loaded",
       [](auto& d) {
         plugin_link(d, unsafe_plugin("aborting"), "aborting.so");
         return "ORRERY_PLUGIN_PATH=plugins \"$ORRERY\" plugins";
       }},

      // CSV files through the csv data plugin.
      {"csv-ragged-row", 1, "orrery: script.lua:1: ragged.csv:3: expected 2 fields as in the header, found 1",
       [](auto& d) { return csv_source(d, "ragged.csv", "a,b\n1,2\n3\n4,5\n"); }},
      {"csv-unclosed-quote", 1, "orrery: script.lua:1: quote.csv:3: a quoted field is not closed by the end of the file",
       [](auto& d) { return csv_source(d, "quote.csv", "a,b\n1,2\n3,\"4\n5,6\n"); }},
      {"csv-binary", 1, "orrery: script.lua:1: binary.csv:2: holds binary data (a NUL byte): not a text CSV file",
       [](auto& d) { return csv_source(d, "binary.csv", std::string("a,b\n1,2\0\x01\n", 11)); }},
      {"csv-empty-file", 1, "orrery: script.lua:1: empty.csv: empty file, expected a header row",
       [](auto& d) { return csv_source(d, "empty.csv", ""); }},
      {"csv-header-only", 1, "orrery: script.lua:1: header.csv:1: no data rows after the header",
       [](auto& d) { return csv_source(d, "header.csv", "time,a,b\n"); }},
      {"csv-non-numeric", 1,
       "orrery: script.lua:1: text.csv:3: column \"a\": non-numeric value \"n.a.\" (values are numbers; NA, N/A, NaN, null, None, -, ? or an empty field mark a missing one)",
       [](auto& d) { return csv_source(d, "text.csv", "time,a\n2024-01-01,1\n2024-01-02,n.a.\n", ", columns = \"a\""); }},
      {"csv-infinite", 1, "orrery: script.lua:1: inf.csv:3: column \"a\": infinite value \"inf\"",
       [](auto& d) { return csv_source(d, "inf.csv", "a\n1\ninf\n"); }},
      {"csv-beyond-float32", 1,
       "orrery: script.lua:1: big.csv:3: column \"a\": the value 1e+39 is beyond float32's range (+-3.4e38): rescale the column",
       [](auto& d) { return csv_source(d, "big.csv", "a\n1\n1e39\n"); }},
      {"csv-beyond-double", 1,
       "orrery: script.lua:1: huge.csv:3: column \"a\": the value \"1e400\" is outside a double's range (1e-308 to 1.8e308 in "
       "size): rescale the column",
       [](auto& d) { return csv_source(d, "huge.csv", "a\n1\n1e400\n"); }},
      {"csv-bad-time", 1,
       "orrery: script.lua:1: times.csv:3: column \"time\": cannot read \"yesterday\" as a time (expected an ISO date",
       [](auto& d) { return csv_source(d, "times.csv", "time,a\n2024-01-01,1\nyesterday,2\n"); }},
      {"csv-repeated-time", 1,
       "orrery: script.lua:1: repeat.csv:3: column \"time\": the time 2024-01-01 00:00:00 repeats line 2; each time may appear once per series",
       [](auto& d) { return csv_source(d, "repeat.csv", "time,a\n2024-01-01,1\n2024-01-01,2\n"); }},
      {"csv-missing-column", 1, "orrery: script.lua:1: a.csv: no column \"when\" (option timestamp); its columns are time, a",
       [](auto& d) { return csv_source(d, "a.csv", "time,a\n2024-01-01,1\n", ", timestamp = \"when\""); }},
      {"csv-all-missing", 1,
       "orrery: script.lua:1: csv: no series for the train split in missing.csv (no series at all: the 2 found have no observed value, only missing markers or empty fields)",
       [](auto& d) { return csv_source(d, "missing.csv", "a,b\nNA,\nNA,\nNaN,null\n"); }},
      {"csv-no-match", 1, "orrery: script.lua:1: no file matches \"data/*.csv\"",
       [](auto& d) { return script(d, "orrery.data{\"csv\", files = \"data/*.csv\"}\n"); }},
      {"csv-no-such-file", 1, "orrery: script.lua:1: no such file \"sales.csv\"",
       [](auto& d) { return script(d, "orrery.data{\"csv\", files = \"sales.csv\"}\n"); }},
      {"csv-unreadable", 1, "orrery: script.lua:1: cannot open secret.csv: Permission denied",
       [](auto& d) {
         write(d, "secret.csv", "a\n1\n2\n");
         fs::permissions(d + "/secret.csv", fs::perms::none);
         fs::create_directories(d + "/cache");
         fs::permissions(d + "/cache", fs::perms::all);
         write(d, "script.lua", "orrery.data{\"csv\", files = \"secret.csv\", cache_dir = \"cache\"}\n");
         return as_other_user("\"$ORRERY\" run script.lua");
       },
       Need::other_user},
      {"csv-bad-cell", 1,
       "orrery: script.lua:1: cells.csv:52: column \"b\": non-numeric value \"abc\" (values are numbers; NA, N/A, NaN, "
       "null, None, -, ? or an empty field mark a missing one)",
       [](auto& d) {
         std::string text = "time,a,b\n";
         for (int i = 0; i < 60; ++i)
           text += std::to_string(1700000000 + 3600 * i) + "," + std::to_string(i) + "," + (i == 50 ? "abc" : std::to_string(i)) + "\n";
         return csv_source(d, "cells.csv", text, ", timestamp_format = \"unix\"");
       }},
      {"csv-below-float32", 1,
       "orrery: script.lua:1: tiny.csv:3: column \"a\": the value 1e-40 is below float32's smallest normal number "
       "(1.2e-38): rescale the column",
       [](auto& d) { return csv_source(d, "tiny.csv", "a\n1\n1e-40\n"); }},
      {"csv-named-pipe", 1,
       "orrery: script.lua:1: pipe.csv is a named pipe, not a data file (files = \"pipe.csv\"): Orrery reads regular "
       "files only, since a pipe or device could block or never end",
       [](auto& d) {
         if (::mkfifo((d + "/pipe.csv").c_str(), 0600) != 0) throw std::runtime_error("mkfifo failed");
         return script(d, "orrery.data{\"csv\", files = \"pipe.csv\"}\n");
       }},
      {"csv-million-columns", 1, "orrery: script.lua:1: wide.csv:1: columns 1 and 1000001 are both named \"c0\"",
       [](auto& d) {
         std::string text;
         for (int i = 0; i < 1000000; ++i) text.append("c").append(std::to_string(i)).append(",");
         text += "c0\n1";
         for (int i = 0; i < 1000000; ++i) text += ",1";
         return csv_source(d, "wide.csv", text + "\n");
       }},
      {"csv-one-row", 1,
       "orrery: script.lua:1: csv: no series for the train split in one.csv (the longest series has 1 step, too few to "
       "split in time between training and validation (holdout = 0.1 of each series' steps, at least one, go to "
       "validation))",
       [](auto& d) { return csv_source(d, "one.csv", "a\n5\n"); }},
      {"csv-exclude-last-all", 1,
       "orrery: script.lua:1: csv: no series for the train split in three.csv (exclude_last = 10 keeps back every step: "
       "the longest series has 3 steps)",
       [](auto& d) { return csv_source(d, "three.csv", "a\n1\n2\n3\n", ", exclude_last = 10"); }},
      {"csv-dates-far-apart", 1,
       "orrery: script.lua:1: dates.csv: column \"time\": irregular timestamps: the typical spacing is 3652058 days but "
       "from 0001-01-01 00:00:00 to 9999-12-31 00:00:00 it is 3652058 days, and the day of the month moves from 1 to "
       "31: not a whole number of months (set the frequency explicitly if the data has one)",
       [](auto& d) { return csv_source(d, "dates.csv", "time,a\n0001-01-01,1\n9999-12-31,2\n"); }},
      {"train-series-too-short", 1,
       "orrery: script.lua:2: data plugin 'csv': the longest series of the train split has 9 steps, too short to train "
       "on: this model needs series of at least 34 steps (a patch of 32 to predict and two observations before it)",
       [](auto& d) {
         write(d, "short.csv", "a\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n");
         return with_model(d, "orrery.train{model = m, data = {\"csv\", files = \"short.csv\"}, steps = 2, batch_size = 2, "
                              "context_length = 64, quiet = true}");
       }},
      {"csv-folder", 1, "orrery: script.lua:1: data is a folder, not a data file (files = \"data\")",
       [](auto& d) { fs::create_directories(d + "/data"); return script(d, "orrery.data{\"csv\", files = \"data\"}\n"); }},

      // Parquet files through the parquet data plugin (built where pyarrow's Arrow C++ is).
      {"parquet-not-parquet", 1, "orrery: script.lua:1: sales.parquet: neither Parquet nor Arrow IPC",
       [](auto& d) {
         write(d, "sales.parquet", "date,sales\n2024-01-01,3\n");
         return script(d, "orrery.data{\"parquet\", files = \"sales.parquet\"}\n");
       },
       Need::parquet},
      {"parquet-truncated", 1,
       "orrery: script.lua:1: cut.parquet: the file is damaged or truncated, or not the Parquet or Arrow file it looks "
       "like (Arrow: Parquet magic bytes not found in footer",
       [](auto& d) {
         parquet(d, "whole.parquet", "pa.table({'v': pa.array([float(i) for i in range(1000)])})");
         const std::string bytes = test::read_text(d + "/whole.parquet");
         write(d, "cut.parquet", bytes.substr(0, bytes.size() / 2));
         return script(d, "orrery.data{\"parquet\", files = \"cut.parquet\"}\n");
       },
       Need::parquet},
      {"parquet-damaged-footer", 1,
       "orrery: script.lua:1: flipped.parquet: the file is damaged or truncated, or not the Parquet or Arrow file it "
       "looks like (Arrow: ",
       [](auto& d) {
         parquet(d, "whole.parquet", "pa.table({'v': pa.array([float(i) for i in range(100)])})");
         std::string bytes = test::read_text(d + "/whole.parquet");
         uint32_t length = 0;
         std::memcpy(&length, bytes.data() + bytes.size() - 8, 4);  // the footer: metadata, its length, "PAR1"
         bytes[bytes.size() - 8 - length] = static_cast<char>(bytes[bytes.size() - 8 - length] ^ 0xFF);
         write(d, "flipped.parquet", bytes);
         return script(d, "orrery.data{\"parquet\", files = \"flipped.parquet\"}\n");
       },
       Need::parquet},
      {"parquet-non-numeric", 1, "orrery: script.lua:1: text.parquet: row 3: column \"v\": non-numeric value \"abc\" (string)",
       [](auto& d) {
         parquet(d, "text.parquet", "pa.table({'v': ['1', '2', 'abc']})");
         return script(d, "orrery.data{\"parquet\", files = \"text.parquet\", columns = \"v\"}\n");
       },
       Need::parquet},
      {"parquet-beyond-float32", 1,
       "orrery: script.lua:1: big.parquet: row 2: column \"v\": the value 1e+39 is beyond float32's range (+-3.4e38): rescale the column",
       [](auto& d) {
         parquet(d, "big.parquet", "pa.table({'v': pa.array([1.0, 1e39, 2.0])})");
         return script(d, "orrery.data{\"parquet\", files = \"big.parquet\"}\n");
       },
       Need::parquet},
      {"parquet-all-missing", 1,
       "orrery: script.lua:1: parquet: no series for the train split in nulls.parquet (no series at all: the 1 found have no observed value",
       [](auto& d) {
         parquet(d, "nulls.parquet", "pa.table({'v': pa.array([None, None, None], pa.float64())})");
         return script(d, "orrery.data{\"parquet\", files = \"nulls.parquet\"}\n");
       },
       Need::parquet},

      // Files read whole: orrery.read_csv, orrery.read_json and orrery forecast --input.
      {"read-csv-missing", 1, "orrery: script.lua:1: cannot open sales.csv: No such file or directory",
       [](auto& d) { return script(d, "orrery.read_csv(\"sales.csv\")\n"); }},
      {"read-csv-ragged", 1, "orrery: script.lua:1: ragged.csv:3: expected 2 fields, found 1",
       [](auto& d) { write(d, "ragged.csv", "a,b\n1,2\n3\n"); return script(d, "orrery.read_csv(\"ragged.csv\")\n"); }},
      {"read-json-missing", 1, "orrery: script.lua:1: cannot open results.json: No such file or directory",
       [](auto& d) { return script(d, "orrery.read_json(\"results.json\")\n"); }},
      {"read-json-invalid", 1, "orrery: script.lua:1: cut.json: not valid JSON: [json.exception.parse_error.101] parse error at line 2",
       [](auto& d) { write(d, "cut.json", "{\"a\": [1, 2\n"); return script(d, "orrery.read_json(\"cut.json\")\n"); }},
      {"forecast-input-empty-column", 1,
       "orrery: empty.csv: column \"b\" has no observed value: there is nothing to forecast from",
       [](auto& d) { return forecast_input(d, "empty.csv", "time,a,b\n1,5,\n2,6,NA\n3,7,\n"); }},
      {"forecast-input-beyond-double", 1,
       "orrery: e400.csv:3: column \"a\": the value \"1e400\" is outside a double's range (1e-308 to 1.8e308 in size): "
       "rescale the column",
       [](auto& d) { return forecast_input(d, "e400.csv", "time,a\n1,5\n2,1e400\n3,7\n"); }},
      {"forecast-input-unclosed-quote", 1, "orrery: q.csv:3: a quoted field is not closed by the end of the file",
       [](auto& d) { return forecast_input(d, "q.csv", "time,a\n1,5\n2,\"15\n3,7\n"); }},
      {"forecast-input-hex", 1,
       "orrery: h.csv:3: column \"a\": non-numeric value \"0x64\" (values are numbers; NA, N/A, NaN, null, None, -, ? or "
       "an empty field mark a missing one)",
       [](auto& d) { return forecast_input(d, "h.csv", "time,a\n1,5\n2,0x64\n3,7\n"); }},
      {"forecast-input-huge", 1,
       "orrery: e300.csv: column \"a\": the value 1e+300 at step 1 is beyond +-1e150, where the forecast's float64 scaling overflows; rescale the series",
       [](auto& d) {
         write(d, "make.lua", kModel + "m:save(\"model.safetensors\")\n");
         write(d, "e300.csv", "time,a\n1,1e300\n2,2e300\n3,1e300\n");
         return "\"$ORRERY\" run make.lua && \"$ORRERY\" forecast --model model.safetensors --input e300.csv --horizon 2";
       }},

      // Forecasts from Lua.
      {"forecast-empty-series", 1, "orrery: script.lua:2: model:forecast: values is empty: there is nothing to forecast from",
       [](auto& d) { return with_model(d, "m:forecast{values = {}, horizon = 3}"); }},
      {"forecast-all-missing", 1,
       "orrery: script.lua:2: model:forecast: series[2] has no observed value: there is nothing to forecast from",
       [](auto& d) { return with_model(d, "m:forecast{series = {{1, 2, 3}, {0/0, 0/0}}, horizon = 3}"); }},
      {"forecast-horizon-zero", 1, "orrery: script.lua:2: forecast horizon must be at least 1, got 0",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, horizon = 0}"); }},
      {"forecast-horizon-too-long", 1,
       "orrery: script.lua:2: forecast horizon 2000000 is beyond 1048576 steps; forecast in parts with decode_block_size, or at a coarser frequency",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, horizon = 2000000}"); }},
      {"forecast-huge-values", 1,
       "orrery: script.lua:2: model:forecast: values: the value 1e+200 at step 3 is beyond +-1e150",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 1e200}, horizon = 2}"); }},
      {"forecast-block-size", 1,
       "orrery: script.lua:2: decode_block_size must be 0 (one pass) or a positive multiple of the patch size 32, got 48",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, horizon = 64, decode_block_size = 48}"); }},
      {"forecast-levels", 1, "orrery: script.lua:2: forecast levels must lie strictly between 0 and 1, got 1.5",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, horizon = 2, levels = {0.5, 1.5}}"); }},
      {"forecast-covariates-unread", 1,
       "orrery: script.lua:2: architecture plugin 'toto2', as this model was built, does not read variate roles, so it "
       "cannot tell covariates from targets (see its options in orrery plugins)",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, past_covariates = {{4, 5, 6}}, horizon = 2}"); }},
      {"forecast-past-covariate-length", 1,
       "orrery: script.lua:2: model:forecast: past_covariates[1] has 2 values, the series 3: a past-only covariate covers "
       "the series' history, step for step",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, past_covariates = {{4, 5}}, horizon = 2}"); }},
      {"forecast-future-covariate-length", 1,
       "orrery: script.lua:2: model:forecast: future_covariates[1] has 3 values; a known-future covariate covers the "
       "series' history and the horizon, 3 + 2",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, future_covariates = {{4, 5, 6}}, horizon = 2}"); }},
      {"forecast-future-covariate-gap", 1,
       "orrery: script.lua:2: model:forecast: future_covariates[1] has no value at horizon step 2: a known-future "
       "covariate must be known there",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, future_covariates = {{4, 5, 6, 7, 0/0}}, horizon = 2}"); }},
      {"forecast-box-cox-exponent", 1,
       "orrery: script.lua:2: box_cox's exponent must lie in [0, 1] (0: log, 1: none), got 1.5",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, box_cox = 1.5, horizon = 2}"); }},
      {"forecast-box-cox-type", 1,
       "orrery: script.lua:2: model:forecast: box_cox must be true (Guerrero's exponent), false, \"checked\" or an "
       "exponent in [0, 1], got the string \"yes\"",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, box_cox = \"yes\", horizon = 2}"); }},
      {"forecast-box-cox-nan", 1,
       "orrery: script.lua:2: model:forecast: box_cox must be true (Guerrero's exponent), false, \"checked\" or an "
       "exponent in [0, 1], got NaN",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, box_cox = 0/0, horizon = 2}"); }},
      {"forecast-season-without-box-cox", 1,
       "orrery: script.lua:2: model:forecast: season sets the blocks of Box-Cox's exponent by Guerrero's method and "
       "the season of combine's baselines; with box_cox = false or an exponent, give combine, or leave season out",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, box_cox = false, season = 12, horizon = 2}"); }},
      {"forecast-combine-check-alone", 1,
       "orrery: script.lua:2: model:forecast: combine_check checks a combination; give combine",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, combine_check = true, horizon = 2}"); }},
      {"forecast-check-origins-unused", 1,
       "orrery: script.lua:2: model:forecast: check_origins sets the horizons a check scores; with box_cox other than "
       "\"checked\", give combine_check = true, or leave check_origins out",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, box_cox = false, check_origins = 2, horizon = 2}"); }},
      {"forecast-box-cox-average-unused", 1,
       "orrery: script.lua:2: model:forecast: box_cox_average averages the Box-Cox forecast with the plain one; with "
       "box_cox = false, leave it out",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, box_cox = false, box_cox_average = true, horizon = 2}"); }},
      {"forecast-check-origins-zero", 1,
       "orrery: script.lua:2: model:forecast: check_origins must be at least 1 (the horizons a check scores), got 0",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, check_origins = 0, horizon = 2}"); }},
      {"forecast-box-cox-season", 1, "orrery: script.lua:2: forecast season must be at least 1 step (1: none), got 0",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, box_cox = true, season = 0, horizon = 2}"); }},
      {"forecast-future-covariate-magnitude", 1,
       "orrery: script.lua:2: model:forecast: future_covariates[1]: the value 1e+200 at horizon step 2 is beyond "
       "+-1e150, where the forecast's float64 scaling overflows; rescale the covariate",
       [](auto& d) { return with_model(d, "m:forecast{values = {1, 2, 3}, future_covariates = {{4, 5, 6, 7, 1e200}}, horizon = 2}"); }},

      // Weights files (safetensors) and saved models.
      {"safetensors-too-short", 1,
       "orrery: short.safetensors: not a valid safetensors file: shorter than its 8-byte header length",
       [](auto& d) { return forecast_with(d, "short.safetensors", "PK\x03"); }},
      {"safetensors-header-length", 1,
       "orrery: length.safetensors: not a valid safetensors file: header length 1000000000000 exceeds the file",
       [](auto& d) {
         std::string b = safetensors("{}", "");
         const uint64_t n = 1000000000000ull;
         b.replace(0, 8, std::string(reinterpret_cast<const char*>(&n), 8));
         return forecast_with(d, "length.safetensors", b);
       }},
      {"safetensors-header-not-json", 1, "orrery: garbled.safetensors: not a valid safetensors file: its header is not JSON",
       [](auto& d) { return forecast_with(d, "garbled.safetensors", safetensors("{\"w\": {\"dtype\": \"F3", "")); }},
      {"safetensors-truncated", 1,
       "orrery: cut.safetensors: not a valid safetensors file: tensor 'w' ends at byte 16 of the data, but the file holds 8 (truncated?)",
       [](auto& d) {
         return forecast_with(d, "cut.safetensors",
                              safetensors("{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", std::string(8, '\0')));
       }},
      {"safetensors-bad-dtype", 1,
       "orrery: dtype.safetensors: not a valid safetensors file: tensor 'w' has unsupported dtype \"F99\"",
       [](auto& d) {
         return forecast_with(d, "dtype.safetensors",
                              safetensors("{\"w\":{\"dtype\":\"F99\",\"shape\":[4],\"data_offsets\":[0,16]}}", std::string(16, '\0')));
       }},
      {"safetensors-overlap", 1,
       "orrery: overlap.safetensors: not a valid safetensors file: tensors 'a' and 'b' overlap (bytes 8 to 16)",
       [](auto& d) {
         return forecast_with(d, "overlap.safetensors",
                              safetensors("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                                          "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}",
                                          std::string(16, '\0')));
       }},
      {"safetensors-shape-mismatch", 1,
       "orrery: script.lua:3: w.safetensors does not match this model: 'patch_proj.linear1.weight' has shape [128, 64], the model expects [256, 64]",
       [](auto& d) {
         return with_model(d, "m:save(\"w.safetensors\")\n"
                              "orrery.model{arch = {\"toto2\", d_model = 64, num_layers = 1, num_heads = 2}}:load(\"w.safetensors\")");
       }},
      {"safetensors-missing", 1, "orrery: script.lua:2: cannot open best.safetensors: No such file or directory",
       [](auto& d) { return with_model(d, "m:load(\"best.safetensors\")"); }},
      {"load-no-model", 1,
       "orrery: script.lua:1: results holds no model: expected model.safetensors (Orrery weights, written by model:save) or config.json with weights (a released checkpoint)",
       [](auto& d) { write(d, "results/notes.txt", "nothing here\n"); return script(d, "orrery.load(\"results\")\n"); }},

      // Files written: run folders and outputs.
      {"save-missing-folder", 1, "orrery: script.lua:2: cannot write models/m.safetensors: No such file or directory",
       [](auto& d) { return with_model(d, "m:save(\"models/m.safetensors\")"); }},
      {"runs-dir-is-a-file", 1, "orrery: script.lua:2: cannot create runs folder notes.txt: Not a directory",
       [](auto& d) {
         write(d, "notes.txt", "a file, not a folder\n");
         return with_model(d, "orrery.train{model = m, steps = 1, batch_size = 2, context_length = 64, quiet = true, runs_dir = \"notes.txt\"}");
       }},
      {"runs-dir-unwritable", 1, "orrery: script.lua:2: cannot create run folder readonly/first: Permission denied",
       [](auto& d) {
         fs::create_directories(d + "/readonly");
         fs::permissions(d + "/readonly", fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                              fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
         write(d, "script.lua", kModel + "orrery.train{model = m, steps = 1, batch_size = 2, context_length = 64, quiet = true, "
                                         "runs_dir = \"readonly\", name = \"first\"}\n");
         return as_other_user("\"$ORRERY\" run script.lua");
       },
       Need::other_user},
      {"run-folder-full", 1, "orrery: script.lua:2: cannot write r/full/config.json: File too large",
       [](auto& d) {
         with_model(d, "orrery.train{model = m, steps = 1, batch_size = 2, context_length = 64, quiet = true, "
                       "runs_dir = \"r\", name = \"full\"}");
         return std::string("ulimit -f 1 && \"$ORRERY\" run script.lua");
       }},
      {"write-not-a-regular-file", 1, "orrery: script.lua:1: cannot write results.json: it is not a regular file",
       [](auto& d) {
         if (::mkfifo((d + "/results.json").c_str(), 0644) != 0) throw std::runtime_error("mkfifo failed");
         return script(d, "orrery.write_json(\"results.json\", {loss = 0.5})\n");
       }},

      // Checkpoints, resume and numerical faults. `resumable` is a run "r" of steps=args.steps
      // (3), batch_size=args.batch (2), a checkpoint every step, stopped by an error at step
      // args.stop when given.
      {"resume-damaged-checkpoint", 0,
       "warning: skipping checkpoint runs/r/checkpoints/step-000000002: model.safetensors fails its CRC-32 check",
       [](auto& d) {
         resumable(d);
         return std::string("\"$ORRERY\" run script.lua stop=3 2>/dev/null; "
                            "printf X | dd of=runs/r/checkpoints/step-000000002/model.safetensors bs=1 seek=200 "
                            "conv=notrunc 2>/dev/null; \"$ORRERY\" run script.lua --resume");
       }},
      {"resume-other-run", 1,
       "orrery: script.lua:2: cannot resume run runs/r: this script asks for another run (train.batch_size was 2, "
       "now 4). Give it another name to start a new run",
       [](auto& d) {
         resumable(d);
         return std::string("\"$ORRERY\" run script.lua && \"$ORRERY\" run script.lua --resume batch=4");
       }},
      {"resume-run-in-use", 1, "orrery: script.lua:2: run folder runs/r is in use: another process is training this run",
       [](auto& d) {
         resumable(d);
         return std::string("\"$ORRERY\" run script.lua && flock runs/r/.lock \"$ORRERY\" run script.lua --resume");
       }},
      {"resume-metrics-changed", 1,
       "its checkpoint recorded: it was changed since, so the run cannot go on from there",
       [](auto& d) {
         resumable(d);
         return std::string("\"$ORRERY\" run script.lua stop=3 2>/dev/null; : > runs/r/metrics.jsonl; "
                            "\"$ORRERY\" run script.lua --resume");
       }},
      {"resume-finished-without-checkpoint", 1,
       "orrery: script.lua:2: run runs/f finished at step 1 but has no checkpoint of that step to load its model from "
       "(it ran with checkpoints off); give the script another name to train anew",
       [](auto& d) {
         with_model(d, "orrery.train{model = m, steps = 1, batch_size = 2, context_length = 64, quiet = true, "
                       "name = \"f\", checkpoint_minutes = 0}");
         return std::string("\"$ORRERY\" run script.lua && \"$ORRERY\" run script.lua --resume");
       }},
      {"nan-storm", 1,
       "orrery: script.lua:2: training stopped at step 3: 2 steps in a row had a non-finite loss or gradient "
       "(max_skipped_steps = 2; lr 1.00e+30). The weights are those after step 1; step 2 was the first to fail: lower "
       "the learning rate, tighten clipping or check the data. The checkpoint of step 1 holds those weights and was set "
       "aside (checkpoints/diverged-step-*); no checkpoint from before step 2 remains, so --resume starts the run over",
       [](auto& d) {
         return with_model(d, "orrery.train{model = m, steps = 40, batch_size = 2, context_length = 64, quiet = true, "
                              "optimizer = {\"adamw\", lr = 1e30}, max_skipped_steps = 2, checkpoint_every = 1}");
       }},
      {"diverged-window", 1,
       "had a non-finite loss or gradient (max_skipped_steps = 10; lr 1.00e+06)",
       [](auto& d) {
         return with_model(d, "orrery.train{model = m, steps = 60, batch_size = 2, context_length = 64, quiet = true, "
                              "optimizer = {\"adamw\", lr = 1e6}}");
       }},
      {"forecast-diverged-weights", 1,
       "orrery: the model's forecast is not finite (NaN): its weights give no finite output for these series, as a "
       "diverged training run's do; retrain it (a lower learning rate) or load an earlier checkpoint",
       [](auto& d) {
         with_model(d, "orrery.train{model = m, steps = 40, batch_size = 2, context_length = 64, quiet = true, name = \"d\", "
                       "optimizer = {\"adamw\", lr = 1e30}, max_skipped_steps = 2, checkpoint_every = 1}");
         write(d, "in.csv", "a\n1\n2\n3\n4\n5\n");
         return std::string("\"$ORRERY\" run script.lua 2>/dev/null; \"$ORRERY\" forecast --model "
                            "runs/d/checkpoints/diverged-step-000000001/model.safetensors --input in.csv --horizon 4");
       }},
      {"checkpoint-record-edited", 0,
       "warning: skipping checkpoint runs/r/checkpoints/step-000000002: checkpoint.json fails its CRC-32 check (edited "
       "or damaged)",
       [](auto& d) {
         resumable(d);
         return std::string("\"$ORRERY\" run script.lua stop=3 2>/dev/null; sed -i 's/\"metrics_bytes\": /&9/' "
                            "runs/r/checkpoints/step-000000002/checkpoint.json; \"$ORRERY\" run script.lua --resume");
       }},
      {"resume-config-missing", 1,
       "orrery: script.lua:2: cannot resume run runs/r: its config.json is missing, so its checkpoints cannot be checked "
       "against this script. Restore it (each checkpoint keeps a copy: the \"config\" of "
       "checkpoints/step-N/checkpoint.json), or give the script another name to start a new run",
       [](auto& d) {
         resumable(d);
         return std::string("\"$ORRERY\" run script.lua stop=3 2>/dev/null; rm runs/r/config.json; "
                            "\"$ORRERY\" run script.lua --resume");
       }},
      {"checkpoint-keep-zero", 1,
       "orrery: script.lua:2: option 'checkpoint_keep' of orrery.train must be >= 1, got number 0",
       [](auto& d) {
         return with_model(d, "orrery.train{model = m, steps = 1, batch_size = 2, context_length = 64, checkpoint_keep = 0}");
       }},
      {"checkpoint-at-zero", 1,
       "orrery: script.lua:2: orrery.train option 'checkpoint_at': 0 is not a step (a whole number from 1)",
       [](auto& d) {
         return with_model(d, "orrery.train{model = m, steps = 1, batch_size = 2, context_length = 64, checkpoint_at = {0}}");
       }},
      {"checkpoint-at-fraction", 1,
       "orrery: script.lua:2: orrery.train option 'checkpoint_at': 1.5 is not a step (a whole number from 1)",
       [](auto& d) {
         return with_model(d, "orrery.train{model = m, steps = 1, batch_size = 2, context_length = 64, checkpoint_at = {1.5}}");
       }},
      {"checkpoint-at-huge", 1,
       "orrery: script.lua:2: orrery.train option 'checkpoint_at': 1e+30 is not a step (a whole number from 1)",
       [](auto& d) {
         return with_model(d, "orrery.train{model = m, steps = 1, batch_size = 2, context_length = 64, checkpoint_at = {1e30}}");
       }},
      {"checkpoint-at-beyond-steps", 1,
       "orrery: script.lua:2: orrery.train option 'checkpoint_at': step 100 is beyond the run's 6 steps, so it would "
       "never be written",
       [](auto& d) {
         return with_model(d, "orrery.train{model = m, steps = 6, batch_size = 2, context_length = 64, checkpoint_at = {100}}");
       }},
      {"train-validation-too-short", 1,
       "orrery: script.lua:2: data plugin 'csv': the longest series of the validation split has 20 steps, too short to "
       "train on: this model needs series of at least 34 steps (a patch of 32 to predict and two observations before "
       "it); its files are split in time, the last 0.1 of each series held out (the data's option holdout): holdout = "
       "0.18 holds out about 35 steps; or train without validation: val_batches = 0 and forecast_series = 0",
       [](auto& d) {
         std::string text = "a,b\n";
         for (int t = 0; t < 200; ++t) text += std::to_string(t % 11) + "," + std::to_string((t * 7) % 13) + "\n";
         write(d, "s200.csv", text);
         return with_model(d, "orrery.train{model = m, data = {\"csv\", files = \"s200.csv\"}, steps = 2, batch_size = 2, "
                              "context_length = 64, val_batches = 1}");
       }},
      {"text-one-line", 1,
       "orrery: script.lua:1: data plugin 'text': 1 documents in \"a.txt\" leave none for validation at "
       "validation_share = 0.05: give more text, or validation_share = 0 to train without validation",
       [](auto& d) {
         std::string line;
         for (int i = 0; i < 20000; ++i) line += "word ";
         write(d, "a.txt", line);
         return script(d, "local d = orrery.data{\"text\", files = \"a.txt\", documents = \"line\"}\n");
       }},
      {"text-tokenizer-folder", 1,
       "orrery: script.lua:1: data plugin 'text' (option tokenizer): folder is a folder, not a tokenizer file (JSON, "
       "written by save_tokenizer)",
       [](auto& d) {
         write(d, "b.txt", "one line\n\ntwo\n\nthree\n");
         fs::create_directories(d + "/folder");
         return script(d, "local d = orrery.data{\"text\", files = \"b.txt\", tokenizer = \"folder\", validation_share = 0}\n");
       }},
      {"branch-all-damaged", 1,
       "orrery: script.lua:2: branch: every checkpoint of runs/r fails its checks (the warnings above say why); branch "
       "from another run",
       [](auto& d) {
         resumable(d);
         write(d, "branch.lua", kModel + "orrery.train{model = m, steps = 4, batch_size = 2, context_length = 64, "
                                          "quiet = true, name = \"b\", branch = \"runs/r\"}\n");
         return std::string("\"$ORRERY\" run script.lua steps=2 && for c in runs/r/checkpoints/step-*; do "
                            "printf x | dd of=$c/model.safetensors bs=1 seek=100 conv=notrunc 2>/dev/null; done; "
                            "cp branch.lua script.lua && \"$ORRERY\" run script.lua");
       }},

      // Data parallel: orrery launch, and the variables torchrun and Slurm set.
      {"dp-launch-processes", 1, "orrery: launch: -n takes the number of processes, 1 to 1024 (see orrery launch --help)",
       [](auto& d) {
         script(d, "print(1)\n");
         return std::string("\"$ORRERY\" launch -n 0 script.lua");
       }},
      {"dp-launch-variable", 1, "orrery: launch environment: RANK='x' is not a whole number of 0 or more",
       [](auto& d) { return "RANK=x WORLD_SIZE=2 LOCAL_RANK=0 " + script(d, "print(1)\n"); }},
      {"dp-timeout-variable", 1, "orrery: launch environment: ORRERY_DIST_TIMEOUT='soon' is not a number of seconds above 0",
       [](auto& d) { return "RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 ORRERY_DIST_TIMEOUT=soon " + script(d, "print(1)\n"); }},
      {"dp-shard-files", 1,
       "orrery: script.lua:1: csv: shard_files gives each of the 2 ranks its own files, but there are only 1: give at "
       "least as many files as ranks, or turn shard_files off",
       [](auto& d) {
         csv_source(d, "a.csv", "a\n1\n2\n", ", shard_files = true");
         return std::string("\"$ORRERY\" launch -n 2 script.lua");
       }},
      // Ranks given wrong variables by hand, as a hand-written launcher or an sbatch script might;
      // each job on a free port of its own, ranks timing out after 10 s.
      {"dp-duplicate-rank", 1,
       "orrery: rank 1 of 2: another process already joined as rank 1 (two processes given RANK=1?); every rank of a "
       "job needs a number of its own",
       [](auto& d) {
         script(d, "print('rank ' .. orrery.world().rank .. ' joined'); os.execute('sleep 6')\n");
         return ranks_env() + "(RANK=0 \"$ORRERY\" run script.lua & RANK=1 \"$ORRERY\" run script.lua & "
                                      "sleep 3; RANK=1 \"$ORRERY\" run script.lua; r=$?; wait; exit $r)";
       }},
      {"dp-world-size", 1, ": every rank of a job must be given the same world size",
       [](auto& d) {
         script(d, "print(1)\n");
         return ranks_env() + "(RANK=0 \"$ORRERY\" run script.lua & p=$!; RANK=1 WORLD_SIZE=3 \"$ORRERY\" run "
                                      "script.lua; wait $p)";
       }},
      {"dp-other-run", 1,
       "orrery: script.lua:2: rank 1 asks for another run than rank 0 (train.steps is 10 on rank 0, 12 on rank 1): "
       "every rank must run the same script with the same arguments",
       [](auto& d) {
         with_model(d, "orrery.train{model = m, steps = args.steps, batch_size = 2, context_length = 64, quiet = true}");
         return ranks_env() + "(RANK=0 \"$ORRERY\" run script.lua steps=10 & p=$!; RANK=1 \"$ORRERY\" run "
                                      "script.lua steps=12; wait $p)";
       }},
      {"dp-hung-rank", 1, "; where the ranks were: rank 0 starting step 7 (0.0 s ago), rank 1 starting step 6 (",
       [](auto& d) {
         with_model(d, "local w = orrery.world()\norrery.train{model = m, steps = 40, batch_size = 2, context_length = 64, "
                       "quiet = true, log_every = 1, on_step = function(e) if w.rank == 1 and e.step == 6 then "
                       "os.execute('sleep 15') end end}");
         return std::string("\"$ORRERY\" launch -n 2 --timeout 5 script.lua");
       }},
      {"dp-hung-before-start", 1,
       "rank 0 of 2: waiting for rank 1, which has not sent its value (it hangs, or failed before it: see its output); "
       "gathering the ranks' values through the store failed: wait timeout after 5000ms",
       [](auto& d) {
         with_model(d, "local w = orrery.world()\nif w.rank == 1 then os.execute('sleep 8') end\n"
                       "orrery.train{model = m, steps = 4, batch_size = 2, context_length = 64, quiet = true}");
         return std::string("\"$ORRERY\" launch -n 2 --timeout 5 script.lua");
       }},
      {"dp-launcher-killed", 0, "run r: resuming at step",
       [](auto& d) {
         with_model(d, "orrery.train{model = m, steps = 100000, batch_size = 2, context_length = 64, log_every = 1, "
                       "name = \"r\", max_seconds = args.seconds or 0}");
         // Before: both ranks trained on as orphans, and the relaunch found runs/r "in use".
         return std::string("\"$ORRERY\" launch -n 2 script.lua >launch.log 2>&1 & L=$!; "
                            "until grep -q 'step ' launch.log; do sleep 0.2; done; kill -9 $L; sleep 10; "
                            "\"$ORRERY\" launch -n 2 script.lua --resume seconds=0.001 1>&2");
       }},
      {"dp-resume-global-batch", 1,
       "orrery: script.lua:2: cannot resume run runs/g: this script asks for another run (the micro-batches of a step "
       "(accumulate x world size) were 1, now 2). Give it another name to start a new run",
       [](auto& d) {
         with_model(d, "orrery.train{model = m, steps = 1, batch_size = 2, context_length = 64, quiet = true, "
                       "name = \"g\", accumulate = args.accumulate or 1}");
         return std::string("\"$ORRERY\" run script.lua && \"$ORRERY\" run script.lua --resume accumulate=2");
       }},
  };
  return table;
}

bool parquet_built() {
  for (const auto& p : orrery::Registry::global().plugins())
    if (p.kind == orrery::PluginKind::data && p.name == "parquet") return true;
  return false;
}

// Runs `command` with /bin/sh in `dir`, standard output and error into files there; the exit
// code as a shell reports it (128 + the signal for a process killed by one).
Outcome run_in(const std::string& dir, const std::string& command) {
  const std::string shell = "cd '" + dir + "' || exit 99\nORRERY='" + ORRERY_BIN +
                            "'\nexport ORRERY_PLUGIN_PATH= HOME='" + dir + "'\n" + command + "\n";
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  const std::string out = dir + ".stdout", err = dir + ".stderr";
  posix_spawn_file_actions_addopen(&files, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&files, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> args = {"/bin/sh", "-c", shell};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  Outcome o;
  if (posix_spawn(&pid, "/bin/sh", &files, nullptr, argv.data(), environ) != 0) {
    posix_spawn_file_actions_destroy(&files);
    o.why = "cannot start /bin/sh";
    return o;
  }
  posix_spawn_file_actions_destroy(&files);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  o.exit = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
  o.err = test::read_text(err);
  return o;
}

// Every row run on two threads (each row is a process of its own, most of its time starting).
std::vector<Outcome> run_rows(const std::string& root) {
  const auto& table = rows();
  const bool parquet = parquet_built() && fs::exists(std::string(ORRERY_SOURCE_DIR) + "/.venv/bin/python");
  const bool other_user = ::geteuid() != 0 || fs::exists("/usr/bin/setpriv") || fs::exists("/bin/setpriv");
  const bool cuda = at::hasCUDA();
  std::vector<Outcome> outcomes(table.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < table.size();) {
      const Row& row = table[i];
      Outcome& o = outcomes[i];
      if ((row.need == Need::parquet && !parquet) || (row.need == Need::other_user && !other_user) ||
          (row.need == Need::no_cuda && cuda)) {
        o.skipped = true;
        o.why = row.need == Need::parquet     ? "the parquet plugin or the venv's python is missing"
                : row.need == Need::other_user ? "running as root without setpriv"
                                               : "this LibTorch has CUDA";
        continue;
      }
      const std::string dir = root + "/" + row.id;
      try {
        fs::create_directories(dir);
        o = run_in(dir, row.setup(dir));
      } catch (const std::exception& e) {
        o.why = std::string("setup failed: ") + e.what();
      }
    }
  };
  std::thread helper(work);
  work();
  helper.join();
  return outcomes;
}

struct DocRow {
  std::string page, id, input, message;
  int exit = -1;
  int line = 0;
};

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// The catalogue's pages: the conventions and most rows, then data files, forecasts and weights.
const std::vector<std::string> kCatalogue = {"docs/errors.md", "docs/errors-data.md"};

// The table rows of the catalogue: | `id` | input | `message` | exit |, with \| for a | inside a cell.
std::vector<DocRow> doc_rows() {
  std::vector<DocRow> out;
  for (const auto& page : kCatalogue) {
    std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/" + page);
    INFO(page);
    REQUIRE(in);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (!line.starts_with("| `")) continue;
      std::vector<std::string> cells;
      std::string cell;
      for (size_t i = 1; i < line.size(); ++i) {
        if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') cell += '|', ++i;
        else if (line[i] == '|') cells.push_back(trim(cell)), cell.clear();
        else cell += line[i];
      }
      INFO(page << ":" << n << ": " << line);
      REQUIRE(cells.size() == 4);
      auto code = [&](const std::string& c) {
        REQUIRE(c.size() >= 2);
        REQUIRE(c.front() == '`');
        REQUIRE(c.back() == '`');
        return c.substr(1, c.size() - 2);
      };
      DocRow r;
      r.page = page;
      r.line = n;
      r.id = code(cells[0]);
      r.input = cells[1];
      r.message = code(cells[2]);
      r.exit = std::stoi(cells[3]);
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("every row of the error catalogue: the documented exit code and message", "[slow]") {
  const std::string root = test::temp_dir("errors");
  const auto& table = rows();
  const std::vector<Outcome> outcomes = run_rows(root);
  for (size_t i = 0; i < table.size(); ++i) {
    const Row& row = table[i];
    const Outcome& o = outcomes[i];
    INFO("row " << row.id << " (" << root << "/" << row.id << ")");
    if (o.skipped) {
      WARN("row " << row.id << " skipped: " << o.why);
      continue;
    }
    INFO(o.why);
    INFO("stderr:\n" << o.err);
    CHECK(o.exit == row.exit);
    CHECK(o.err.find(row.message) != std::string::npos);
    // An error is reported once, by the program, never as a C++ crash report.
    CHECK((o.err.find("terminate called") == std::string::npos || row.exit == 134));
  }
}

TEST_CASE("docs/errors.md, docs/errors-data.md and this table hold the same rows, messages and exit codes") {
  const std::vector<DocRow> docs = doc_rows();
  const auto& table = rows();
  CHECK(table.size() >= 40);
  std::map<std::string, const DocRow*> by_id;
  for (const auto& d : docs) {
    INFO(d.page << ":" << d.line << ": row " << d.id);
    CHECK(by_id.emplace(d.id, &d).second);  // ids are unique
    CHECK(!d.input.empty());
  }
  std::set<std::string> ids;
  for (const auto& row : table) {
    INFO("row " << row.id << " of tests/test_errors.cpp");
    CHECK(ids.insert(row.id).second);
    const auto it = by_id.find(row.id);
    if (it == by_id.end()) {
      FAIL_CHECK("row " << row.id << " has a test but no row in docs/errors.md or docs/errors-data.md");
      continue;
    }
    CHECK(it->second->message == row.message);
    CHECK(it->second->exit == row.exit);
  }
  for (const auto& d : docs)
    if (!ids.count(d.id)) FAIL_CHECK(d.page << ":" << d.line << ": row " << d.id << " has no test in tests/test_errors.cpp");
}
