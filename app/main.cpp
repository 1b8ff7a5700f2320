// The `orrery` program: plugins, run, repl. Each command answers --help.
#include <malloc.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <c10/util/Exception.h>

#include "commands.h"
#include "orrery/host/program.h"
#include <ATen/Context.h>

#include "orrery/error.h"
#include "orrery/host/baselines.h"
#include "orrery/host/combination.h"
#include "orrery/host/forecast_csv.h"
#include "orrery/host/launch_env.h"
#include "orrery/host/lua_session.h"
#include "orrery/options.h"
#include "orrery/host/process_group.h"
#include "orrery/host/registry.h"

namespace orrery {

bool wants_help(const std::vector<std::string>& args) {
  for (const auto& a : args)
    if (a == "--help" || a == "-h") return true;
  return false;
}

int64_t parse_whole_number(const std::string& flag, const std::string& v) {
  size_t used = 0;
  long long n = 0;
  try { n = std::stoll(v, &used); } catch (const std::exception&) { used = 0; }
  if (used != v.size() || v.empty()) throw Error(flag + " takes a whole number, got '" + v + "'");
  return static_cast<int64_t>(n);
}

std::vector<std::string> comma_list(const std::string& value) {
  std::vector<std::string> out;
  std::stringstream in(value);
  for (std::string item; std::getline(in, item, ',');) {
    const size_t a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
    if (a != std::string::npos) out.push_back(item.substr(a, b - a + 1));
  }
  return out;
}

bool BoxCoxFlags::read(const std::string& command, const std::string& arg, bool& box_cox, bool& check,
                       bool& average) {
  const bool transform = arg == "--box-cox" || arg == "--box-cox-check" || arg == "--no-box-cox";
  if (!transform && arg != "--box-cox-average" && arg != "--no-box-cox-average") return false;
  std::string& seen = transform ? given : average_given;
  if (!seen.empty() && seen != arg)
    throw Error(command + ": " + seen + " and " + arg + " ask for different " + (transform ? "transforms" : "forecasts") +
                "; give one");
  seen = arg;
  if (transform) box_cox = arg != "--no-box-cox", check = arg == "--box-cox-check";
  else average = arg == "--box-cox-average";
  if (given == "--no-box-cox" && average_given == "--box-cox-average")
    throw Error(command + ": --box-cox-average averages the Box-Cox forecast with the plain one; --no-box-cox asks for "
                "none; give one");
  return true;
}

PluginSpec parse_plugin_choice(const std::string& flag, const std::string& v) {
  if (!v.starts_with("{")) return PluginSpec{v};
  const Json j = Json::parse(v, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("name") || !j["name"].is_string() ||
      (j.contains("options") && !j["options"].is_object()))
    throw Error(flag + " takes a plugin name or {\"name\": ..., \"options\": {...}} as JSON, got " + v);
  return PluginSpec{j["name"].get<std::string>(), j.value("options", Json::object())};
}

}  // namespace orrery

