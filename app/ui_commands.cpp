// `orrery ui` (the live dashboard) and `orrery plot` (its views as SVG files).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "commands.h"
#include "csv_forecaster.h"
#include "dashboard/dashboard.h"
#include "lua/ui_lua.h"
#include "orrery/error.h"
#include "orrery/host/baselines.h"
#include "orrery/options.h"
#include "orrery/host/lua_session.h"
#include "orrery/host/registry.h"
#include "runs/run_watcher.h"
#include "views/svg_report.h"

namespace orrery {

std::vector<LuaLibrary> program_lua_libraries() { return {ui::open_lua_library}; }

int cmd_ui(const std::vector<std::string>& args) {
  if (wants_help(args)) {
    std::printf(
        "usage: orrery ui [RUNS_DIR | SCRIPT.lua [key=value ...]] [options]\n\n"
        "The live dashboard: a table of runs, loss and learning-rate curves, quantile fans of the\n"
        "forecast snapshots, learning-rate transfer across widths, coordinate checks, update RMS and\n"
        "`orrery eval` results (eval.json) per data set.\n"
        "It tails the run folders under RUNS_DIR (default runs/), whoever writes them: other\n"
        "processes, or other machines on a shared disk. With SCRIPT.lua it runs the script on a\n"
        "worker thread (pairs reach it as `args`) and shows its runs as they train; closing the\n"
        "window interrupts the script.\n\n"
        "  --runs DIR          the folder to watch with a script (default runs)\n"
        "  --view V            first tab: loss, forecasts, samples, lr, diagnostics, eval, search, scaling\n"
        "                      (default loss)\n"
        "  --filter TEXT       the runs table's filter: a,b = a or b, -c = not c\n"
        "  --size WxH          window size (default 1600x900)\n"
        "  --screenshot PNG    headless: render --after N frames (default 3) into a hidden window,\n"
        "                      write PNG and exit; with a script, after the script ends. Needs an X\n"
        "                      display: under Xvfb on a server (xvfb-run -a orrery ui ...)\n"
        "  --after N           frames to render before the screenshot\n"
        "  --layout JSON       with --screenshot: where each plot landed (pixels and axis ranges)\n"
        "  --hover X,Y         with --screenshot: the mouse rests there (to capture hover read-outs)\n"
        "  --select DATASET    the Evaluation tab opens on this data set's windows (an evaluation's\n"
        "                      eval_forecasts.jsonl): the model's fan beside ETS's, window by window\n\n"
        "The Forecasts tab forecasts a column of a CSV with a model, beside a baseline fitted on the\n"
        "same column, through `orrery forecast`'s path (the same numbers). These open it:\n"
        "  --model M           a run folder, Orrery weights or a released checkpoint folder\n"
        "  --input FILE.csv    the CSV, as orrery forecast --input reads it\n"
        "  --column C          the series to forecast (default: the first that is not a covariate)\n"
        "  --horizon H         steps to forecast (default 24)\n"
        "  --context N[,N]     the most recent steps read; two: a context ensemble (default 64,512)\n"
        "  --box-cox           the Box-Cox transform for the series, unchecked (by default it is kept\n"
        "                      where it forecast the series' own last horizon better; --season M:\n"
        "                      its blocks, default 1); --no-box-cox: none\n"
        "  --no-box-cox-average\n"
        "                      the transform's forecast alone, not averaged with the plain one as\n"
        "                      by default (--box-cox-average)\n"
        "  --season M          the baseline's season and Box-Cox's blocks (default 1)\n"
        "  --baseline NAME     naive, seasonal_naive, theta, ets (default), arima or none\n"
        "  --covariates A,B    past-only covariate columns (the model must read variate roles)\n"
        "  --export PREFIX     once the forecast is in, write PREFIX.png, PREFIX.svg and PREFIX.csv\n"
        "                      (the CSV as orrery forecast writes it); with --screenshot, a forecast\n"
        "                      that fails exits 1 with its message after the screenshot\n");
    return 0;
  }
  ui::DashboardOptions o;
  bool season_given = false, view_given = false;
  BoxCoxFlags box_cox;
  std::string script, runs_dir;
  std::map<std::string, std::string> kv;
  bool positional_seen = false;
  for (size_t i = 0; i < args.size(); ++i) {
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw Error("ui: " + args[i] + " needs a value");
      return args[++i];
    };
    const std::string& a = args[i];
    if (a == "--screenshot") o.screenshot = value();
    else if (a == "--after") o.after = static_cast<int>(parse_whole_number("ui: --after", value()));
    else if (a == "--view") o.view = value(), view_given = true;
    else if (a == "--filter") o.filter = value();
    else if (a == "--layout") o.layout = value();
    else if (a == "--select") o.select = value();
    else if (a == "--runs") runs_dir = value();
    else if (a == "--model") o.csv.model = value(), o.csv_given = true;
    else if (a == "--input") o.csv.input = value(), o.csv_given = true;
    else if (a == "--column") o.csv.column = value(), o.csv_given = true;
    else if (a == "--horizon") o.csv.horizon = parse_whole_number("ui: --horizon", value()), o.csv_given = true;
    else if (a == "--context") {
      o.csv.contexts.clear();
      for (const auto& c : comma_list(value())) o.csv.contexts.push_back(parse_whole_number("ui: --context", c));
      if (o.csv.contexts.empty() || o.csv.contexts.size() > 2)
        throw Error("ui: --context takes one context or two (a context ensemble), e.g. 512 or 64,512");
      o.csv_given = true;
    }
    else if (box_cox.read("ui", a, o.csv.box_cox, o.csv.box_cox_check, o.csv.box_cox_average)) o.csv_given = true;
    else if (a == "--season") o.csv.season = parse_whole_number("ui: --season", value()), season_given = true;
    else if (a == "--baseline") {
      const std::string b = value();
      o.csv.baseline = b == "none" ? "" : b;
      if (b != "none" && std::find(baseline_names().begin(), baseline_names().end(), b) == baseline_names().end())
        throw Error("ui: --baseline must be none or one of " + join_names(baseline_names()) + ", got '" + b + "'");
      o.csv_given = true;
    }
    else if (a == "--covariates") o.csv.covariates = comma_list(value()), o.csv_given = true;
    else if (a == "--export") o.export_prefix = value();
    else if (a == "--hover") {
      const std::string v = value();
      const auto comma = v.find(',');
      if (comma == std::string::npos) throw Error("ui: --hover takes X,Y in pixels, got '" + v + "'");
      o.hover_x = static_cast<float>(parse_whole_number("ui: --hover", v.substr(0, comma)));
      o.hover_y = static_cast<float>(parse_whole_number("ui: --hover", v.substr(comma + 1)));
    }
    else if (a == "--size") {
      const std::string v = value();
      const auto x = v.find('x');
      if (x == std::string::npos) throw Error("ui: --size takes WxH, got '" + v + "'");
      o.width = static_cast<int>(parse_whole_number("ui: --size", v.substr(0, x)));
      o.height = static_cast<int>(parse_whole_number("ui: --size", v.substr(x + 1)));
    } else if (a.starts_with("--")) {
      throw Error("ui: unknown option '" + a + "' (see orrery ui --help)");
    } else if (!script.empty() && a.find('=') != std::string::npos) {
      if (!kv.emplace(a.substr(0, a.find('=')), a.substr(a.find('=') + 1)).second)
        throw Error("ui: argument '" + a.substr(0, a.find('=')) + "' is given twice");
    } else if (!positional_seen && a.ends_with(".lua")) {
      script = a, positional_seen = true;
    } else if (!positional_seen) {
      runs_dir = a, positional_seen = true;
    } else {
      throw Error("ui: unexpected argument '" + a + "' (see orrery ui --help)");
    }
  }
  if ((!o.layout.empty() || o.hover_x >= 0) && o.screenshot.empty())
    throw Error("ui: --layout and --hover need --screenshot");
  if (o.after < 1) throw Error("ui: --after must be at least 1");
  if (season_given) o.csv_given = true;
  if (o.csv.season < 1) throw Error("ui: --season must be at least 1 step (1: none), got " + std::to_string(o.csv.season));
  for (const auto& [flag, v] : {std::pair<const char*, std::string>{"--column", o.csv.column}, {"--export", o.export_prefix}})
    if (v.empty() && std::find(args.begin(), args.end(), flag) != args.end())
      throw Error(std::string("ui: ") + flag + " needs a value, got an empty one");
  if (o.csv_given && (o.csv.model.empty() || o.csv.input.empty()))
    throw Error("ui: a CSV forecast needs --model and --input (see orrery ui --help)");
  if (!o.export_prefix.empty() && !o.csv_given) throw Error("ui: --export writes a CSV forecast; give --model and --input");
  if (o.csv_given && !view_given) o.view = "forecasts";
  if (!o.export_prefix.empty() && o.view != "forecasts" && o.view != "forecast")
    throw Error("ui: --export writes the Forecasts tab's view; leave out --view " + o.view + " (or give --view forecasts)");
  if (!runs_dir.empty()) o.runs_dir = runs_dir;
  Registry& registry = Registry::global();
  o.forecaster = make_csv_forecaster(registry);
  if (script.empty()) {
    if (!std::filesystem::is_directory(o.runs_dir))
      throw Error("ui: no folder '" + o.runs_dir + "' to watch (give a runs folder, a run folder or a script)");
    return ui::run_dashboard(o);
  }
  if (!std::filesystem::exists(script)) throw Error("ui: cannot open " + script);
  for (const auto& p : registry.problems()) std::fprintf(stderr, "orrery: warning: %s\n", p.c_str());
  ui::BackgroundJob job{std::filesystem::path(script).filename().string(),
                        [&] {
                          LuaSession session(registry, program_lua_libraries());
                          return session.run_file(script, kv);
                        },
                        [] { interrupt_running_script(); }};
  return ui::run_dashboard(o, &job);
}

