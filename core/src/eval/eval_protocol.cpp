#include "orrery/host/eval_protocol.h"
#include "orrery/host/program.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <atomic>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <thread>

#include "orrery/atomic_file.h"
#include "orrery/host/baselines.h"
#include "orrery/host/combination.h"
#include "orrery/json_unique_keys.h"
#include "orrery/host/csv.h"
#include "orrery/options.h"
#include "orrery/error.h"
#include "orrery/host/model.h"
#include "orrery/host/scoring.h"
#include "orrery/host/series.h"
#include "orrery/host/covariate_regression.h"
#include "orrery/host/forecast_request.h"
#include "orrery/timestamps.h"

namespace orrery {
namespace fs = std::filesystem;

// ---- data sets ----------------------------------------------------------------------------

namespace {

// The frequency buckets of a report: low frequencies apart, where classical models are
// strongest and most of the bundled benchmark lives, and everything from weekly up together.
constexpr const char* kFrequencyBuckets[] = {"yearly", "quarterly", "monthly", "higher"};
// And by the history a window has (a model sees at most its `context` of it): short histories
// are where a pretrained prior has to stand in for the data.
constexpr const char* kContextBuckets[] = {"context <48", "context 48-127", "context 128-512", "context >512"};
size_t context_bucket(size_t steps) { return steps < 48 ? 0 : steps < 128 ? 1 : steps <= 512 ? 2 : 3; }
const char* frequency_bucket(const Frequency& f) {
  if (f.base == "A") return "yearly";
  if (f.base == "Q") return "quarterly";
  if (f.base == "M") return "monthly";
  return "higher";
}

}  // namespace

namespace {

// The frequency of a "time" column of ISO timestamps, or "" when there is none to infer from.
std::string inferred_frequency(const CsvTable& t, const std::string& file) {
  for (size_t i = 0; i < t.names.size(); ++i) {
    if (t.names[i] != "time") continue;
    std::vector<double> seconds;
    for (const auto& text : t.text[i]) {
      const auto s = parse_timestamp(text);
      if (!s) return "";
      seconds.push_back(*s);
    }
    return infer_frequency(seconds, file + ": column 'time'");
  }
  return "";
}

EvalDataset dataset_from_csv(const std::string& name, const std::string& file, std::string frequency,
                             const std::string& where) {
  EvalDataset d;
  d.name = name, d.origin = file;
  const CsvTable t = read_csv(file, {"time"});
  if (frequency.empty()) frequency = inferred_frequency(t, file);
  if (frequency.empty())
    throw Error("evaluating " + file + " needs its frequency (e.g. M, H, 5T): give it, or a \"time\" column of "
                "ISO dates to infer it from");
  try {
    d.frequency = Frequency::parse(frequency);
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
  for (size_t i = 0; i < t.names.size(); ++i) {
    if (t.names[i] == "time") continue;
    SeriesInput s;
    s.name = t.names.size() == 2 ? name : name + "/" + t.names[i];
    s.values = t.columns[i];
    s.season = seasonality(d.frequency);
    bool any = false;
    for (double v : s.values) any = any || std::isfinite(v);
    if (!any) throw Error(file + ": column '" + t.names[i] + "' has no value");
    d.series.push_back(std::move(s));
  }
  if (d.series.empty()) throw Error(file + ": no series (every column but \"time\" is one)");
  return d;
}

}  // namespace

std::string eval_data_path(const std::string& given) {
  // The default, the bundled benchmark: beside the working directory, or an install's own.
  std::error_code ec;
  if (given == EvalRequest{}.data && !fs::exists(given, ec))
    if (const std::string installed = installed_data(given); !installed.empty()) return installed;
  return given;
}

std::vector<EvalDataset> load_eval_datasets(const std::string& given, const std::string& frequency) {
  std::error_code ec;
  const std::string path = eval_data_path(given);
  fs::path manifest = path;
  if (fs::is_directory(path, ec)) manifest = fs::path(path) / "manifest.json";
  if (!fs::exists(path, ec))
    throw Error("no such file or folder: " + path + " (evaluation data is a folder with a manifest.json, a manifest, "
                "or a CSV file)");
  if (manifest.extension() != ".json")
    return {dataset_from_csv(fs::path(path).stem().string(), path, frequency, path)};
  std::ifstream in(manifest);
  if (!in) throw Error("cannot open " + manifest.string() + " (a benchmark folder needs a manifest.json)");
  Json m;
  try {
    m = parse_json_unique_keys(in);
  } catch (const Error& e) {
    throw Error(manifest.string() + ": " + e.what());
  } catch (const std::exception& e) {
    throw Error(manifest.string() + ": not valid JSON: " + e.what());
  }
  if (!m.contains("datasets") || !m["datasets"].is_array() || m["datasets"].empty())
    throw Error(manifest.string() + ": expected {\"datasets\": [{\"name\", \"file\", \"frequency\"}, ...]}");
  std::vector<EvalDataset> out;
  for (size_t i = 0; i < m["datasets"].size(); ++i) {
    const Json& e = m["datasets"][i];
    const std::string where = manifest.string() + ": datasets[" + std::to_string(i + 1) + "]";
    for (const char* key : {"name", "file", "frequency"})
      if (!e.contains(key) || !e[key].is_string()) throw Error(where + " needs a \"" + key + "\" string");
    // What Orrery reads, and what only describes the data set; anything else (a "horizon", a
    // typo) would be ignored without a word.
    for (const auto& [key, value] : e.items())
      if (key != "name" && key != "file" && key != "frequency" && key != "what" && key != "source" &&
          key != "series" && key != "length" && key != "licence")
        throw Error(where + ": unknown key " + quote_input(key) + " (an entry reads name, file and frequency; what, "
                    "source, series, length and licence only describe it)");
    // A benchmark folder is self-contained: it can be copied, archived and shared whole.
    const fs::path file = e["file"].get<std::string>();
    for (const auto& part : file)
      if (file.is_absolute() || part == "..")
        throw Error(where + ": \"file\" " + quote_input(file.string()) + " leaves the benchmark folder; name a file "
                    "inside " + manifest.parent_path().string() + " (a benchmark folder is self-contained)");
    out.push_back(dataset_from_csv(e["name"], (manifest.parent_path() / file).string(), e["frequency"], where));
  }
  return out;
}

std::vector<EvalDataset> eval_datasets(const DataSource& source, const std::string& label, const std::string& frequency) {
  std::string name = label;
  const Json about = source.describe();
  if (about.contains("files") && about["files"].is_array() && about["files"].size() == 1)
    name = fs::path(about["files"][0].get<std::string>()).stem().string();
  const std::vector<StoredSeries> stored = source.stored_series();
  if (stored.empty())
    throw Error("evaluating on '" + label + "': it holds no fixed series (a generator draws new ones for every "
                "batch); evaluate on files: data = {\"csv\", files = ...} or {\"parquet\", files = ...}");
  std::map<std::string, EvalDataset> by_frequency;  // canonical frequency name -> data set
  for (const auto& s : stored) {
    const std::string given = frequency.empty() ? s.frequency : frequency;
    if (given.empty())
      throw Error(name + ": series '" + s.name + "' has no times to infer its frequency from: give the frequency "
                  "(e.g. frequency = \"H\")");
    Frequency f;
    try {
      f = Frequency::parse(given);
    } catch (const Error& e) {
      throw Error(name + ": frequency: " + e.what());
    }
    EvalDataset& d = by_frequency[f.str()];
    d.frequency = f;
    d.origin = about.contains("files") ? about["files"].dump() : label;
    // Each target variate an item; a series' covariate rows go with each of its targets.
    auto role_of = [&](size_t v) { return s.roles.empty() ? VariateRole::target : static_cast<VariateRole>(s.roles[v]); };
    std::vector<std::vector<double>> past, future;
    for (size_t v = 0; v < s.values.size(); ++v)
      if (role_of(v) != VariateRole::target)
        (role_of(v) == VariateRole::past ? past : future).emplace_back(s.values[v].begin(), s.values[v].end());
    for (size_t v = 0; v < s.values.size(); ++v) {
      if (role_of(v) != VariateRole::target) continue;
      SeriesInput item;
      item.name = s.values.size() == 1 ? s.name : s.name + "/" + (v < s.columns.size() ? s.columns[v] : std::to_string(v + 1));
      item.values.assign(s.values[v].begin(), s.values[v].end());
      item.season = seasonality(f);
      item.past = past, item.future = future;
      item.statics = s.statics;
      d.series.push_back(std::move(item));
    }
  }
  std::vector<EvalDataset> out;
  for (auto& [freq, d] : by_frequency) {
    d.name = by_frequency.size() == 1 ? name : name + "/" + freq;
    out.push_back(std::move(d));
  }
  return out;
}

// ---- forecasters -------------------------------------------------------------------------

namespace {

// One context or more, each at least a step, none twice.
void check_eval_contexts(const std::vector<int64_t>& contexts) {
  if (contexts.empty()) throw Error("evaluation: give at least one context (steps of history a model reads)");
  check_contexts(contexts, "evaluation");
}

// A model through the one forecast path (forecast_request.h): each window a series of its own,
// its target, then (when scored with them) its past-only and known-future covariate rows; a model
// that reads static covariates gets its series' values.
class ModelForecaster final : public EvalForecaster {
 public:
  // regression_lags >= 0: the known-future covariates through the request's in-context regression
  // over lags 0..K (covariate_regression.h), the model reading none of them.
  ModelForecaster(Model& m, std::string name, std::vector<int64_t> contexts, int64_t batch,
                  const Interrupt* interrupt, ForecastRecipe recipe, bool covariates, int64_t regression_lags = -1)
      : model_(m), name_(std::move(name)), contexts_(std::move(contexts)), batch_(batch), interrupt_(interrupt),
        recipe_(recipe), covariates_(covariates), statics_(!m.static_covariates().empty()),
        regression_lags_(regression_lags) {}
  std::string name() const override { return name_; }