namespace {
using namespace orrery;

const char* kUsage =
    "usage: orrery <command> [options]\n"
    "\n"
    "Orrery, a research workbench for time-series foundation models.\n"
    "\n"
    "commands:\n"
    "  plugins [--json]                 list the loaded plugins and their options\n"
    "  run SCRIPT.lua [key=value ...]   run an experiment script (SCRIPT.lua --help: its arguments)\n"
    "  launch -n N SCRIPT.lua [...]     run it as N data-parallel processes on this machine\n"
    "  repl                             interactive Lua with the same API\n"
    "  forecast --model M --input CSV --horizon H [--out CSV]\n"
    "                                   quantile forecasts of every series in a CSV\n"
    "  eval [--model M]... [--data D]   GIFT-Eval scores of models and baselines on a benchmark\n"
    "  bench forecast [options]         latency of one forecast of a Toto 2.0 preset\n"
    "  bench train [options]            training step time, tokens/s, memory and MFU of a preset\n"
    "  bench data [options]             batch generation time against the training step\n"
    "  ui [RUNS_DIR | SCRIPT.lua]       the live dashboard (loss, forecasts, LR transfer)\n"
    "  plot RUN_DIR [--out DIR]         the dashboard's views as SVG files\n"
    "  new plugin KIND NAME [--dir DIR] a plugin of your own: source, CMakeLists.txt, README, script\n"
    "  export --model M --out DIR       a model in its released layout (Hugging Face Toto 2.0)\n"
    "  version                          print the version\n"
    "\n"
    "Plugins load from lib/orrery-plugins beside liborrery_core and from the folders in\n"
    "ORRERY_PLUGIN_PATH (colon-separated, searched first). `orrery <command> --help` for more.\n";


void report_problems(const Registry& r) {
  for (const auto& p : r.problems()) std::fprintf(stderr, "orrery: warning: %s\n", p.c_str());
}

int cmd_plugins(const std::vector<std::string>& args) {
  if (wants_help(args)) {
    std::printf("usage: orrery plugins [--json]\n\nLists every loaded plugin: kind, name, version, "
                "description, the file it was loaded from and its options. The folders of\n"
                "ORRERY_PLUGIN_PATH are searched first, so a plugin built there shadows a built-in one of the\n"
                "same kind and name (a warning names the one skipped).\n--json prints an array of {kind, name, "
                "version, description, options, path}.\n");
    return 0;
  }
  bool json = false;
  for (const auto& a : args) {
    if (a == "--json") json = true;
    else throw Error("plugins: unknown argument '" + a + "' (see orrery plugins --help)");
  }
  Registry& r = Registry::global();
  report_problems(r);
  if (json) {
    Json arr = Json::array();
    for (const auto& p : r.plugins()) arr.push_back(p.to_json());
    std::printf("%s\n", arr.dump(2).c_str());
    return 0;
  }
  std::printf("%-16s %-12s %-8s %s\n", "KIND", "NAME", "VERSION", "DESCRIPTION");
  for (const auto& p : r.plugins()) {
    std::printf("%-16s %-12s %-8s %s\n", kind_name(p.kind), p.name.c_str(), p.version.c_str(),
                p.description.c_str());
    std::printf("%-16s   from %s\n", "", p.path.c_str());
    for (const auto& o : p.schema.specs())
      std::printf("%-16s   %-20s %-11s = %-10s %s\n", "", o.name.c_str(), o.type.c_str(),
                  o.default_value.dump().c_str(), o.description.c_str());
  }
  return 0;
}

int cmd_run(const std::vector<std::string>& args) {
  // `orrery run SCRIPT --help` is the script's own help (its orrery.args); before a script, run's.
  const bool script_help = !args.empty() && !args[0].starts_with("-") && wants_help(args);
  if (args.empty() || (wants_help(args) && !script_help)) {
    std::fprintf(args.empty() ? stderr : stdout, "usage: orrery run SCRIPT.lua [--resume] [key=value ...]\n       orrery run SCRIPT.lua --help\n\n"
                "Runs an experiment script. A script declares its arguments with orrery.args, which types\n"
                "and checks each key=value pair (an unknown name or a malformed value is refused before any\n"
                "work starts) and prints them under SCRIPT.lua --help. Each pair also lands, numbers and\n"
                "true/false converted, in the global table `args`. Exit status: 0 ok, 1 error, 130 Ctrl-C,\n"
                "143 SIGTERM (a stopped run still writes its summary).\n\n"
                "--resume: every orrery.train of the script continues its run (runs/<name>) from its\n"
                "newest valid checkpoint, or starts it when it does not exist yet; finished runs are\n"
                "not trained again. Relaunch the same command after a crash or a pre-emption.\n\n"
                "Started by torchrun --no-python, srun or orrery launch (RANK, WORLD_SIZE and LOCAL_RANK, or\n"
                "SLURM_PROCID and SLURM_NTASKS set), it is one rank of a data-parallel job: see orrery launch --help.\n");
    return args.empty() ? 2 : 0;
  }
  std::map<std::string, std::string> kv;
  std::vector<std::string> rest;  // the script and its key=value pairs, --resume taken out
  for (const auto& a : args)
    if (a != "--resume" && a != "--help" && a != "-h") rest.push_back(a);
  const bool resume = std::find(args.begin(), args.end(), "--resume") != args.end();
  if (rest.empty()) throw Error("run: which script? (see orrery run --help)");
  for (size_t i = 1; i < rest.size(); ++i) {
    if (rest[i].starts_with("-"))  // e.g. --resum or --resume=1: never a script argument
      throw Error("run: unknown flag '" + rest[i] + "' (the flags are --resume and --help; script arguments are "
                  "key=value; see orrery run --help)");
    auto eq = rest[i].find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("run: argument '" + rest[i] + "' is not key=value (see orrery run --help)");
    if (!kv.emplace(rest[i].substr(0, eq), rest[i].substr(eq + 1)).second)
      throw Error("run: argument '" + rest[i].substr(0, eq) + "' is given twice");
  }
  // A rank of a data-parallel job (torchrun --no-python, srun, orrery launch): join the others
  // (and take this machine's local_rank-th GPU) before the script runs.
  const LaunchEnv env = read_launch_env([](const char* name) { return std::getenv(name); });
  std::unique_ptr<ProcessGroup> world;
  if (env.distributed()) world = ProcessGroup::join(env);
  Registry& r = Registry::global();
  if (!world || world->rank() == 0) report_problems(r);
  // An installed orrery runs its own scripts by name from anywhere (share/orrery/scripts).
  std::string script = rest[0];
  if (std::error_code ec; !std::filesystem::exists(script, ec)) {
    const std::string bare = script.starts_with("scripts/") ? script.substr(8) : script;
    if (const std::string installed = installed_data("scripts/" + bare); !installed.empty()) script = installed;
  }
  LuaSession session(r, program_lua_libraries());
  session.resume_runs(resume);
  session.script_help(script_help);
  session.join(world.get());
  return session.run_file(script, kv);
}

int cmd_repl(const std::vector<std::string>& args) {
  if (wants_help(args)) {
    std::printf("usage: orrery repl\n\nInteractive Lua with the `orrery` API (docs/lua.md). "
                "Expressions print their value\n(=expr also works), unfinished statements continue "
                "on the next line, Tab completes\nnames, history is kept in ~/.orrery_history, "
                "Ctrl-C interrupts a running call, Ctrl-D exits.\n");
    return 0;
  }
  if (!args.empty()) throw Error("repl: unexpected argument '" + args[0] + "' (see orrery repl --help)");
  Registry& r = Registry::global();
  report_problems(r);
  LuaSession session(r, program_lua_libraries());
  return session.repl();
}

int cmd_forecast(const std::vector<std::string>& args) {
  if (args.empty() || wants_help(args)) {
    std::fprintf(args.empty() ? stderr : stdout,
        "usage: orrery forecast --model PATH --input FILE.csv --horizon H [--out FILE.csv]\n"
        "                       [--context N[,N...]] [--decode-block-size S] [--device cpu|cuda]\n"
        "                       [--precision fp32|bf16] [--sign-average] [--box-cox|--no-box-cox]\n"
        "                       [--[no-]box-cox-average] [--season M]\n"
        "                       [--combine B,... [--combine-rule mean|median] [--combine-check] [--season M]]\n"
        "                       [--check-origins N]\n"
        "                       [--target COL,...] [--past-covariates COL,...]\n"
        "                       [--future-covariates COL,... --future FILE.csv]\n"
        "                       [--categorical COL,...] [--regression [--regression-lags K]]\n"
        "                       [--static-covariates COL,...]\n\n"
        "PATH is a run folder (runs/NAME, with the model.safetensors its script saved), a\n"
        "model.safetensors written by model:save (it carries the model's spec), or a released\n"
        "checkpoint folder a plugin reads (Hugging Face Toto 2.0: config.json + model.safetensors\n"
        "under the released parameter names). Every column of the input except \"time\" is a\n"
        "series; empty fields and NA are missing values. The output has one row per step: step,\n"
        "time (when the input has a time column, which must be evenly spaced), then\n"
        "<series>_q<level> for each quantile level.\n"
        "Without --out it goes to standard output. By default each series is forecast as orrery eval\n"
        "and model:forecast forecast it (one forecast path serves all three): from its last 64 and its\n"
        "last 512 steps, averaged level by level (a context ensemble), with the forecast of its\n"
        "Box-Cox transform averaged in where that average forecast the series' own last --horizon\n"
        "steps better than no transform, both from the steps before (docs/evaluation.md). --context N[,N...] sets the contexts (one: the\n"
        "last N steps alone).\n"
        "--decode-block-size S (a multiple of 32) commits the median every S steps and goes on\n"
        "(block decoding with a KV cache); 0, the default, forecasts the horizon in one pass.\n"
        "--precision bf16 runs the model under bfloat16 autocast (the scaler stays float64).\n"
        "--sign-average averages the forecast with the negated forecast of the negated series,\n"
        "level q with level 1-q (two passes; for models trained with sign flips).\n"
        "The transform's exponent is in [0, 1] (log to none), by Guerrero's method over blocks of\n"
        "--season M steps (1 by default: blocks of 2); every quantile is mapped back, and a series\n"
        "with a value <= 0 is forecast as it is. The transform's forecast is averaged level by level\n"
        "with the plain one (the check scores that average): a transform that blows a series up\n"
        "costs it at most half as much. --box-cox keeps that for every series, unchecked;\n"
        "--no-box-cox forecasts every series as it is (--box-cox-check names the default);\n"
        "--no-box-cox-average keeps the transform's forecast alone (--box-cox-average names the\n"
        "default).\n"
        "--combine ets,theta pools the model's forecast with those baselines, each fitted on the\n"
        "column's whole history with --season M (default 1): the mean of their quantiles level by\n"
        "level (--combine-rule median: the median forecaster at each level and step). With\n"
        "--combine-check a column keeps the combination only where it forecast the column's own\n"
        "last --horizon steps better than the model alone, both from the steps before.\n"
        "--check-origins N makes both checks score the column's last N horizons, each held out in\n"
        "turn and forecast from the steps before it, the losses summed (default 1).\n"
        "--target names the columns to forecast (default: every column not named a covariate).\n"
        "Covariates (docs/covariates.md; the model must read variate roles): --past-covariates are\n"
        "columns of the input known up to the forecast's start; --future-covariates are known over\n"
        "the horizon too, their H values in the first H rows of --future (same column names; a\n"
        "time column there must continue the input's). Targets and covariates are then the rows of\n"
        "one series, and the output has the targets' columns. --categorical names covariates whose\n"
        "cells are categories (a holiday's name, a weekday): each becomes one 0/1 row per category,\n"
        "and only an empty cell is missing there. --regression reads the\n"
        "--future-covariates through an in-context linear regression instead, for any model: each\n"
        "target is fitted over its whole history on those it follows (chosen by a test on their\n"
        "changes; none, and the forecast is the model's own), the model forecasts the residual\n"
        "alone, and the fit over the horizon is added to every quantile. --regression-lags K fits\n"
        "it over the covariates' lags 0..K (a leading indicator, an effect that arrives late).\n"
        "--static-covariates names the columns that hold one value per series (the same on every\n"
        "row, or empty): exactly the static covariates the model reads, in any order; one also\n"
        "named by --categorical holds a category, which the model reads as its 0/1 values\n"
        "\"column=category\".\n");
    return args.empty() ? 2 : 0;
  }
  ForecastCsvOptions o;
  BoxCoxFlags box_cox;
  bool season_given = false, check_origins_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw Error("forecast: " + args[i] + " needs a value");
      return args[++i];
    };
    auto number = [&](const std::string& flag) { return parse_whole_number("forecast: " + flag, value()); };
    const std::string& a = args[i];
    if (a == "--model") o.model = value();
    else if (a == "--input") o.input = value();
    else if (a == "--out") o.output = value();
    else if (a == "--device") o.device = value();
    else if (a == "--horizon") o.horizon = number(a);
    else if (a == "--context") {
      o.contexts.clear();
      for (const auto& c : comma_list(value())) o.contexts.push_back(parse_whole_number("forecast: --context", c));
    }
    else if (a == "--decode-block-size") o.decode_block_size = number(a);
    else if (a == "--precision") o.precision = value();
    else if (a == "--sign-average") o.sign_average = true;
    else if (box_cox.read("forecast", a, o.box_cox, o.box_cox_check, o.box_cox_average)) {}
    else if (a == "--season") o.season = number(a), season_given = true;
    else if (a == "--combine") {
      o.combine = comma_list(value());
      if (o.combine.empty()) throw Error("forecast: --combine takes baseline names, separated by commas");
      for (const auto& b : o.combine) make_baseline(b);  // an unknown name is refused, listing them
    }
    else if (a == "--combine-rule") o.combine_rule = parse_combine_rule(value(), "forecast: --combine-rule");
    else if (a == "--combine-check") o.combine_check = true;
    else if (a == "--check-origins") {
      o.check_origins = number(a), check_origins_given = true;
      check_origins_count(o.check_origins, "forecast: --check-origins");
    }
    else if (a == "--regression") o.regression = true;
    else if (a == "--regression-lags") o.regression_lags = number(a);
    else if (a == "--target" || a == "--past-covariates" || a == "--future-covariates" || a == "--categorical" ||
             a == "--static-covariates") {
      const auto names = comma_list(value());
      if (names.empty()) throw Error("forecast: " + a + " takes column names, separated by commas");
      (a == "--target" ? o.targets : a == "--past-covariates" ? o.past_covariates
                                   : a == "--future-covariates" ? o.future_covariates
                                   : a == "--categorical"       ? o.categorical : o.static_covariates) = names;
    }
    else if (a == "--future") o.future = value();
    else throw Error("forecast: unknown argument '" + a + "' (see orrery forecast --help)");
  }
  if (o.model.empty() || o.input.empty() || !o.horizon)
    throw Error("forecast: --model, --input and --horizon are required (see orrery forecast --help)");
  if (o.combine_check && o.combine.empty()) throw Error("forecast: --combine-check checks a combination; give --combine");
  if (check_origins_given && !(o.box_cox && o.box_cox_check) && !o.combine_check)
    throw Error("forecast: --check-origins sets the horizons a check scores; with " + box_cox.given +
                " give --combine-check, or leave --check-origins out");
  if (season_given && !o.box_cox && o.combine.empty())
    throw Error("forecast: --season sets the blocks of Box-Cox's exponent and the season of --combine's baselines; "
                "with --no-box-cox give --combine, or leave --season out");
  Registry& r = Registry::global();
  report_problems(r);
  forecast_csv(o, r);
  return 0;
}

}  // namespace

