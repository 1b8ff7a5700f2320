// `orrery eval`: models and classical baselines on a benchmark, the GIFT-Eval way.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "orrery/host/baselines.h"
#include "orrery/host/combination.h"
#include "orrery/host/data_mixture.h"
#include "orrery/error.h"
#include "orrery/host/covariate_regression.h"
#include "orrery/host/eval_protocol.h"
#include "orrery/host/load_model.h"
#include "orrery/host/model.h"
#include "orrery/host/registry.h"
#include "orrery/host/run_store.h"

namespace orrery {
int cmd_eval(const std::vector<std::string>& args) {
  if (wants_help(args)) {
    std::printf(
        "usage: orrery eval [--model PATH[=NAME]]... [--data DIR|MANIFEST|FILE.csv|JSON] [--frequency F]\n"
        "                   [--baselines LIST] [--terms LIST] [--split test|validation] [--validation-windows N]\n"
        "                   [--context N[,N...]] [--batch-size N] [--sign-average] [--box-cox|--no-box-cox]\n"
        "                   [--[no-]box-cox-average] [--combine LIST [--combine-rule mean|median] [--combine-check]]\n"
        "                   [--check-origins N] [--regression-lags K] [--device cpu|cuda] [--out DIR]\n"
        "                   [--no-forecasts]\n\n"
        "Scores models and classical baselines the way GIFT-Eval does: per data set and term, the\n"
        "prediction length of its frequency, the last non-overlapping test windows (at most 20, a\n"
        "tenth of the shortest series), MASE of the median, CRPS (mean weighted quantile loss over\n"
        "the levels 0.1..0.9) and the coverage of the 10-90 band, each divided by seasonal naive on\n"
        "the same windows and aggregated by geometric mean.\n\n"
        "  --model PATH[=NAME]  a run folder, a model.safetensors or a Hugging Face Toto 2.0 folder;\n"
        "                       repeat for several (NAME labels it; default: the folder or file name)\n"
        "  --data               a folder with manifest.json (default assets/data, the bundled R\n"
        "                       benchmark), one CSV (every column but \"time\" a series), or a data\n"
        "                       plugin as JSON: every series of its files, e.g. a long-layout Parquet:\n"
        "                       '{\"name\": \"parquet\", \"options\": {\"files\": \"d/*.parquet\"}}'\n"
        "  --frequency F        the data's frequency (M, W, D, H, 5T...) when it has no times to infer it\n"
        "  --baselines          comma-separated, from naive,seasonal_naive,theta,ets,arima (default all\n"
        "                       but arima);\n"
        "                       \"none\" for none\n"
        "  --terms              short,medium,long (default short; medium and long for H, T, S data)\n"
        "  --split              test (default) or validation: the one window before each series' test\n"
        "                       windows, to tune on without touching the test windows\n"
        "  --validation-windows N  with --split validation: up to N rolling origins per series, back\n"
        "                       to back before its test windows, as many as cover a tenth of its\n"
        "                       history (default 1, GIFT-Eval's split; long series get more)\n"
        "  --context N[,N...]   steps of history fed to each model; several: the forecasts from each,\n"
        "                       averaged level by level (a context ensemble). Default 64,512, as\n"
        "                       orrery forecast and model:forecast forecast (docs/evaluation.md)\n"
        "  --batch-size N       windows per forward pass (default 64)\n"
        "  --sign-average       average each model's forecast with the negated forecast of the negated\n"
        "                       history (two passes; for models trained with sign flips)\n"
        "                       By default each model forecasts a window's Box-Cox transform (its\n"
        "                       exponent in [0, 1] by Guerrero's method over blocks of the season;\n"
        "                       none where a value is <= 0), every quantile mapped back and averaged\n"
        "                       with the untransformed forecast, where that average forecast the\n"
        "                       window's own last horizon better than no transform, both from the\n"
        "                       steps before (four passes)\n"
        "  --box-cox            the transform for every window, unchecked (still averaged with the\n"
        "                       plain forecast unless --no-box-cox-average)\n"
        "  --no-box-cox         no transform (--box-cox-check names the default)\n"
        "  --no-box-cox-average the transform's forecast alone, not averaged with the plain one (the\n"
        "                       average, the default with --box-cox-average, costs a window that the\n"
        "                       transform blows up at most half as much)\n"
        "  --combine LIST       also score each model pooled with these baselines (e.g. ets,theta),\n"
        "                       fitted on the same windows: MODEL+ets+theta\n"
        "  --combine-rule R     mean (default: average the quantiles level by level) or median (the\n"
        "                       median forecaster at each level and step; MODEL+ets+theta/median)\n"
        "  --combine-check      each window keeps the combination only where it forecast the\n"
        "                       window's own last horizon better than the model alone, both from\n"
        "                       the steps before (MODEL+ets+theta/checked)\n"
        "  --check-origins N    both checks score the window's last N horizons, each held out in turn\n"
        "                       and forecast from the steps before it, the losses summed over those\n"
        "                       the window is long enough for (default 1; each more costs the check\n"
        "                       again)\n"
        "  --regression-lags K  on known-future covariates, also score each forecaster through the\n"
        "                       regression over the covariates' lags 0..K (NAME/lagged-regression),\n"
        "                       beside NAME/regression (lag 0)\n"
        "  --out DIR            where eval.json and eval.csv go (default: a new runs/eval folder;\n"
        "                       nothing already there is overwritten), with eval_forecasts.jsonl: every\n"
        "                       window's history, actual values and each forecaster's quantiles, which\n"
        "                       orrery ui and orrery plot draw\n"
        "  --no-forecasts       write the scores only, no eval_forecasts.jsonl\n");
    return 0;
  }
  EvalRequest r;
  BoxCoxFlags box_cox;
  std::string device = "cpu";
  std::optional<PluginSpec> source;  // --data as a plugin choice
  std::optional<int64_t> validation_windows;
  bool check_origins_given = false;
  std::vector<std::pair<std::string, std::string>> models;  // path, name
  for (size_t i = 0; i < args.size(); ++i) {
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw Error("eval: " + args[i] + " needs a value");
      return args[++i];
    };
    const std::string& a = args[i];
    if (a == "--model") {
      std::string path = value(), name;
      if (auto eq = path.rfind('='); eq != std::string::npos) name = path.substr(eq + 1), path = path.substr(0, eq);
      if (name.empty()) {
        std::string p = path;
        while (p.size() > 1 && p.back() == '/') p.pop_back();
        name = p.substr(p.find_last_of('/') + 1);
      }
      models.emplace_back(path, name);
    } else if (a == "--data") {
      r.data = value();
      if (r.data.starts_with("{")) source = parse_plugin_choice("eval: --data", r.data);
    }
    else if (a == "--frequency") r.frequency = value();
    else if (a == "--baselines") {
      const std::string v = value();
      r.baselines = v == "none" ? std::vector<std::string>{} : comma_list(v);
    } else if (a == "--terms") {
      r.protocol.terms.clear();
      for (const auto& t : comma_list(value())) r.protocol.terms.push_back(parse_term(t));
    } else if (a == "--split") {
      const std::string v = value();
      if (v != "test" && v != "validation") throw Error("eval: --split must be test or validation, got '" + v + "'");
      r.protocol.validation = v == "validation";
    } else if (a == "--validation-windows") {
      validation_windows = parse_whole_number("eval: --validation-windows", value());
    } else if (a == "--context") {
      r.contexts.clear();
      for (const auto& c : comma_list(value())) r.contexts.push_back(parse_whole_number("eval: --context", c));
    }
    else if (a == "--batch-size") r.batch_size = parse_whole_number("eval: --batch-size", value());
    else if (a == "--sign-average") r.sign_average = true;
    else if (box_cox.read("eval", a, r.box_cox, r.box_cox_check, r.box_cox_average)) {}
    else if (a == "--no-forecasts") r.forecasts = false;
    else if (a == "--combine") {
      r.combine = comma_list(value());
      if (r.combine.empty()) throw Error("eval: --combine takes baseline names, separated by commas");
      for (const auto& b : r.combine) make_baseline(b);  // an unknown name is refused, listing them
    }
    else if (a == "--combine-rule") r.combine_rule = parse_combine_rule(value(), "eval: --combine-rule");
    else if (a == "--combine-check") r.combine_check = true;
    else if (a == "--check-origins") {
      r.check_origins = parse_whole_number("eval: --check-origins", value()), check_origins_given = true;
      check_origins_count(r.check_origins, "eval: --check-origins");
    }
    else if (a == "--regression-lags") {
      r.regression_lags = parse_whole_number("eval: --regression-lags", value());
      check_regression_lags(r.regression_lags, "eval: --regression-lags");
    }
    else if (a == "--device") device = value();
    else if (a == "--out") r.out = value();
    else throw Error("eval: unknown argument '" + a + "' (see orrery eval --help)");
  }
  if (validation_windows) {
    if (!r.protocol.validation) throw Error("eval: --validation-windows needs --split validation");
    if (*validation_windows < 1)
      throw Error("eval: --validation-windows must be at least 1, got " + std::to_string(*validation_windows));
    r.protocol.validation_windows = *validation_windows;
  }
  if (models.empty() && r.baselines.empty()) throw Error("eval: nothing to evaluate: give --model or baselines");
  if (!r.combine.empty() && models.empty()) throw Error("eval: --combine pools a model with baselines; give --model");
  if (r.combine_check && r.combine.empty()) throw Error("eval: --combine-check checks a combination; give --combine");
  if (check_origins_given && models.empty()) throw Error("eval: --check-origins sets how models forecast: give --model");
  if (check_origins_given && !(r.box_cox && r.box_cox_check) && !r.combine_check)
    throw Error("eval: --check-origins sets the horizons a check scores; with " + box_cox.given +
                " give --combine-check, or leave --check-origins out");
  if (r.sign_average && models.empty()) throw Error("eval: --sign-average averages models' forecasts: give --model");
  if (!box_cox.average_given.empty() && models.empty())
    throw Error("eval: " + box_cox.average_given + " sets how models forecast: give --model");
  if (!box_cox.given.empty() && models.empty())
    throw Error("eval: " + box_cox.given + " sets how models forecast: give --model");
  Registry& registry = Registry::global();
  if (source) {
    r.data = source->name;
    r.source = make_data_source(registry, *source, DataContext{});
  }
  std::vector<std::unique_ptr<Model>> held;
  for (const auto& [path, name] : models) {
    held.push_back(load_model(path, registry, device));
    r.models.emplace_back(name, held.back().get());
  }
  const bool claim = r.out.empty();  // a fresh folder, claimed once there are results to put in it
  Json result = evaluate_request(r);
  if (claim) {
    const std::string dir = claim_run_dir("runs", "eval");
    write_eval(result, dir);
    std::printf("written: %s/eval.json, %s/eval.csv\n", dir.c_str(), dir.c_str());
  }
  return 0;
}

}  // namespace orrery