  std::vector<std::vector<std::vector<double>>> forecast_with(const std::vector<std::vector<double>>& histories,
                                                              const std::vector<Covariates>& covariates,
                                                              int64_t season, int64_t horizon,
                                                              const std::vector<double>& levels) override {
    return forecast_windows(histories, &covariates, season, horizon, levels);
  }
  std::vector<std::vector<std::vector<double>>> forecast(const std::vector<std::vector<double>>& histories,
                                                         int64_t season, int64_t horizon,
                                                         const std::vector<double>& levels) override {
    return forecast_windows(histories, nullptr, season, horizon, levels);
  }

 private:
  Model& model_;
  std::string name_;
  std::vector<int64_t> contexts_;
  int64_t batch_;
  const Interrupt* interrupt_;
  ForecastRecipe recipe_;
  bool covariates_, statics_;
  int64_t regression_lags_;

  std::vector<std::vector<std::vector<double>>> forecast_windows(const std::vector<std::vector<double>>& histories,
                                                                 const std::vector<Covariates>* covariates,
                                                                 int64_t season, int64_t horizon,
                                                                 const std::vector<double>& levels) {
    if (covariates && covariates->size() != histories.size())
      throw Error(name_ + ": " + std::to_string(covariates->size()) + " windows' covariates for " +
                  std::to_string(histories.size()) + " windows");
    ForecastRequest r;
    r.horizon = horizon;
    r.contexts = contexts_;
    r.batch_size = batch_;
    r.options.levels = levels;
    r.options.interrupt = interrupt_;
    r.options.sign_average = recipe_.sign_average;
    if (recipe_.box_cox) r.options.box_cox = std::numeric_limits<double>::quiet_NaN(), r.options.season = season;
    r.options.box_cox_check = recipe_.box_cox && recipe_.box_cox_check;
    r.options.box_cox_average = recipe_.box_cox && recipe_.box_cox_average;
    r.options.check_origins = recipe_.check_origins;
    for (size_t i = 0; i < histories.size(); ++i) {
      const std::string window = "window " + std::to_string(i + 1);
      RequestSeries s{{histories[i]}, {window}, {}, {}};
      if (covariates) {
        const Covariates& c = (*covariates)[i];
        if (covariates_ || regression_lags_ >= 0) {
          if (covariates_)
            for (size_t k = 0; k < c.past.size(); ++k)
              s.covariates.push_back({window + ", past-only covariate " + std::to_string(k + 1), VariateRole::past, c.past[k]});
          for (size_t k = 0; k < c.future.size(); ++k) {
            // A window's known-future rows run on past its horizon to the series' end: the horizon's part is read.
            std::vector<double> v(c.future[k].begin(), c.future[k].begin() + static_cast<std::ptrdiff_t>(histories[i].size() + horizon));
            s.covariates.push_back({window + ", known-future covariate " + std::to_string(k + 1), VariateRole::future, std::move(v)});
          }
        }
        if (statics_) s.statics = c.statics;
      }
      r.regression = r.regression || (regression_lags_ >= 0 && !s.covariates.empty());
      r.series.push_back(std::move(s));
    }
    if (r.regression) r.regression_lags = regression_lags_;
    std::vector<std::vector<std::vector<double>>> out;
    for (auto& series : answer(model_, r).series) out.push_back(std::move(series[0].quantiles));
    return out;
  }
};

// f(i) for every window i < n, on as many threads as LibTorch's intra-op ones (at::get_num_threads():
// OMP_NUM_THREADS), each taking the next window as it is free: a baseline's fit takes from
// milliseconds on a short series to a second on a long one. Windows are independent and each
// lands in its own slot, so the forecasts are the same whatever the thread count; of several
// windows that fail, the first one's error is raised.
using WindowForecast = std::vector<std::vector<double>>;
template <class F>
std::vector<WindowForecast> each_window(size_t n, const Interrupt* interrupt, const F& f) {
  std::vector<WindowForecast> out(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        check_interrupt(interrupt);  // an AutoARIMA search over many long windows takes minutes
        out[i] = f(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const size_t helpers = std::min<size_t>(n, static_cast<size_t>(std::max(1, at::get_num_threads()))) - (n > 0);
  std::vector<std::thread> threads;
  for (size_t k = 0; k < helpers; ++k) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

class BaselineForecaster final : public EvalForecaster {
 public:
  // with_covariates: the known-future covariates go to the baseline as regressors ("NAME/xreg").
  BaselineForecaster(std::unique_ptr<Baseline> b, bool with_covariates, const Interrupt* interrupt)
      : baseline_(std::move(b)), with_covariates_(with_covariates), interrupt_(interrupt) {}
  std::string name() const override { return baseline_->name() + (with_covariates_ ? "/xreg" : ""); }
  std::vector<std::vector<std::vector<double>>> forecast(const std::vector<std::vector<double>>& histories,
                                                         int64_t season, int64_t horizon,
                                                         const std::vector<double>& levels) override {
    return each_window(histories.size(), interrupt_,
                       [&](size_t i) { return baseline_->forecast(histories[i], season, horizon, levels); });
  }
  std::vector<std::vector<std::vector<double>>> forecast_with(const std::vector<std::vector<double>>& histories,
                                                              const std::vector<Covariates>& covariates,
                                                              int64_t season, int64_t horizon,
                                                              const std::vector<double>& levels) override {
    if (!with_covariates_) return forecast(histories, season, horizon, levels);
    if (covariates.size() != histories.size())
      throw Error(name() + ": " + std::to_string(covariates.size()) + " windows' covariates for " +
                  std::to_string(histories.size()) + " windows");
    return each_window(histories.size(), interrupt_, [&](size_t i) {
      return baseline_->forecast_with(histories[i], covariates[i].future, season, horizon, levels);
    });
  }

 private:
  std::unique_ptr<Baseline> baseline_;
  bool with_covariates_;
  const Interrupt* interrupt_;
};

// A series' covariates as a window that starts at step `at` reads them: its past-only rows over
// the steps before, its known-future ones through the horizon too. `unknown` is the first
// (row, step) where a known-future row has no value over the horizon, or nullopt.
EvalForecaster::Covariates covariates_at(const std::vector<std::vector<double>>& past,
                                         const std::vector<std::vector<double>>& future,
                                         const std::vector<double>& statics, int64_t at, int64_t horizon,
                                         std::optional<std::pair<size_t, int64_t>>& unknown) {
  EvalForecaster::Covariates c;
  c.statics = statics;
  unknown.reset();
  for (const auto& row : past) c.past.emplace_back(row.begin(), row.begin() + at);
  for (size_t j = 0; j < future.size(); ++j) {
    c.future.emplace_back(future[j].begin(), future[j].begin() + at + horizon);
    for (int64_t h = at; h < at + horizon && !unknown; ++h)
      if (!std::isfinite(future[j][h])) unknown = std::make_pair(j, h);
  }
  return c;
}

// A model pooled with baselines on each window (combination.h): every part forecasts the window,
// and the quantiles are combined level by level and step by step. Checked (`check` origins, 0:
// none), a window keeps the pool only where it forecast the window's own last horizons better
// than the model (parts[0]) alone, each from the steps before it, the pinball losses summed over
// the origins it can be checked at; elsewhere, and where it cannot be checked, the model's
// forecast.
class CombinedForecaster final : public EvalForecaster {
 public:
  CombinedForecaster(std::string name, std::vector<std::unique_ptr<EvalForecaster>> parts, CombineRule rule, int64_t check)
      : name_(std::move(name)), parts_(std::move(parts)), rule_(rule), check_(check) {}
  std::string name() const override { return name_; }
  std::vector<std::vector<std::vector<double>>> forecast(const std::vector<std::vector<double>>& histories,
                                                         int64_t season, int64_t horizon,
                                                         const std::vector<double>& levels) override {
    return pooled(histories, nullptr, season, horizon, levels);
  }
  std::vector<std::vector<std::vector<double>>> forecast_with(const std::vector<std::vector<double>>& histories,
                                                              const std::vector<Covariates>& covariates,
                                                              int64_t season, int64_t horizon,
                                                              const std::vector<double>& levels) override {
    return pooled(histories, &covariates, season, horizon, levels);
  }

 private:
  using Parts = std::vector<std::vector<std::vector<std::vector<double>>>>;  // [part][window][level][step]
  std::string name_;
  std::vector<std::unique_ptr<EvalForecaster>> parts_;
  CombineRule rule_;
  int64_t check_;

  Parts each(const std::vector<std::vector<double>>& histories, const std::vector<Covariates>* covariates,
             int64_t season, int64_t horizon, const std::vector<double>& levels) {
    Parts out;
    for (auto& p : parts_)
      out.push_back(covariates ? p->forecast_with(histories, *covariates, season, horizon, levels)
                               : p->forecast(histories, season, horizon, levels));
    return out;
  }
  std::vector<std::vector<double>> combine(const Parts& parts, size_t window) const {
    std::vector<std::vector<std::vector<double>>> at;
    for (const auto& p : parts) at.push_back(p[window]);
    return combine_quantiles(at, rule_);
  }

  std::vector<std::vector<std::vector<double>>> pooled(const std::vector<std::vector<double>>& histories,
                                                       const std::vector<Covariates>* covariates, int64_t season,
                                                       int64_t horizon, const std::vector<double>& levels) {
    const Parts full = each(histories, covariates, season, horizon, levels);
    std::vector<std::vector<std::vector<double>>> out(histories.size());
    for (size_t i = 0; i < histories.size(); ++i) out[i] = check_ ? full[0][i] : combine(full, i);
    if (!check_) return out;
    // The model alone, unless the check keeps the pool: the losses of each at every origin.
    std::vector<double> loss_pooled(histories.size(), 0.0), loss_alone(histories.size(), 0.0);
    std::vector<bool> checked(histories.size(), false);
    const auto H = static_cast<size_t>(horizon);
    for (int64_t origin = 0; origin < check_; ++origin) {
      const size_t back = static_cast<size_t>(origin) * H;  // steps before the window's end
      std::vector<size_t> at_origin;
      std::vector<std::vector<double>> heads, actuals;
      std::vector<Covariates> head_covariates;
      bool reaches = false;  // whether any window is long enough for this origin (and so maybe the next)
      for (size_t i = 0; i < histories.size(); ++i) {
        if (histories[i].size() < back + 2 * H) continue;
        reaches = true;
        const std::vector<double> upto(histories[i].begin(), histories[i].end() - static_cast<std::ptrdiff_t>(back));
        if (!combination_checkable(upto, horizon)) continue;
        const size_t at = upto.size() - H;
        if (covariates) {  // a window's covariates as they were at the held-out horizon's start
          const Covariates& c = (*covariates)[i];
          std::optional<std::pair<size_t, int64_t>> unknown;
          Covariates cut = covariates_at(c.past, c.future, c.statics, static_cast<int64_t>(at), horizon, unknown);
          if (unknown) continue;  // not known over the held-out steps: no check there
          head_covariates.push_back(std::move(cut));
        }
        heads.emplace_back(upto.begin(), upto.begin() + static_cast<std::ptrdiff_t>(at));
        actuals.emplace_back(upto.begin() + static_cast<std::ptrdiff_t>(at), upto.end());
        at_origin.push_back(i);
      }
      if (!reaches) break;
      if (at_origin.empty()) continue;
      const Parts before = each(heads, covariates ? &head_covariates : nullptr, season, horizon, levels);
      for (size_t j = 0; j < at_origin.size(); ++j) {
        const double with = pinball_loss(combine(before, j), levels, actuals[j]);
        const double without = pinball_loss(before[0][j], levels, actuals[j]);
        if (!std::isfinite(with) || !std::isfinite(without)) continue;  // as Box-Cox's check: no score here
        loss_pooled[at_origin[j]] += with, loss_alone[at_origin[j]] += without;
        checked[at_origin[j]] = true;
      }
    }
    for (size_t i = 0; i < histories.size(); ++i)
      if (checked[i] && loss_pooled[i] < loss_alone[i]) out[i] = combine(full, i);
    return out;
  }
};

// A baseline that several models are pooled with (a combination scored for each seed): its
// forecasts of the windows it was last asked for (the last `requests`: a checked combination asks
// for the windows and for the steps before each held-out horizon) are kept and given again for
// the same request, so each window is fitted once however many models share it.
class SharedBaseline final : public EvalForecaster {
 public:
  SharedBaseline(std::shared_ptr<EvalForecaster> inner, size_t requests)
      : inner_(std::move(inner)), kept_(std::make_shared<Kept>(Kept{requests, {}})) {}
  std::string name() const override { return inner_->name(); }
  std::vector<std::vector<std::vector<double>>> forecast(const std::vector<std::vector<double>>& histories,
                                                         int64_t season, int64_t horizon,
                                                         const std::vector<double>& levels) override {
    std::deque<Answer>& kept = kept_->answers;
    for (const Answer& a : kept)
      if (a.histories == histories && a.season == season && a.horizon == horizon && a.levels == levels) return a.out;
    Answer a{histories, season, horizon, levels, inner_->forecast(histories, season, horizon, levels)};
    kept.push_front(std::move(a));
    if (kept.size() > kept_->requests) kept.pop_back();
    return kept.front().out;
  }
  // Each handle of the same baseline shares its kept answers.
  std::unique_ptr<EvalForecaster> handle() { return std::unique_ptr<EvalForecaster>(new SharedBaseline(inner_, kept_)); }

 private:
  struct Answer {
    std::vector<std::vector<double>> histories;
    int64_t season = 0, horizon = 0;
    std::vector<double> levels;
    std::vector<std::vector<std::vector<double>>> out;
  };
  struct Kept {
    size_t requests;
    std::deque<Answer> answers;
  };
  SharedBaseline(std::shared_ptr<EvalForecaster> inner, std::shared_ptr<Kept> kept)
      : inner_(std::move(inner)), kept_(std::move(kept)) {}
  std::shared_ptr<EvalForecaster> inner_;
  std::shared_ptr<Kept> kept_;
};

class RegressionForecaster final : public EvalForecaster {
 public:
  RegressionForecaster(std::unique_ptr<EvalForecaster> inner, size_t max_lag) : inner_(std::move(inner)), max_lag_(max_lag) {}
  std::string name() const override { return inner_->name() + (max_lag_ > 0 ? "/lagged-regression" : "/regression"); }
  std::vector<std::vector<std::vector<double>>> forecast(const std::vector<std::vector<double>>& histories,
                                                         int64_t season, int64_t horizon,
                                                         const std::vector<double>& levels) override {
    return inner_->forecast(histories, season, horizon, levels);
  }
  std::vector<std::vector<std::vector<double>>> forecast_with(const std::vector<std::vector<double>>& histories,
                                                              const std::vector<Covariates>& covariates,
                                                              int64_t season, int64_t horizon,
                                                              const std::vector<double>& levels) override {
    if (covariates.size() != histories.size())
      throw Error("regression: " + std::to_string(covariates.size()) + " windows' covariates for " +
                  std::to_string(histories.size()) + " windows");
    std::vector<CovariateRegression> fits;
    std::vector<std::vector<double>> residuals;
    for (size_t i = 0; i < histories.size(); ++i) {
      fits.push_back(CovariateRegression::fit(histories[i], covariates[i].future, max_lag_));
      residuals.push_back(fits.back().residual(histories[i], covariates[i].future));
    }
    // The inner forecaster reads no covariate over time (it forecasts the residual from the history
    // alone), but a model's static covariates still go with each window.
    std::vector<std::vector<std::vector<double>>> out = inner_->forecast_with(residuals, covariates, season, horizon, levels);
    for (size_t i = 0; i < out.size(); ++i)
      for (int64_t h = 0; h < horizon; ++h) {
        const double shift = fits[i].at(covariates[i].future, histories[i].size() + static_cast<size_t>(h));
        for (auto& level : out[i]) level[static_cast<size_t>(h)] += shift;
      }
    return out;
  }

 private:
  std::unique_ptr<EvalForecaster> inner_;
  size_t max_lag_;
};

}  // namespace

std::unique_ptr<EvalForecaster> model_regression_forecaster(Model& model, const std::string& name,
                                                            std::vector<int64_t> contexts, int64_t batch_size,
                                                            const Interrupt* interrupt, ForecastRecipe recipe,
                                                            int64_t max_lag) {
  check_regression_lags(max_lag, "regression: the largest lag");
  check_eval_contexts(contexts);
  if (batch_size < 1) throw Error("evaluation needs a positive batch size, got " + std::to_string(batch_size));
  return std::make_unique<ModelForecaster>(model, name + (max_lag > 0 ? "/lagged-regression" : "/regression"),
                                           std::move(contexts), batch_size, interrupt, recipe, false, max_lag);
}

std::unique_ptr<EvalForecaster> regression_forecaster(std::unique_ptr<EvalForecaster> inner, int64_t max_lag) {
  check_regression_lags(max_lag, "regression: the largest lag");
  return std::make_unique<RegressionForecaster>(std::move(inner), static_cast<size_t>(max_lag));
}

std::unique_ptr<EvalForecaster> model_forecaster(Model& model, std::string name, std::vector<int64_t> contexts,
                                                 int64_t batch_size, const Interrupt* interrupt, ForecastRecipe recipe,
                                                 bool covariates) {
  check_eval_contexts(contexts);
  if (batch_size < 1) throw Error("evaluation needs a positive batch size, got " + std::to_string(batch_size));
  if (covariates && !model.reads_roles())
    throw Error("evaluation: model '" + name + "' does not read variate roles, so it cannot be scored with covariates");
  return std::make_unique<ModelForecaster>(model, std::move(name), std::move(contexts), batch_size, interrupt, recipe,
                                           covariates);
}

std::unique_ptr<EvalForecaster> baseline_forecaster(const std::string& name, const Interrupt* interrupt) {
  return std::make_unique<BaselineForecaster>(make_baseline(name, interrupt), false, interrupt);
}

// ---- the protocol -------------------------------------------------------------------------

namespace {

// One configuration's windows: history and target of each (series, window) item.
// How much of a window's history the forecasts file keeps: its last this many horizons (the
// context a plot of the window draws), as backtest snapshots do.
constexpr int64_t kShownHorizons = 4;

struct Windows {
  int64_t horizon = 0, count = 0, season = 1;
  std::vector<std::vector<double>> histories, targets;
  std::vector<std::string> series;  // per window: its series' name
  std::vector<int64_t> starts;      // per window: the step of the series its target starts at
  std::vector<EvalForecaster::Covariates> covariates;  // per window; empty when the data set has none
};

// The test windows: the last `tests` of the prediction length. The validation split (gluonts'
// split as GIFT-Eval makes it): windows just before them, one or (validation_windows > 1) the
// rolling origins EvalProtocol describes. `count` is the most windows a series has.
Windows make_windows(const EvalDataset& d, Term term, const EvalProtocol& protocol) {
  const bool validation = protocol.validation;
  Windows w;
  w.horizon = prediction_length(d.frequency, term);
  w.season = seasonality(d.frequency);
  int64_t shortest = INT64_MAX;
  for (const auto& s : d.series) shortest = std::min<int64_t>(shortest, static_cast<int64_t>(s.values.size()));
  const int64_t tests = test_windows(shortest, w.horizon);
  const char* kind = validation ? "validation" : "test";
  for (const auto& s : d.series) {
    const int64_t n = static_cast<int64_t>(s.values.size());
    int64_t count = tests;
    if (validation) {
      // Steps before the test windows, less the history of 2 the first window needs.
      const int64_t before = n - tests * w.horizon, room = (before - 2) / w.horizon;
      const int64_t tenth = (before + 10 * w.horizon - 1) / (10 * w.horizon);  // ceil(0.1 * before / H)
      count = std::max<int64_t>(1, std::min({protocol.validation_windows, tenth, room}));
    }
    w.count = std::max(w.count, count);
    const int64_t first = n - (validation ? tests + count : tests) * w.horizon;
    if (first < 2)
      throw Error("data set '" + d.name + "': series '" + s.name + "' has " + std::to_string(n) +
                  " steps, too few for " + (validation ? "a validation window of " + std::to_string(w.horizon) +
                  " before " + std::to_string(tests) + " test window(s)" : std::to_string(count) +
                  " window(s) of " + std::to_string(w.horizon)) +
                  " (" + term_name(term) + " term at " + d.frequency.str() + ") after a history of 2");
    for (int64_t k = 0; k < count; ++k) {
      const auto cut = s.values.begin() + first + k * w.horizon;
      w.histories.emplace_back(s.values.begin(), cut);
      w.targets.emplace_back(cut, cut + w.horizon);
      w.series.push_back(s.name);
      w.starts.push_back(first + k * w.horizon);
      if (!s.past.empty() || !s.future.empty() || !s.statics.empty()) {
        std::optional<std::pair<size_t, int64_t>> unknown;
        w.covariates.push_back(covariates_at(s.past, s.future, s.statics, first + k * w.horizon, w.horizon, unknown));
        if (unknown)
          throw Error("data set '" + d.name + "': series '" + s.name + "': known-future covariate " +
                      std::to_string(unknown->first + 1) + " has no value at step " + std::to_string(unknown->second + 1) +
                      ", inside " + kind + " window " + std::to_string(k + 1) + ", where it must be known");
      }
      // MASE divides by the history's seasonal error: a constant history has none to divide by.
      const double scale = seasonal_error(w.histories.back(), w.season);
      if (!(scale > 0))
        throw Error("data set '" + d.name + "': series '" + s.name + "' " +
                    (std::isnan(scale) ? "has no two observed steps " + std::to_string(w.season) + " apart"
                                       : "does not change (at lag " + std::to_string(w.season) + ")") +
                    " in the " + std::to_string(first + k * w.horizon) + " steps before " + kind + " window " +
                    std::to_string(k + 1) + ", so its MASE is undefined (its seasonal error is " +
                    (std::isnan(scale) ? "unknown" : "0") + "); leave the series out of the data set");
    }
  }
  // The split holds fewer rolling windows than were asked for: say how many it took.
  if (validation && protocol.validation_windows > w.count)
    std::fprintf(stderr,
                 "orrery: note: evaluation: data set '%s' (%s term) holds %lld validation window(s) (at most a tenth "
                 "of the steps before the test windows), not the %lld asked for\n",
                 d.name.c_str(), term_name(term), static_cast<long long>(w.count),
                 static_cast<long long>(protocol.validation_windows));
  return w;
}

struct Scores {
  double mase = 0, crps = 0, coverage = 0;
};

// The scores over every window, or over the windows of one context bucket.
Scores score(const Windows& w, const std::vector<std::vector<std::vector<double>>>& q,
             const std::vector<double>& levels, std::optional<size_t> bucket = std::nullopt) {
  ScoreAccumulator acc(levels);
  for (size_t i = 0; i < w.histories.size(); ++i)
    if (!bucket || context_bucket(w.histories[i].size()) == *bucket)
      acc.add(w.histories[i], w.season, w.targets[i], q[i]);
  return {acc.mase(), acc.crps(), acc.band_coverage(0.1, 0.9)};
}

// A value at 6 significant digits, as the forecasts file keeps them (its JSON prints the shortest
// decimal that reads back as this double: the 6 digits).
double six_digits(double v) {
  if (!std::isfinite(v)) return v;
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return std::strtod(text, nullptr);
}
Json six_digits(const std::vector<double>& v) {
  Json out = Json::array();
  for (double x : v) out.push_back(std::isfinite(x) ? Json(six_digits(x)) : Json(nullptr));  // JSON has no NaN
  return out;
}

double geometric_mean(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += std::log(v);
  return x.empty() ? NAN : std::exp(s / static_cast<double>(x.size()));
}

}  // namespace

Json run_eval(const std::vector<EvalDataset>& datasets, const std::vector<EvalForecaster*>& forecasters,
              const EvalProtocol& protocol, const std::function<void(const std::string&)>& progress,
              const Interrupt* interrupt) {
  if (datasets.empty()) throw Error("evaluation needs at least one data set");
  if (protocol.validation_windows < 1)
    throw Error("evaluation: validation_windows must be at least 1, got " + std::to_string(protocol.validation_windows));
  if (protocol.validation_windows != 1 && !protocol.validation)
    throw Error("evaluation: validation_windows needs the validation split (the test windows are fixed)");
  for (size_t i = 0; i < datasets.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (datasets[k].name == datasets[i].name)
        throw Error("evaluation: data sets " + std::to_string(k + 1) + " and " + std::to_string(i + 1) +
                    " are both named '" + datasets[i].name + "' (from " + datasets[k].origin + " and " +
                    datasets[i].origin + "); each data set is scored once, under a name of its own");
  if (forecasters.empty()) throw Error("evaluation needs at least one model or baseline");
  auto normaliser = baseline_forecaster("seasonal_naive", interrupt);
  Json configs = Json::array(), rows = Json::array(), skipped = Json::array(), unscaled = Json::array(),
       windows = Json::array(), kept = Json::array();
  std::map<std::string, std::vector<double>> mase_ratios, crps_ratios, mean_ratios, coverages;
  // The same ratios by frequency bucket: bucket -> model -> (MASE, CRPS, mean) ratios.
  std::map<std::string, std::map<std::string, std::array<std::vector<double>, 3>>> bucketed;
  for (const auto& d : datasets)
    for (Term term : protocol.terms) {
      if (!has_term(d.frequency, term)) continue;
      if (interrupt && interrupt->requested()) throw Error("evaluation interrupted");
      Windows w;
      try {
        w = make_windows(d, term, protocol);
      } catch (const Error& e) {
        // A short series is refused; one too short for a longer term's horizon is left out of
        // that term, as GIFT-Eval defines medium and long terms only for long enough data sets.
        if (term == Term::short_term) throw;
        skipped.push_back({{"dataset", d.name}, {"term", term_name(term)}, {"why", e.what()}});
        if (progress) progress(d.name + "/" + d.frequency.str() + "/" + term_name(term) + ": skipped, " + e.what());
        continue;
      }
      configs.push_back({{"dataset", d.name}, {"frequency", d.frequency.str()}, {"term", term_name(term)},
                         {"horizon", w.horizon}, {"windows", w.count}, {"items", w.histories.size()},
                         {"season", w.season}});
      const auto naive_q = normaliser->forecast(w.histories, w.season, w.horizon, protocol.levels);
      const Scores naive = score(w, naive_q, protocol.levels);
      std::array<bool, 4> has_context{};
      for (const auto& h : w.histories) has_context[context_bucket(h.size())] = true;
      std::string line = d.name + "/" + d.frequency.str() + "/" + term_name(term) + ": " +
                         std::to_string(w.histories.size()) + " windows of " + std::to_string(w.horizon);
      // keep_forecasts: each window's history (its last steps), actual values and every forecast.
      std::vector<Json> each(protocol.keep_forecasts ? w.histories.size() : 0);
      for (size_t i = 0; i < each.size(); ++i) {
        const auto& h = w.histories[i];
        const size_t shown = std::min<size_t>(h.size(), static_cast<size_t>(kShownHorizons * w.horizon));
        each[i] = {{"dataset", d.name}, {"frequency", d.frequency.str()}, {"term", term_name(term)},
                   {"series", w.series[i]}, {"start", w.starts[i]}, {"season", w.season},
                   {"history", six_digits(std::vector<double>(h.end() - static_cast<std::ptrdiff_t>(shown), h.end()))},
                   {"actual", six_digits(w.targets[i])}, {"forecasts", Json::object()}, {"scores", Json::object()}};
      }
      // A forecaster's quantiles of every kept window, and its MASE and CRPS on the window alone.
      auto keep = [&](const std::string& name, const std::vector<std::vector<std::vector<double>>>& q) {
        for (size_t i = 0; i < each.size(); ++i) {
          Json levels = Json::array();
          for (const auto& level : q[i]) levels.push_back(six_digits(level));
          each[i]["forecasts"][name] = std::move(levels);
          ScoreAccumulator one(protocol.levels);
          one.add(w.histories[i], w.season, w.targets[i], q[i]);
          each[i]["scores"][name] = six_digits(std::vector<double>{one.mase(), one.crps()});
        }
      };
      keep(normaliser->name(), naive_q);
      for (EvalForecaster* f : forecasters) {
        Scores s;
        std::vector<std::vector<std::vector<double>>> q;
        try {
          q = w.covariates.empty() ? f->forecast(w.histories, w.season, w.horizon, protocol.levels)
                                   : f->forecast_with(w.histories, w.covariates, w.season, w.horizon, protocol.levels);
          s = score(w, q, protocol.levels);
        } catch (const std::exception& e) {
          throw Error(f->name() + " on " + d.name + " (" + term_name(term) + "): " + e.what());
        }
        const double mr = s.mase / naive.mase, cr = s.crps / naive.crps;
        rows.push_back({{"dataset", d.name}, {"frequency", d.frequency.str()}, {"term", term_name(term)},
                        {"bucket", frequency_bucket(d.frequency)}, {"model", f->name()}, {"mase", s.mase},
                        {"crps", s.crps}, {"coverage", s.coverage}, {"mase_ratio", mr}, {"crps_ratio", cr}});
        // A configuration where seasonal naive is exact has no ratio: left out of the means, and
        // said so (the table marks it, the result lists it).
        if (std::isfinite(mr)) mase_ratios[f->name()].push_back(mr);
        if (std::isfinite(cr)) crps_ratios[f->name()].push_back(cr);
        if (std::isfinite(mr) && std::isfinite(cr)) {
          mean_ratios[f->name()].push_back((mr + cr) / 2);
          auto& b = bucketed[frequency_bucket(d.frequency)][f->name()];
          b[0].push_back(mr), b[1].push_back(cr), b[2].push_back((mr + cr) / 2);
        }
        for (size_t k = 0; k < has_context.size(); ++k) {  // the same ratios on each bucket's windows
          if (!has_context[k]) continue;
          const Scores sk = score(w, q, protocol.levels, k), nk = score(w, naive_q, protocol.levels, k);
          const double mk = sk.mase / nk.mase, ck = sk.crps / nk.crps;
          if (!std::isfinite(mk) || !std::isfinite(ck)) continue;
          auto& b = bucketed[kContextBuckets[k]][f->name()];
          b[0].push_back(mk), b[1].push_back(ck), b[2].push_back((mk + ck) / 2);
        }
        if (std::isfinite(s.coverage)) coverages[f->name()].push_back(s.coverage);
        keep(f->name(), q);
        for (size_t i = 0; protocol.per_window && i < w.histories.size(); ++i) {
          ScoreAccumulator one(protocol.levels);
          one.add(w.histories[i], w.season, w.targets[i], q[i]);
          windows.push_back({{"dataset", d.name}, {"term", term_name(term)}, {"window", i + 1}, {"model", f->name()},
                             {"mase", one.mase()}, {"crps", one.crps()}});
        }
        char buf[96];
        std::snprintf(buf, sizeof buf, "  %s %.3f/%.3f", f->name().c_str(), mr, cr);
        line += buf;
      }
      for (auto& window : each) kept.push_back(std::move(window));
      if (!(naive.mase > 0) || !(naive.crps > 0)) {
        unscaled.push_back({{"dataset", d.name}, {"frequency", d.frequency.str()}, {"term", term_name(term)},
                            {"why", "seasonal naive is exact here: no ratio, left out of the geometric means"}});
        line += "  (seasonal naive is exact here: no ratio, left out of the geometric means)";
      }
      if (progress) progress(line);
    }
  if (configs.empty()) throw Error("no data set has the requested terms (medium and long exist for H, T and S only)");
  Json summary = Json::array();
  for (EvalForecaster* f : forecasters) {
    double cov = 0;
    for (double c : coverages[f->name()]) cov += c;
    summary.push_back({{"model", f->name()}, {"mase", geometric_mean(mase_ratios[f->name()])},
                       {"crps", geometric_mean(crps_ratios[f->name()])},
                       {"score", geometric_mean(mean_ratios[f->name()])},
                       {"coverage", coverages[f->name()].empty() ? NAN : cov / static_cast<double>(coverages[f->name()].size())},
                       {"configurations", mase_ratios[f->name()].size()}});
  }
  Json buckets = Json::array();
  for (const auto& group : {std::pair{"frequency", std::span(kFrequencyBuckets)}, std::pair{"context", std::span(kContextBuckets)}})
  for (const char* bucket : group.second)
    if (bucketed.count(bucket))
      for (EvalForecaster* f : forecasters) {
        const auto& b = bucketed[bucket][f->name()];
        buckets.push_back({{"by", group.first}, {"bucket", bucket}, {"model", f->name()}, {"mase", geometric_mean(b[0])},
                           {"crps", geometric_mean(b[1])}, {"score", geometric_mean(b[2])},
                           {"configurations", b[0].size()}});
      }
  Json terms = Json::array();
  for (Term t : protocol.terms) terms.push_back(term_name(t));
  Json result = {{"protocol", {{"name", "GIFT-Eval"}, {"split", protocol.validation ? "validation" : "test"},
                        {"terms", terms}, {"levels", protocol.levels},
                        {"normaliser", "seasonal_naive"}, {"aggregate", "geometric mean of ratios"}}},
          {"configurations", configs}, {"skipped", skipped}, {"unscaled", unscaled}, {"rows", rows},
          {"summary", summary}, {"buckets", buckets}};
  if (protocol.validation) result["protocol"]["validation_windows"] = protocol.validation_windows;
  if (protocol.per_window) result["windows"] = windows;
  if (protocol.keep_forecasts) result["forecasts"] = kept;
  return result;
}

namespace {

// The geometric means by frequency bucket, and where ets was scored, each model's relative to
// ets's in the same bucket (Orrery's zero-shot goal is set against ETS, bucket by bucket).
std::string format_buckets(const Json& r, const std::vector<std::string>& models, size_t width) {
  if (!r.contains("buckets") || r["buckets"].empty()) return "";
  std::map<std::string, std::map<std::string, Json>> at;  // bucket -> model -> entry
  for (const auto& b : r["buckets"]) at[b["bucket"]][b["model"]] = b;
  auto num = [](const Json& j, const char* k) { return j.contains(k) && j[k].is_number() ? j[k].get<double>() : NAN; };
  const bool with_ets = std::find(models.begin(), models.end(), "ets") != models.end() && models.size() > 1;
  std::string out;
  char buf[256];
  std::vector<const char*> order(std::begin(kFrequencyBuckets), std::end(kFrequencyBuckets));
  order.insert(order.end(), std::begin(kContextBuckets), std::end(kContextBuckets));
  for (int relative = 0; relative <= (with_ets ? 1 : 0); ++relative) {
    out += relative ? "relative to ets:\n" : "by frequency, and by the history a window has:\n";
    for (const char* bucket : order) {
      if (!at.count(bucket)) continue;
      const auto& row = at[bucket];
      auto entry = [&](const std::string& m) { return row.count(m) ? row.at(m) : Json::object(); };
      const Json ets = entry("ets");
      const std::string label = std::string("  ") + bucket + " (" +
                                std::to_string(row.begin()->second.value("configurations", size_t{0})) + ")";
      std::snprintf(buf, sizeof buf, "%-*s", static_cast<int>(width), label.c_str());
      out += buf;
      for (const auto& m : models) {
        const Json e = entry(m);
        double a = num(e, "mase"), c = num(e, "crps");
        if (relative) a /= num(ets, "mase"), c /= num(ets, "crps");
        std::snprintf(buf, sizeof buf, "  %7.3f %7.3f", a, c);
        out += buf;
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace

std::string format_eval_table(const Json& r) {
  std::vector<std::string> models;
  for (const auto& s : r["summary"]) models.push_back(s["model"]);
  std::map<std::string, std::map<std::string, std::pair<double, double>>> cell;  // config -> model -> ratios
  std::vector<std::string> order;
  for (const auto& row : r["rows"]) {
    const std::string key = row["dataset"].get<std::string>() + "/" + row["frequency"].get<std::string>() + "/" +
                            row["term"].get<std::string>();
    if (!cell.count(key)) order.push_back(key);
    auto num = [](const Json& j) { return j.is_number() ? j.get<double>() : NAN; };
    cell[key][row["model"]] = {num(row["mase_ratio"]), num(row["crps_ratio"])};
  }
  size_t width = 13;
  for (const auto& k : order) width = std::max(width, k.size());
  std::string out;
  char buf[256];
  // Two header lines: the model over its pair of columns, then which column is which.
  std::snprintf(buf, sizeof buf, "%-*s", static_cast<int>(width), "");
  out += buf;
  for (const auto& m : models) std::snprintf(buf, sizeof buf, "  %15.15s", m.c_str()), out += buf;
  out += "\n";
  std::snprintf(buf, sizeof buf, "%-*s", static_cast<int>(width), "dataset/freq/term");
  out += buf;
  for (size_t i = 0; i < models.size(); ++i) out += "     MASE    CRPS";
  out += "\n";
  auto pair = [&](double a, double b) {
    std::snprintf(buf, sizeof buf, "  %7.3f %7.3f", a, b);
    return std::string(buf);
  };
  for (const auto& k : order) {
    std::snprintf(buf, sizeof buf, "%-*s", static_cast<int>(width), k.c_str());
    out += buf;
    for (const auto& m : models) out += pair(cell[k][m].first, cell[k][m].second);
    out += "\n";
  }
  std::snprintf(buf, sizeof buf, "%-*s", static_cast<int>(width), "geometric mean");
  out += buf;
  for (const auto& s : r["summary"])
    out += pair(s["mase"].is_number() ? s["mase"].get<double>() : NAN, s["crps"].is_number() ? s["crps"].get<double>() : NAN);
  out += "\n";
  std::snprintf(buf, sizeof buf, "%-*s", static_cast<int>(width), "(MASE+CRPS)/2");
  out += buf;
  for (const auto& s : r["summary"])
    std::snprintf(buf, sizeof buf, "  %15.3f", s["score"].is_number() ? s["score"].get<double>() : NAN), out += buf;
  out += "\n";
  std::snprintf(buf, sizeof buf, "%-*s", static_cast<int>(width), "10-90 coverage");
  out += buf;
  for (const auto& s : r["summary"])
    std::snprintf(buf, sizeof buf, "  %15.3f", s["coverage"].is_number() ? s["coverage"].get<double>() : NAN), out += buf;
  out += "\n";
  out += format_buckets(r, models, width);
  out += "(ratios to seasonal naive on the same windows; below 1 is better)\n";
  if (r["protocol"].value("split", "test") == "validation") {
    const int64_t n = r["protocol"].value("validation_windows", int64_t{1});
    out += n == 1 ? std::string("(validation windows: the one window before each series' test windows)\n")
                  : "(validation windows: up to " + std::to_string(n) +
                        " rolling origins before each series' test windows, covering a tenth of its history)\n";
  }
  if (r["protocol"].value("sign_average", false))
    out += "(the models' forecasts sign-averaged: f(x) with -f(-x) at mirrored levels)\n";
  const int64_t origins = r["protocol"].value("check_origins", int64_t{1});
  const std::string last = origins == 1 ? "last horizon" : "last " + std::to_string(origins) + " horizons";
  if (r["protocol"].contains("box_cox"))
    out += std::string("(the models forecast each window's Box-Cox transform, its exponent by Guerrero's method, mapped "
                       "back") +
           (r["protocol"].value("box_cox_average", false) ? ", averaged with the untransformed forecast" : "") +
           (r["protocol"]["box_cox"] == "checked" ? "; each window keeps it only where it forecast the window's own " +
                                                        last + " better"
                                                  : "") +
           ")\n";
  if (r["protocol"].contains("combine")) {
    std::string with;
    for (const auto& b : r["protocol"]["combine"]["with"]) with += "+" + b.get<std::string>();
    out += "(MODEL" + with + ": the model pooled with those baselines on each window, the " +
           r["protocol"]["combine"]["rule"].get<std::string>() + " of their quantiles" +
           (r["protocol"]["combine"].value("checked", false)
                ? "; each window keeps it only where it forecast the window's own " + last + " better than the model alone"
                : "") + ")\n";
  }
  if (r["protocol"].contains("contexts") && r["protocol"]["contexts"].size() > 1) {
    std::string list;
    for (const auto& c : r["protocol"]["contexts"]) list += (list.empty() ? "" : ", ") + std::to_string(c.get<int64_t>());
    out += "(the models' forecasts averaged over the last " + list + " steps: a context ensemble)\n";
  }
  if (r.contains("unscaled"))
    for (const auto& u : r["unscaled"])
      out.append("(").append(u["dataset"].get<std::string>()).append("/").append(u["frequency"].get<std::string>())
          .append("/").append(u["term"].get<std::string>()).append(": ").append(u["why"].get<std::string>()).append(")\n");
  return out;
}

// eval_forecasts.jsonl: a header line, then one line per window (eval_protocol.h, kEvalForecastsVersion).
void write_eval_forecasts(const Json& r, const std::string& dir) {
  Json names = Json::array();
  for (const auto& s : r["summary"]) names.push_back(s["model"]);
  const Json header = {{"orrery_eval_forecasts", kEvalForecastsVersion}, {"split", r["protocol"]["split"]},
                       {"levels", r["protocol"]["levels"]}, {"forecasters", names},
                       {"normaliser", r["protocol"]["normaliser"]}, {"windows", r["forecasts"].size()}};
  fs::create_directories(dir);
  write_file_atomically((fs::path(dir) / kEvalForecastsFile).string(), [&](std::ostream& o) {
    o << header.dump() << "\n";
    for (const auto& window : r["forecasts"]) o << window.dump() << "\n";
  });
}

void write_eval(const Json& r, const std::string& dir) {
  fs::create_directories(dir);
  write_file_atomically((fs::path(dir) / "eval.json").string(), [&](std::ostream& o) { o << r.dump(1) << "\n"; });
  write_file_atomically((fs::path(dir) / "eval.csv").string(), [&](std::ostream& o) {
    o << "dataset,frequency,term,bucket,model,mase,crps,coverage,mase_ratio,crps_ratio\n";
    auto num = [](const Json& j) {
      char b[32];
      std::snprintf(b, sizeof b, "%.9g", j.is_number() ? j.get<double>() : NAN);
      return std::string(b);
    };
    for (const auto& row : r["rows"])
      o << row["dataset"].get<std::string>() << "," << row["frequency"].get<std::string>() << ","
        << row["term"].get<std::string>() << "," << row.value("bucket", std::string()) << ","
        << row["model"].get<std::string>() << "," << num(row["mase"]) << ","
        << num(row["crps"]) << "," << num(row["coverage"]) << "," << num(row["mase_ratio"]) << ","
        << num(row["crps_ratio"]) << "\n";
  });
}

Json evaluate_request(const EvalRequest& r, const Interrupt* interrupt) {
  check_eval_contexts(r.contexts);
  if (r.batch_size < 1) throw Error("evaluation: batch_size must be at least 1, got " + std::to_string(r.batch_size));
  const std::vector<EvalDataset> datasets =
      r.source ? eval_datasets(*r.source, r.data, r.frequency) : load_eval_datasets(r.data, r.frequency);
  bool covariates = false, known_future = false;
  for (const auto& d : datasets)
    for (const auto& s : d.series) {
      covariates = covariates || !s.past.empty() || !s.future.empty();
      for (const auto& [name, model] : r.models)
        if (const auto read = model->static_covariates(); !read.empty() && s.statics.size() != read.size())
          throw Error("evaluation: model '" + name + "' reads static covariates (" + join_names(read) +
                      ") but data set '" + d.name + "' gives " + std::to_string(s.statics.size()) + " for series '" +
                      s.name + "': evaluate it on data that names the same ones (static_covariates)");
      known_future = known_future || !s.future.empty();
    }
  check_regression_lags(r.regression_lags, "evaluation: regression_lags");
  std::vector<int64_t> regression_lag_sets;  // the regressions each forecaster is also scored through
  if (known_future) regression_lag_sets.push_back(0);
  if (known_future && r.regression_lags > 0) regression_lag_sets.push_back(r.regression_lags);
  if (r.box_cox_check && !r.box_cox) throw Error("evaluation: box_cox_check checks the Box-Cox transform: set box_cox too");
  if (r.combine_check && r.combine.empty())
    throw Error("evaluation: combine_check checks a combination: give the baselines to combine with");
  check_origins_count(r.check_origins, "evaluation: check_origins");
  const ForecastRecipe recipe{r.sign_average, r.box_cox, r.box_cox_check, r.box_cox_average, r.check_origins};
  std::vector<std::unique_ptr<EvalForecaster>> owned;
  std::vector<SharedBaseline> pooled;  // the combination's baselines, fitted once for every model
  const size_t requests = 1 + (r.combine_check ? static_cast<size_t>(r.check_origins) : 0);
  for (const auto& b : r.combine) pooled.emplace_back(baseline_forecaster(b, interrupt), requests);
  for (const auto& [name, model] : r.models) {
    // With covariates and without, on the same windows: what the covariates are worth.
    const bool both = covariates && model->reads_roles();
    owned.push_back(model_forecaster(*model, name, r.contexts, r.batch_size, interrupt, recipe, both));
    if (both)
      owned.push_back(model_forecaster(*model, name + "/no-covariates", r.contexts, r.batch_size, interrupt, recipe));
    // And through an in-context regression on the known-future ones, which any model can use.
    // With regression_lags, also over the covariates' lags (NAME/lagged-regression).
    for (const int64_t lags : regression_lag_sets)
      owned.push_back(model_regression_forecaster(*model, name, r.contexts, r.batch_size, interrupt, recipe, lags));
    // Pooled with classical forecasters fitted on the same windows: NAME+ets+theta.
    if (!r.combine.empty()) {
      std::vector<std::unique_ptr<EvalForecaster>> parts;
      parts.push_back(model_forecaster(*model, name, r.contexts, r.batch_size, interrupt, recipe));
      std::string combined = name;
      for (size_t i = 0; i < r.combine.size(); ++i) parts.push_back(pooled[i].handle()), combined += "+" + r.combine[i];
      if (r.combine_rule == CombineRule::median) combined += "/median";
      if (r.combine_check) combined += "/checked";
      owned.push_back(std::make_unique<CombinedForecaster>(combined, std::move(parts), r.combine_rule,
                                                           r.combine_check ? r.check_origins : 0));
    }
  }
  for (const auto& b : r.baselines) {
    owned.push_back(baseline_forecaster(b, interrupt));
    for (const int64_t lags : regression_lag_sets)  // regression, b's errors
      owned.push_back(regression_forecaster(baseline_forecaster(b, interrupt), lags));
    // A baseline that takes regressors itself (ARIMA): fitted jointly with them.
    if (auto joint = make_baseline(b, interrupt); known_future && joint->reads_covariates())
      owned.push_back(std::make_unique<BaselineForecaster>(std::move(joint), true, interrupt));
  }
  std::vector<EvalForecaster*> forecasters;
  for (size_t i = 0; i < owned.size(); ++i) {
    for (size_t k = 0; k < i; ++k)
      if (owned[k]->name() == owned[i]->name())
        throw Error("evaluation: two forecasters are named '" + owned[i]->name() + "'; give the models other names");
    forecasters.push_back(owned[i].get());
  }
  int64_t series = 0;
  for (const auto& d : datasets) series += static_cast<int64_t>(d.series.size());
  if (!r.quiet) {
    std::printf("evaluating %zu forecaster(s) on %zu data sets (%lld series) from %s\n", forecasters.size(),
                datasets.size(), static_cast<long long>(series), (r.source ? r.data : eval_data_path(r.data)).c_str());
    std::fflush(stdout);
  }
  auto progress = [&](const std::string& line) {
    if (r.quiet) return;
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  EvalProtocol protocol = r.protocol;
  protocol.keep_forecasts = r.forecasts && !r.out.empty();
  Json result = run_eval(datasets, forecasters, protocol, progress, interrupt);
  if (!r.models.empty()) {
    result["protocol"]["sign_average"] = r.sign_average;
    result["protocol"]["regression_lags"] = r.regression_lags;
    result["protocol"]["contexts"] = r.contexts;
    if (r.box_cox) result["protocol"]["box_cox"] = r.box_cox_check ? Json("checked") : Json(true);
    if (r.box_cox && r.box_cox_average) result["protocol"]["box_cox_average"] = true;
    if ((r.box_cox && r.box_cox_check) || r.combine_check) result["protocol"]["check_origins"] = r.check_origins;
    if (!r.combine.empty())
      result["protocol"]["combine"] = {{"with", r.combine}, {"rule", combine_rule_name(r.combine_rule)},
                                       {"checked", r.combine_check}};
  }
  result["table"] = format_eval_table(result);
  if (!r.out.empty()) {
    if (protocol.keep_forecasts) {
      write_eval_forecasts(result, r.out);  // every window's forecasts beside the scores, not in eval.json
      result.erase("forecasts");
    }
    write_eval(result, r.out);
    result["out"] = r.out;
  }
  if (!r.quiet) {
    std::printf("\n%s", result["table"].get<std::string>().c_str());
    if (!r.out.empty())
      std::printf("written: %s/eval.json, %s/eval.csv%s\n", r.out.c_str(), r.out.c_str(),
                  protocol.keep_forecasts ? (", " + r.out + "/eval_forecasts.jsonl").c_str() : "");
    std::fflush(stdout);
  }
  return result;
}

}  // namespace orrery