// OpenMP's worker threads spin up to ~300,000 times waiting for the next parallel region
// before they sleep. With another busy process on the machine the spinning threads take the
// core from the one doing the work: measured on 2 cores with one other busy process, 150
// quickstart steps took 61-120 s by default and 25-27 s with a spin count of 10,000, which
// costs nothing measurable on an idle machine (600 steps: 22-23 s either way). libgomp reads
// the setting when it loads, before main, so the program sets it and starts itself again; a
// user's own GOMP_SPINCOUNT or OMP_WAIT_POLICY is left alone.
static void tame_openmp_spinning(char** argv) {
  if (std::getenv("GOMP_SPINCOUNT") || std::getenv("OMP_WAIT_POLICY")) return;
  setenv("GOMP_SPINCOUNT", "10000", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then go on with the default
}

// A training step frees and allocates the same activation sizes every time. With glibc's
// defaults blocks from 128 KiB up are mapped and unmapped around each use and the heap's top is
// handed back to the kernel, so every step page-faults its memory in again: measured on 2 cores,
// toto2-4m at batch 8 x 512 trained 20% faster (`orrery bench train`: 50 -> 42 ms a step) with
// freed memory kept in the process. The cost is that the resident set stays at its peak.
static void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest; bigger blocks are still mapped
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

// A rank started by `orrery launch` dies with it: killed with -9, the launcher could not stop its
// ranks, which would train on, holding the run folder's lock. The kernel sends SIGTERM (a stop
// after the step in progress) when the launcher exits, as torchrun's agent does for its workers.
static void die_with_launcher() {
  const char* launcher = std::getenv("ORRERY_LAUNCHER_PID");
  if (!launcher) return;
  const pid_t pid = static_cast<pid_t>(std::atol(launcher));
  unsetenv("ORRERY_LAUNCHER_PID");  // not for this rank's own children
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != pid) {  // the launcher died before the line above
    std::fprintf(stderr, "orrery: the orrery launch that started this rank (pid %s) is gone\n", launcher);
    std::exit(1);
  }
}