int cmd_plot(const std::vector<std::string>& args) {
  if (args.empty() || wants_help(args)) {
    std::fprintf(args.empty() ? stderr : stdout,
        "usage: orrery plot DIR [--out OUT]\n\n"
        "Writes the dashboard's views as SVG files, for machines with no display. DIR is a run\n"
        "folder or a folder of runs (an experiment, or runs/). OUT defaults to DIR/plots.\n"
        "Files: loss.svg, forecasts.svg, lr_transfer.svg (a sweep across learning rates),\n"
        "coord_check.svg (a coordinate check's results), optimizer.svg (update RMS per group),\n"
        "eval.svg (eval.json's ratios to seasonal naive per data set); each only when DIR has the\n"
        "data for it.\n");
    return args.empty() ? 2 : 0;
  }
  std::string dir, out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--out") {
      if (i + 1 >= args.size()) throw Error("plot: --out needs a value");
      out = args[++i];
    } else if (args[i].starts_with("--")) {
      throw Error("plot: unknown option '" + args[i] + "' (see orrery plot --help)");
    } else if (dir.empty()) {
      dir = args[i];
    } else {
      throw Error("plot: unexpected argument '" + args[i] + "'");
    }
  }
  if (!std::filesystem::is_directory(dir)) throw Error("plot: no folder '" + dir + "'");
  if (out.empty()) out = (std::filesystem::path(dir) / "plots").string();
  ui::RunWatcher watcher(dir);
  watcher.poll();
  const auto ws = watcher.snapshot();
  if (ws->runs.empty() && ws->coord_checks.empty()) throw Error("plot: no runs under '" + dir + "'");
  for (const auto& f : ui::write_svg_report(*ws, out)) std::printf("%s\n", f.c_str());
  return 0;
}

}  // namespace orrery