int main(int argc, char** argv) {
  die_with_launcher();
  // A file-size limit (ulimit -f, a quota-like cap) then fails the write with EFBIG, which the
  // program reports naming the file, instead of killing it mid-write with SIGXFSZ.
  ::signal(SIGXFSZ, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "run" || args[0] == "repl" || args[0] == "ui" || args[0] == "forecast" ||
                        args[0] == "bench" || args[0] == "eval"))
    tame_openmp_spinning(argv);
  keep_freed_memory();
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  // Denormal floats (e.g. Adam's second moments of tiny gradients) make CPU kernels up to 100x
  // slower; flushing them to zero changes no result that matters.
  at::globalContext().setFlushDenormal(true);
  try {
    if (cmd == "plugins") return cmd_plugins(args);
    if (cmd == "run") return cmd_run(args);
    if (cmd == "launch") return cmd_launch(args);
    if (cmd == "repl") return cmd_repl(args);
    if (cmd == "forecast") return cmd_forecast(args);
    if (cmd == "bench") return cmd_bench(args);
    if (cmd == "eval") return cmd_eval(args);
    if (cmd == "ui") return cmd_ui(args);
    if (cmd == "plot") return cmd_plot(args);
    if (cmd == "new") return cmd_new(args);
    if (cmd == "export") return cmd_export(args);
    if (cmd == "version" || cmd == "--version") return std::printf("orrery 0.1.0\n"), 0;
    const std::string near = closest_name(cmd, {"plugins", "run", "launch", "repl", "forecast", "eval", "bench", "ui",
                                                 "plot", "new", "export", "version"});
    std::fprintf(stderr, "orrery: unknown command '%s'%s\n\n%s", cmd.c_str(),
                 near.empty() ? "" : (" (did you mean '" + near + "'?)").c_str(), kUsage);
    return 2;
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "orrery: %s\n", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "orrery: %s\n", e.what());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "orrery: internal error: an exception that is not a std::exception\n");
    return 1;
  }
}
