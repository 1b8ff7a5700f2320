// The GIFT-Eval protocol: the frequency table, windows, ratios to seasonal naive, geometric
// means, the bundled benchmark, and the front ends (orrery.eval, orrery eval).
#include <catch2/catch.hpp>

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "orrery/error.h"
#include "orrery/host/box_cox.h"
#include "orrery/host/eval_protocol.h"
#include "orrery/host/model.h"
#include "orrery/host/file_tree.h"
#include "orrery/host/forecast_request.h"
#include "orrery/host/baselines.h"
#include "orrery/frequency.h"
#include "orrery/host/scoring.h"
#include "support.h"

using namespace orrery;
namespace fs = std::filesystem;

TEST_CASE("the frequency table is GIFT-Eval's") {
  struct Row { const char* freq; int64_t season, short_len; };
  for (const Row& r : {Row{"10S", 360, 60}, Row{"5T", 288, 48}, Row{"10T", 144, 48}, Row{"15T", 96, 48},
                       Row{"H", 24, 48}, Row{"D", 1, 30}, Row{"B", 5, 30}, Row{"W", 1, 8}, Row{"M", 12, 12},
                       Row{"Q", 4, 8}, Row{"A", 1, 6}, Row{"7T", 1, 48}}) {
    INFO(r.freq);
    const Frequency f = Frequency::parse(r.freq);
    CHECK(seasonality(f) == r.season);
    CHECK(prediction_length(f, Term::short_term) == r.short_len);
  }
  // New pandas aliases and anchors normalise as GIFT-Eval's norm_freq_str does.
  CHECK(Frequency::parse("min").str() == "T");
  CHECK(Frequency::parse("5min").str() == "5T");
  CHECK(Frequency::parse("h").str() == "H");
  CHECK(Frequency::parse("ME").str() == "M");
  CHECK(Frequency::parse("W-SUN").str() == "W");
  CHECK(Frequency::parse("YE").str() == "A");
  CHECK(Frequency::parse("Q-DEC").str() == "Q");
  // Terms: x1, x10, x15, and medium/long only at high frequencies.
  CHECK(prediction_length(Frequency::parse("H"), Term::medium_term) == 480);
  CHECK(prediction_length(Frequency::parse("15T"), Term::long_term) == 720);
  CHECK(prediction_length(Frequency::parse("10S"), Term::long_term) == 900);
  CHECK_THROWS_WITH(prediction_length(Frequency::parse("M"), Term::long_term),
                    Catch::Contains("hourly and faster"));
  CHECK_THROWS_WITH(Frequency::parse("fortnight"), Catch::Contains("unknown frequency 'fortnight'"));
  CHECK_THROWS_WITH(parse_term("longest"), Catch::Contains("unknown term 'longest'"));
  // Windows: min(max(1, ceil(0.1 * shortest / H)), 20).
  CHECK(test_windows(144, 12) == 2);
  CHECK(test_windows(50, 12) == 1);
  CHECK(test_windows(100000, 48) == 20);
  CHECK(test_windows(480, 48) == 1);
  CHECK(test_windows(481, 48) == 2);
}

namespace {

// Forecasts a known series: the truth plus `offset` at every level (an oracle when 0).
struct Shifted final : EvalForecaster {
  std::vector<double> series;
  double offset = 0;
  std::string name() const override { return "shifted"; }
  std::vector<std::vector<std::vector<double>>> forecast(const std::vector<std::vector<double>>& histories, int64_t,
                                                         int64_t horizon, const std::vector<double>& levels) override {
    std::vector<std::vector<std::vector<double>>> out;
    for (const auto& h : histories) {
      std::vector<double> next(series.begin() + static_cast<long>(h.size()),
                               series.begin() + static_cast<long>(h.size()) + horizon);
      for (double& v : next) v += offset;
      out.emplace_back(levels.size(), next);
    }
    return out;
  }
};

EvalDataset yearly(std::vector<double> values) {
  EvalDataset d;
  d.name = "toy", d.frequency = Frequency::parse("A");
  d.series.push_back({"toy", std::move(values), 1, {}, {}});
  return d;
}

}  // namespace

TEST_CASE("run_eval scores the last non-overlapping windows against seasonal naive on the same windows") {
  std::vector<double> y;
  for (int t = 0; t < 130; ++t) y.push_back(100 + 3 * t + 10 * std::sin(t * 0.7));
  const EvalDataset d = yearly(y);
  Shifted oracle, off;
  oracle.series = off.series = y;
  off.offset = 2.0;
  const Json r = run_eval({d}, {&oracle, &off}, EvalProtocol{});
  REQUIRE(r["configurations"].size() == 1);
  const Json& c = r["configurations"][0];
  CHECK(c["horizon"] == 6);
  CHECK(c["windows"] == 3);  // ceil(0.1 * 130 / 6) = 3
  CHECK(c["season"] == 1);
  const Json& rows = r["rows"];
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["mase"].get<double>() == 0.0);
  CHECK(rows[0]["crps"].get<double>() == 0.0);
  CHECK(rows[0]["coverage"].get<double>() == 1.0);
  // Off by +2 everywhere: MASE is the mean over the three windows of 2 / s_w, s_w the mean
  // absolute one-step difference of the window's whole history; every quantile lies above the
  // truth, so QL_q = 2 * 2 * (1 - q) at each step and CRPS = mean_q sum QL_q / sum |y|.
  double mase = 0, abs_y = 0;
  for (int w = 0; w < 3; ++w) {
    std::vector<double> h(y.begin(), y.begin() + 130 - 18 + 6 * w);
    mase += 2.0 / seasonal_error(h, 1) / 3;
    for (int k = 0; k < 6; ++k) abs_y += std::fabs(y[static_cast<size_t>(130 - 18 + 6 * w + k)]);
  }
  double ql = 0;
  for (double q : EvalProtocol{}.levels) ql += 2 * 2 * (1 - q) * 18;
  CHECK(rows[1]["mase"].get<double>() == Approx(mase).epsilon(1e-12));
  CHECK(rows[1]["crps"].get<double>() == Approx(ql / 9 / abs_y).epsilon(1e-12));
  CHECK(rows[1]["coverage"].get<double>() == 0.0);  // the truth lies below the 10% quantile
  // Ratios to seasonal naive computed on the same windows.
  auto naive = baseline_forecaster("seasonal_naive");
  const Json n = run_eval({d}, {naive.get()}, EvalProtocol{});
  CHECK(n["rows"][0]["mase_ratio"].get<double>() == 1.0);
  CHECK(n["rows"][0]["crps_ratio"].get<double>() == 1.0);
  CHECK(rows[1]["mase_ratio"].get<double>() == Approx(mase / n["rows"][0]["mase"].get<double>()).epsilon(1e-12));
}

TEST_CASE("baselines fit the windows on the intra-op threads: the same scores on one thread as on three") {
  EvalDataset d;
  d.name = "toys", d.frequency = Frequency::parse("M");
  for (int s = 0; s < 6; ++s) {
    std::vector<double> y;
    for (int t = 0; t < 150; ++t) y.push_back(50 + (s + 1) * t * 0.2 + (5 + s) * std::sin(t * 2 * M_PI / 12) + std::cos(t * (s + 1.3)));
    d.series.push_back({"toy" + std::to_string(s), std::move(y), 12, {}, {}});
  }
  auto ets = baseline_forecaster("ets"), theta = baseline_forecaster("theta");
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  const std::string one = run_eval({d}, {ets.get(), theta.get()}, EvalProtocol{})["rows"].dump();
  at::set_num_threads(3);
  const std::string three = run_eval({d}, {ets.get(), theta.get()}, EvalProtocol{})["rows"].dump();
  at::set_num_threads(before);
  CHECK(one == three);
}

TEST_CASE("per_window scores each window alone: the pooled scores are their combination") {
  std::vector<double> y;
  for (int t = 0; t < 130; ++t) y.push_back(100 + 3 * t + 10 * std::sin(t * 0.7));
  Shifted off;
  off.series = y;
  off.offset = 2.0;
  EvalProtocol p;
  CHECK(!run_eval({yearly(y)}, {&off}, p).contains("windows"));  // off by default
  p.per_window = true;
  const Json r = run_eval({yearly(y)}, {&off}, p);
  REQUIRE(r["windows"].size() == 3);  // the three test windows
  // Off by +2: window w's MASE is 2 / s_w, and its CRPS the pinball sum over its own |y|; the
  // pooled MASE is their mean, the pooled CRPS the same sums over all three windows.
  double mase = 0, ql = 0;
  for (double q : p.levels) ql += 2 * 2 * (1 - q) * 6;
  for (int w = 0; w < 3; ++w) {
    const Json& one = r["windows"][w];
    CHECK(one["dataset"] == "toy");
    CHECK(one["term"] == "short");
    CHECK(one["window"] == w + 1);
    CHECK(one["model"] == "shifted");
    std::vector<double> h(y.begin(), y.begin() + 130 - 18 + 6 * w);
    double abs_y = 0;
    for (int k = 0; k < 6; ++k) abs_y += std::fabs(y[static_cast<size_t>(130 - 18 + 6 * w + k)]);
    CHECK(one["mase"].get<double>() == Approx(2.0 / seasonal_error(h, 1)).epsilon(1e-12));
    CHECK(one["crps"].get<double>() == Approx(ql / 9 / abs_y).epsilon(1e-12));
    mase += one["mase"].get<double>() / 3;
  }
  CHECK(r["rows"][0]["mase"].get<double>() == Approx(mase).epsilon(1e-12));
}

TEST_CASE("eval.csv holds one line per row, with the row's frequency bucket") {
  std::vector<double> y;
  for (int t = 0; t < 130; ++t) y.push_back(100 + 3 * t + 10 * std::sin(t * 0.7));
  auto naive = baseline_forecaster("naive"), seasonal = baseline_forecaster("seasonal_naive");
  const Json r = run_eval({yearly(y)}, {naive.get(), seasonal.get()}, EvalProtocol{});
  const std::string dir = test::temp_dir("eval-csv");
  write_eval(r, dir);
  std::ifstream in(dir + "/eval.csv");
  std::string header, line;
  std::getline(in, header);
  CHECK(header == "dataset,frequency,term,bucket,model,mase,crps,coverage,mase_ratio,crps_ratio");
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1].rfind(r["rows"][1]["dataset"].get<std::string>() + ",A,short,yearly,seasonal_naive,", 0) == 0);
}

TEST_CASE("the summary is the geometric mean of the ratios across configurations") {
  std::vector<double> a, b;
  for (int t = 0; t < 60; ++t) a.push_back(50 + (t % 5) * 2.0 + t), b.push_back(10 + 0.5 * t + (t % 3));
  Shifted fa, fb;
  fa.series = a, fa.offset = 1;
  const Json ra = run_eval({yearly(a)}, {&fa}, EvalProtocol{});
  fb.series = b, fb.offset = 1;
  const Json rb = run_eval({yearly(b)}, {&fb}, EvalProtocol{});
  // Both data sets with one forecaster that knows each: pair them through one forecaster.
  struct Either final : EvalForecaster {
    Shifted *x, *y;
    std::string name() const override { return "either"; }
    std::vector<std::vector<std::vector<double>>> forecast(const std::vector<std::vector<double>>& h, int64_t s,
                                                           int64_t H, const std::vector<double>& l) override {
      return h[0][0] == x->series[0] ? x->forecast(h, s, H, l) : y->forecast(h, s, H, l);
    }
  } either;
  either.x = &fa, either.y = &fb;
  EvalDataset da = yearly(a), db = yearly(b);
  db.name = "other";
  const Json r = run_eval({da, db}, {&either}, EvalProtocol{});
  const double ma = ra["rows"][0]["mase_ratio"], mb = rb["rows"][0]["mase_ratio"];
  const double ca = ra["rows"][0]["crps_ratio"], cb = rb["rows"][0]["crps_ratio"];
  CHECK(r["summary"][0]["mase"].get<double>() == Approx(std::sqrt(ma * mb)).epsilon(1e-12));
  CHECK(r["summary"][0]["crps"].get<double>() == Approx(std::sqrt(ca * cb)).epsilon(1e-12));
  CHECK(r["summary"][0]["configurations"] == 2);
  // The search objective: the geometric mean of each configuration's (MASE + CRPS) / 2.
  CHECK(r["summary"][0]["score"].get<double>() == Approx(std::sqrt((ma + ca) / 2 * (mb + cb) / 2)).epsilon(1e-12));
  // Both are yearly, and every window has 48 to 128 steps of history: one bucket of each kind,
  // with the overall means.
  REQUIRE(r["buckets"].size() == 2);
  CHECK(r["buckets"][0]["by"] == "frequency");
  CHECK(r["buckets"][0]["bucket"] == "yearly");
  CHECK(r["buckets"][1]["by"] == "context");
  CHECK(r["buckets"][1]["bucket"] == "context 48-127");
  for (const auto& b : r["buckets"])
    CHECK(b["mase"].get<double>() == Approx(r["summary"][0]["mase"].get<double>()).epsilon(1e-12));
  // As monthly and quarterly they fall in two buckets, each its own data set's ratio; the table
  // shows them, and relative to ets when ets is scored.
  EvalDataset qa = da, mb_ = db;
  qa.frequency = Frequency::parse("Q"), mb_.frequency = Frequency::parse("M");
  const Json split = run_eval({qa, mb_}, {&either}, EvalProtocol{});
  REQUIRE(split["buckets"].size() == 3);  // quarterly, monthly; context 48-127
  CHECK(split["buckets"][0]["bucket"] == "quarterly");  // in the report's order: yearly, quarterly, monthly, higher
  CHECK(split["buckets"][1]["bucket"] == "monthly");
  CHECK(split["buckets"][0]["configurations"] == 1);
  // The overall mean is the geometric mean of the buckets' weighted by their configurations.
  const double q = split["buckets"][0]["crps"], m = split["buckets"][1]["crps"];
  CHECK(split["summary"][0]["crps"].get<double>() == Approx(std::sqrt(q * m)).epsilon(1e-12));
  const std::string table = format_eval_table(split);
  CHECK_THAT(table, Catch::Contains("by frequency, and by the history a window has:"));
  CHECK_THAT(table, Catch::Contains("  context 48-127 (2)"));
  CHECK_THAT(table, Catch::Contains("  quarterly (1)"));
  CHECK_THAT(table, !Catch::Contains("relative to ets"));
  Json with_ets = split;
  for (Json* part : {&with_ets["summary"], &with_ets["buckets"]}) {
    const Json copy = *part;
    for (Json e : copy) {
      e["model"] = "ets", e["mase"] = e["mase"].get<double>() * 2, e["crps"] = e["crps"].get<double>() * 4;
      part->push_back(e);
    }
  }
  const std::string rel = format_eval_table(with_ets);
  CHECK_THAT(rel, Catch::Contains("relative to ets:\n  quarterly (1)"));
  CHECK_THAT(rel, Catch::Contains("  0.500   0.250    1.000   1.000"));  // either / ets, then ets / ets
}

TEST_CASE("the context buckets score each window with its history's length bucket") {
  // Two hourly series, one window of 48 each (as each would have alone): 32 steps of history
  // (under 48) and 252 (128 to 512).
  std::vector<double> a, b;
  for (int t = 0; t < 80; ++t) a.push_back(20 + 0.1 * t + 3 * std::sin(t));
  for (int t = 0; t < 300; ++t) b.push_back(500 + 2 * t + 9 * std::cos(0.3 * t));
  auto hourly = [](std::vector<double> y) {
    EvalDataset d = yearly(std::move(y));
    d.frequency = Frequency::parse("H");
    return d;
  };
  // Forecasts the truth, off by 1 after a short history and by 3 after a long one.
  struct ByLength final : EvalForecaster {
    std::vector<std::vector<double>> all;
    std::string name() const override { return "by_length"; }
    std::vector<std::vector<std::vector<double>>> forecast(const std::vector<std::vector<double>>& hs, int64_t,
                                                           int64_t H, const std::vector<double>& l) override {
      std::vector<std::vector<std::vector<double>>> out;
      for (const auto& h : hs)
        for (const auto& y : all)
          if (y[0] == h[0]) {
            std::vector<double> next(y.begin() + static_cast<long>(h.size()), y.begin() + static_cast<long>(h.size()) + H);
            for (double& v : next) v += h.size() < 48 ? 1 : 3;
            out.emplace_back(l.size(), next);
          }
      return out;
    }
  } f;
  f.all = {a, b};
  EvalDataset both = hourly(a);
  both.series.push_back({"b", b, 1, {}, {}});
  const Json r = run_eval({both}, {&f}, EvalProtocol{});
  std::map<std::string, double> crps;
  for (const auto& x : r["buckets"]) crps[x["bucket"]] = x["crps"];
  REQUIRE(crps.count("context <48"));
  REQUIRE(crps.count("context 128-512"));
  CHECK(!crps.count("context 48-127"));
  // Each bucket's ratio is the one its series alone would get.
  const Json ra = run_eval({hourly(a)}, {&f}, EvalProtocol{}), rb = run_eval({hourly(b)}, {&f}, EvalProtocol{});
  CHECK(rb["configurations"][0]["windows"] == 1);
  CHECK(crps["context <48"] == Approx(ra["summary"][0]["crps"].get<double>()).epsilon(1e-12));
  CHECK(crps["context 128-512"] == Approx(rb["summary"][0]["crps"].get<double>()).epsilon(1e-12));
  CHECK(crps["higher"] == Approx(r["summary"][0]["crps"].get<double>()).epsilon(1e-12));
}

namespace {
// Forecasts each window's last value at every level, and records the length of each history.
struct Recorder final : EvalForecaster {
  std::vector<size_t> lengths;
  std::string name() const override { return "recorder"; }
  std::vector<std::vector<std::vector<double>>> forecast(const std::vector<std::vector<double>>& h, int64_t,
                                                         int64_t H, const std::vector<double>& l) override {
    std::vector<std::vector<std::vector<double>>> out;
    for (const auto& x : h) lengths.push_back(x.size()), out.emplace_back(l.size(), std::vector<double>(H, x.back()));
    return out;
  }
};
}  // namespace

TEST_CASE("the validation split is the one window before the test windows, which it never touches") {
  std::vector<double> y;
  for (int t = 0; t < 130; ++t) y.push_back(100 + 3 * t + 10 * std::sin(t * 0.7));
  // Three test windows of 6 (steps 112..129); validation is steps 106..111, history 0..105.
  Recorder test, val;
  EvalProtocol p;
  const Json rt = run_eval({yearly(y)}, {&test}, p);
  p.validation = true;
  const Json rv = run_eval({yearly(y)}, {&val}, p);
  CHECK(test.lengths == std::vector<size_t>{112, 118, 124});
  CHECK(val.lengths == std::vector<size_t>{106});
  CHECK(rv["configurations"][0]["windows"] == 1);
  CHECK(rv["protocol"]["split"] == "validation");
  CHECK(rt["protocol"]["split"] == "test");
  // A last-value median against seasonal naive's (season 1: also the last value): MASE ratio 1;
  // one configuration, so the score is its (MASE + CRPS) / 2.
  CHECK(rv["summary"][0]["mase"].get<double>() == Approx(1.0).epsilon(1e-12));
  const Json& row = rv["rows"][0];
  CHECK(rv["summary"][0]["score"].get<double>() ==
        Approx((row["mase_ratio"].get<double>() + row["crps_ratio"].get<double>()) / 2).epsilon(1e-12));
  // No room for a validation window before the test windows: refused, saying so.
  EvalDataset shorty = yearly(std::vector<double>(y.begin(), y.begin() + 13));
  CHECK_NOTHROW(run_eval({shorty}, {&test}, EvalProtocol{}));  // 1 test window of 6 after 7 steps
  CHECK_THROWS_WITH(run_eval({yearly(std::vector<double>(y.begin(), y.begin() + 13))}, {&val}, p),
                    Catch::Contains("too few for a validation window of 6 before 1 test window(s)"));
}

TEST_CASE("rolling validation origins: back to back before the test windows, a tenth of each series' history") {
  std::vector<double> y;
  for (int t = 0; t < 400; ++t) y.push_back(100 + 3 * t + 10 * std::sin(t * 0.7));
  EvalDataset d = yearly(y);  // the long series: 400 steps
  d.series.push_back({"short", std::vector<double>(y.begin(), y.begin() + 130), 1, {}, {}});
  // The shortest has 130 steps: 3 test windows of 6 at the end of every series. Before them the
  // long series has 382 steps, a tenth of which 7 windows cover (ceil(38.2 / 6)); the short one
  // 112: 2 windows.
  EvalProtocol p;
  p.validation = true;
  p.validation_windows = 20;
  Recorder rolling, capped, one;
  const Json r = run_eval({d}, {&rolling}, p);
  CHECK(rolling.lengths == std::vector<size_t>{340, 346, 352, 358, 364, 370, 376, 100, 106});
  CHECK(r["configurations"][0]["windows"] == 7);
  CHECK(r["configurations"][0]["items"] == 9);
  CHECK(r["protocol"]["validation_windows"] == 20);
  CHECK_THAT(format_eval_table(r), Catch::Contains("up to 20 rolling origins before each series' test windows"));
  p.validation_windows = 4;
  run_eval({d}, {&capped}, p);
  CHECK(capped.lengths == std::vector<size_t>{358, 364, 370, 376, 100, 106});
  p.validation_windows = 1;  // GIFT-Eval's split
  run_eval({d}, {&one}, p);
  CHECK(one.lengths == std::vector<size_t>{376, 106});
  p.validation_windows = 0;
  CHECK_THROWS_WITH(run_eval({d}, {&one}, p), Catch::Contains("validation_windows must be at least 1, got 0"));
  p.validation = false, p.validation_windows = 5;  // the test windows are fixed
  CHECK_THROWS_WITH(run_eval({d}, {&one}, p), Catch::Contains("validation_windows needs the validation split"));
}

TEST_CASE("what has no score is refused or said: a constant series, two data sets of one name, an exact naive") {
  std::vector<double> y;
  for (int t = 0; t < 60; ++t) y.push_back(10 + t);
  Shifted f;
  f.series = y;
  // Before: MASE -nan and CRPS inf for the data set, left out of the geometric mean silently.
  EvalDataset flat = yearly(std::vector<double>(60, 7.0));
  flat.name = "flat";
  CHECK_THROWS_WITH(run_eval({flat}, {&f}, EvalProtocol{}),
                    Catch::Contains("data set 'flat': series 'toy' does not change (at lag 1) in the 54 steps before test "
                                    "window 1, so its MASE is undefined (its seasonal error is 0); leave the series out"));
  // Before: both scored, their rows indistinguishable.
  EvalDataset a = yearly(y), b = yearly(y);
  CHECK_THROWS_WITH(run_eval({a, b}, {&f}, EvalProtocol{}),
                    Catch::Contains("evaluation: data sets 1 and 2 are both named '" + a.name + "'"));
  // Seasonal naive exact on the test window (the series stops changing there) but not on the
  // history: no ratio, left out of the means, and said so (before: silently).
  std::vector<double> level;
  for (int t = 0; t < 60; ++t) level.push_back(t < 40 ? t : 40);
  EvalDataset still = yearly(level);
  still.name = "still";
  auto naive = baseline_forecaster("seasonal_naive");
  const Json r = run_eval({still}, {naive.get()}, EvalProtocol{});
  REQUIRE(r["unscaled"].size() == 1);
  CHECK(r["unscaled"][0]["dataset"] == "still");
  CHECK_THAT(format_eval_table(r), Catch::Contains("(still/") &&
                                       Catch::Contains("seasonal naive is exact here: no ratio, left out of the geometric means)"));
}

TEST_CASE("the bundled benchmark loads every data set its manifest lists") {
  const auto sets = load_eval_datasets(ORRERY_SOURCE_DIR "/assets/data");
  std::ifstream in(ORRERY_SOURCE_DIR "/assets/data/manifest.json");
  const Json m = Json::parse(in);
  REQUIRE(sets.size() == m["datasets"].size());
  std::set<std::string> freqs;
  for (size_t i = 0; i < sets.size(); ++i) {
    INFO(sets[i].name);
    CHECK(sets[i].name == m["datasets"][i]["name"].get<std::string>());
    CHECK(static_cast<int64_t>(sets[i].series.size()) == m["datasets"][i]["series"].get<int64_t>());
    CHECK(static_cast<int64_t>(sets[i].series[0].values.size()) == m["datasets"][i]["length"].get<int64_t>());
    freqs.insert(sets[i].frequency.str());
  }
  // Every frequency R's datasets package offers: yearly to 10-minute.
  CHECK(freqs == std::set<std::string>{"A", "Q", "M", "B", "D", "10T", "T"});
}

TEST_CASE("the decision benchmark loads every data set its manifest lists, six times the bundled one's series") {
  const auto sets = load_eval_datasets(ORRERY_SOURCE_DIR "/assets/decision");
  std::ifstream in(ORRERY_SOURCE_DIR "/assets/decision/manifest.json");
  const Json m = Json::parse(in);
  REQUIRE(sets.size() == m["datasets"].size());
  size_t series = 0;
  std::set<std::string> freqs;
  for (size_t i = 0; i < sets.size(); ++i) {
    INFO(sets[i].name);
    CHECK(sets[i].name == m["datasets"][i]["name"].get<std::string>());
    CHECK(static_cast<int64_t>(sets[i].series.size()) == m["datasets"][i]["series"].get<int64_t>());
    series += sets[i].series.size();
    freqs.insert(sets[i].frequency.str());
  }
  size_t bundled = 0;
  for (const auto& d : load_eval_datasets(ORRERY_SOURCE_DIR "/assets/data")) bundled += d.series.size();
  CHECK(series >= 5 * bundled);
  CHECK(freqs == std::set<std::string>{"A", "4A", "Q", "M", "W", "D", "B", "30T", "5T"});
}

TEST_CASE("benchmark errors name the manifest entry or file at fault") {
  const fs::path dir = fs::path(test::temp_dir("eval-errors"));
  std::ofstream(dir / "a.csv") << "time,value\n1,2\n2,3\n";
  std::ofstream(dir / "manifest.json") << R"({"datasets": [{"name": "a", "file": "a.csv", "frequency": "M"},
                                                           {"name": "b", "file": "a.csv"}]})";
  CHECK_THROWS_WITH(load_eval_datasets(dir.string()), Catch::Contains("datasets[2] needs a \"frequency\" string"));
  std::ofstream(dir / "manifest.json") << R"({"datasets": [{"name": "a", "file": "a.csv", "frequency": "fortnightly"}]})";
  CHECK_THROWS_WITH(load_eval_datasets(dir.string()),
                    Catch::Contains("datasets[1]") && Catch::Contains("unknown frequency 'fortnightly'"));
  std::ofstream(dir / "manifest.json") << R"({"datasets": [{"name": "gone", "file": "gone.csv", "frequency": "M"}]})";
  CHECK_THROWS_WITH(load_eval_datasets(dir.string()), Catch::Contains("gone.csv"));
  CHECK_THROWS_WITH(load_eval_datasets((dir / "a.csv").string()), Catch::Contains("needs its frequency"));
  // ISO dates in "time" give the frequency; a given one wins.
  std::ofstream(dir / "hourly.csv") << "time,a,b\n2024-01-01 00:00,1,2\n2024-01-01 01:00,2,\n2024-01-01 02:00,3,4\n";
  const auto hourly = load_eval_datasets((dir / "hourly.csv").string());
  CHECK(hourly[0].frequency.str() == "H");
  CHECK(hourly[0].series.size() == 2);
  CHECK(hourly[0].series[0].season == 24);
  CHECK(std::isnan(hourly[0].series[1].values[1]));
  CHECK(load_eval_datasets((dir / "hourly.csv").string(), "2H")[0].series[0].season == 12);
  // Too short for one window after a history: refused, naming the series and the term.
  std::vector<double> shorty = {1, 2, 3, 4, 5, 6, 7};
  auto naive = baseline_forecaster("naive");
  CHECK_THROWS_WITH(run_eval({yearly(shorty)}, {naive.get()}, EvalProtocol{}),
                    Catch::Contains("series 'toy' has 7 steps") && Catch::Contains("short term at A"));
  EvalProtocol longer;
  longer.terms = {Term::long_term};
  CHECK_THROWS_WITH(run_eval({yearly(shorty)}, {naive.get()}, longer), Catch::Contains("no data set has the requested terms"));
  // A data set too short for a longer term's horizon is left out of that term, and said so.
  EvalDataset by_hour;
  by_hour.name = "by_hour", by_hour.frequency = Frequency::parse("H");
  std::vector<double> days(600);
  for (size_t t = 0; t < days.size(); ++t) days[t] = 10 + std::sin(2 * M_PI * static_cast<double>(t) / 24);
  by_hour.series.push_back({"h", days, 24, {}, {}});
  EvalProtocol all;
  all.terms = {Term::short_term, Term::medium_term, Term::long_term};
  const Json r = run_eval({by_hour}, {naive.get()}, all);
  CHECK(r["configurations"].size() == 2);  // short (48) and medium (480); long (720) > 600 steps
  REQUIRE(r["skipped"].size() == 1);
  CHECK(r["skipped"][0]["term"] == "long");
  CHECK_THROWS_WITH(load_eval_datasets((dir / "nowhere").string()), Catch::Contains("no such file or folder"));
  orrery::remove_tree(dir);
}

TEST_CASE("a model is scored on every window in batched forward passes") {
  auto model = test::tiny_model();
  std::vector<double> y;
  for (int t = 0; t < 200; ++t) y.push_back(20 + 5 * std::sin(2 * M_PI * t / 12.0) + 0.1 * t);
  EvalDataset d;
  d.name = "monthly", d.frequency = Frequency::parse("M");
  d.series.push_back({"a", y, 12, {}, {}});
  d.series.push_back({"b", std::vector<double>(y.begin(), y.begin() + 150), 12, {}, {}});
  // batch 1 and batch 64 give the same forecasts: batching does not change a window's answer.
  auto one = model_forecaster(*model, "tiny", {64}, 1), all = model_forecaster(*model, "tiny", {64}, 64);
  const Json r1 = run_eval({d}, {one.get()}, EvalProtocol{}), r64 = run_eval({d}, {all.get()}, EvalProtocol{});
  CHECK(r1["configurations"][0]["items"] == 4);  // 2 series x ceil(0.1 * 150 / 12) = 2 windows
  CHECK(r1["rows"][0]["mase"].get<double>() == Approx(r64["rows"][0]["mase"].get<double>()).epsilon(1e-5));
  CHECK(std::isfinite(r1["rows"][0]["crps_ratio"].get<double>()));
  const std::string table = format_eval_table(r1);
  CHECK_THAT(table, Catch::Contains("monthly/M/short") && Catch::Contains("geometric mean"));
}

TEST_CASE("a context ensemble averages the forecasts from each context, level by level") {
  auto model = test::tiny_model(2);
  std::vector<double> y;
  for (int t = 0; t < 150; ++t) y.push_back(50 + 8 * std::sin(2 * M_PI * t / 12.0) + 0.3 * t + std::cos(t * 0.9));
  std::vector<std::vector<double>> windows{y, std::vector<double>(y.begin(), y.begin() + 100)};
  const std::vector<double> levels{0.1, 0.5, 0.9};
  auto forecast = [&](std::vector<int64_t> contexts) {
    return model_forecaster(*model, "tiny", std::move(contexts), 8)->forecast(windows, 12, 12, levels);
  };
  const auto short_ = forecast({40}), long_ = forecast({120}), both = forecast({40, 120});
  bool differ = false;
  for (size_t w = 0; w < windows.size(); ++w)
    for (size_t q = 0; q < levels.size(); ++q)
      for (size_t h = 0; h < 12; ++h) {
        CHECK(both[w][q][h] == Approx((short_[w][q][h] + long_[w][q][h]) / 2).margin(1e-9));
        differ = differ || std::abs(short_[w][q][h] - long_[w][q][h]) > 1e-6;
        if (q > 0) CHECK(both[w][q][h] >= both[w][q - 1][h]);  // still sorted along the levels
      }
  CHECK(differ);  // the two contexts are two forecasts, so the test above tests something

  // The model's own option: the same average, and a context beyond the history reads all of it.
  const at::Tensor x = at::tensor(y, at::kDouble).view({1, 1, -1});
  const at::Tensor seen = at::ones_like(x, at::kBool), ids = at::zeros({1, 1}, at::kLong);
  ForecastOptions plain, ensemble, whole;
  plain.levels = ensemble.levels = whole.levels = levels;
  ensemble.contexts = {40, 1000};
  whole.contexts = {1000};
  const Forecast f = model->forecast(x, seen, ids, 12, ensemble), all = model->forecast(x, seen, ids, 12, plain);
  const Forecast last40 = model->forecast(x.narrow(2, 110, 40), seen.narrow(2, 110, 40), ids, 12, plain);
  CHECK(at::allclose(f.quantiles, (all.quantiles + last40.quantiles) / 2, 0, 1e-9));
  CHECK(at::allclose(f.median, (all.median + last40.median) / 2, 0, 1e-9));
  CHECK(at::allclose(model->forecast(x, seen, ids, 12, whole).quantiles, all.quantiles, 0, 1e-12));

  ForecastOptions bad = plain;
  bad.contexts = {64, 0};
  CHECK_THROWS_WITH(model->forecast(x, seen, ids, 12, bad), Catch::Contains("at least 1 step each, got 0"));
  bad.contexts = {64, 64};
  CHECK_THROWS_WITH(model->forecast(x, seen, ids, 12, bad), Catch::Contains("name 64 steps twice"));
  CHECK_THROWS_WITH(model_forecaster(*model, "tiny", {64, 64}, 8), Catch::Contains("context 64 given twice"));
  CHECK_THROWS_WITH(model_forecaster(*model, "tiny", {}, 8), Catch::Contains("at least one context"));
  // A series unobserved over the last 50 steps reads its whole history in the short context; the
  // other series of the batch keeps its own short forecast.
  const at::Tensor pair = at::cat({x, x * 2 + 5});
  at::Tensor gap = at::ones_like(pair, at::kBool);
  gap[1].narrow(1, 100, 50).fill_(false);
  const at::Tensor two_ids = at::zeros({2, 1}, at::kLong);
  ForecastOptions hedge = plain;
  hedge.contexts = {30, 150};
  const Forecast h = model->forecast(pair, gap, two_ids, 12, hedge);
  const Forecast h_whole = model->forecast(pair, gap, two_ids, 12, plain);
  const Forecast h_short = model->forecast(x.narrow(2, 120, 30), seen.narrow(2, 120, 30), ids, 12, plain);
  CHECK(at::allclose(h.quantiles.select(1, 0), (h_whole.quantiles.select(1, 0) + h_short.quantiles.select(1, 0)) / 2,
                     0, 1e-9));
  CHECK(at::allclose(h.quantiles.select(1, 1), h_whole.quantiles.select(1, 1), 0, 1e-9));
  // A context reached twice (both beyond the history) is one forecast, weighed twice.
  ForecastOptions twice = plain;
  twice.contexts = {40, 500, 1000};
  CHECK(at::allclose(model->forecast(x, seen, ids, 12, twice).quantiles,
                     (2 * all.quantiles + last40.quantiles) / 3, 0, 1e-9));
}

TEST_CASE("a sign-averaged model scores a series and its negation alike; a plain one need not") {
  auto model = test::tiny_model(4);
  EvalDataset up, down;
  up.name = "up", down.name = "down";
  up.frequency = down.frequency = Frequency::parse("M");
  std::vector<double> y, minus_y;
  for (int t = 0; t < 160; ++t) y.push_back(30 + 6 * std::sin(2 * M_PI * t / 12.0) + 0.2 * t + std::cos(t * 1.7));
  for (double v : y) minus_y.push_back(-v);
  up.series.push_back({"a", y, 12, {}, {}});
  down.series.push_back({"a", minus_y, 12, {}, {}});
  auto score = [&](bool sign_average, const EvalDataset& d) {
    auto f = model_forecaster(*model, "tiny", {64}, 8, nullptr, {.sign_average = sign_average});
    const Json r = run_eval({d}, {f.get()}, EvalProtocol{});
    return std::pair{r["rows"][0]["mase"].get<double>(), r["rows"][0]["crps"].get<double>()};
  };
  const auto [mase_up, crps_up] = score(true, up);
  const auto [mase_down, crps_down] = score(true, down);
  CHECK(mase_up == Approx(mase_down).epsilon(1e-9));
  CHECK(crps_up == Approx(crps_down).epsilon(1e-9));
  CHECK(score(false, up).second != Approx(score(false, down).second).epsilon(1e-6));
}

TEST_CASE("Box-Cox: the transform inverts, and Guerrero's exponent reads how a series' swings grow with its level") {
  for (double lambda : {0.0, 0.25, 0.5, 1.0})
    for (double y : {1e-3, 0.7, 5.0, 1e4}) {
      INFO("lambda " << lambda << ", y " << y);
      CHECK(inverse_box_cox(box_cox(y, lambda), lambda) == Approx(y).epsilon(1e-12));
    }
  CHECK(box_cox(std::exp(2.0), 0) == Approx(2.0));
  CHECK(inverse_box_cox(-3, 0.5) == 0);  // below the transform's range: the series' floor
  CHECK(std::isnan(inverse_box_cox(std::nan(""), 0.5)));

  // Swings in proportion to the level (a multiplicative season on exponential growth): every
  // block of a season is the one before, scaled, so the log (0) makes them equal. Swings of a
  // fixed size on a growing level: none (1).
  std::vector<double> multiplicative, additive;
  for (int t = 0; t < 120; ++t) {
    multiplicative.push_back(100 * std::exp(0.02 * t) * (1 + 0.3 * std::sin(2 * M_PI * t / 4)));
    additive.push_back(100 + 0.5 * t + 10 * std::sin(2 * M_PI * t / 4));
  }
  CHECK(guerrero_lambda(multiplicative, 4) == 0);
  CHECK(guerrero_lambda(additive, 4) == 1);
  // In between: swings that grow as the level's square root.
  std::vector<double> root;
  for (int t = 0; t < 120; ++t) {
    const double level = 100 * std::exp(0.03 * t);
    root.push_back(level + std::sqrt(level) * 3 * std::sin(2 * M_PI * t / 4));
  }
  CHECK(guerrero_lambda(root, 4) == Approx(0.5).margin(0.05));
  // Gaps are skipped; a value <= 0, or fewer than three blocks, leaves the series as it is.
  std::vector<double> gappy = multiplicative;
  gappy[7] = gappy[50] = std::nan("");
  CHECK(guerrero_lambda(gappy, 4) <= 0.02);
  std::vector<double> zero = multiplicative;
  zero[3] = 0;
  CHECK(guerrero_lambda(zero, 4) == 1);
  CHECK(guerrero_lambda(std::vector<double>(multiplicative.begin(), multiplicative.begin() + 11), 4) == 1);
  CHECK(guerrero_lambda(std::vector<double>(multiplicative.begin(), multiplicative.begin() + 12), 4) == 0);
  CHECK(guerrero_lambda(std::vector<double>(40, 3.0), 4) == 1);  // no block moves
}

TEST_CASE("a Box-Cox forecast is the transformed series' forecast mapped back, level by level") {
  auto model = test::tiny_model(5);
  std::vector<double> y, logs;
  // 128 steps: whole patches of the tiny model's 32, no left padding (whose zeros a shift would move).
  for (int t = 0; t < 128; ++t) y.push_back(50 * std::exp(0.015 * t) * (1 + 0.25 * std::sin(2 * M_PI * t / 12)));
  for (double v : y) logs.push_back(std::log(v));
  const at::Tensor x = at::tensor(y, at::kDouble).view({1, 1, -1}), lx = at::tensor(logs, at::kDouble).view({1, 1, -1});
  const at::Tensor seen = at::ones_like(x, at::kBool), ids = at::zeros({1, 1}, at::kLong);
  ForecastOptions plain, log_, guerrero;
  plain.levels = log_.levels = guerrero.levels = {0.1, 0.5, 0.9};
  plain.mean = log_.mean = guerrero.mean = true;
  log_.box_cox = 0;
  const Forecast f = model->forecast(x, seen, ids, 12, log_), of_logs = model->forecast(lx, seen, ids, 12, plain);
  CHECK(at::allclose(f.quantiles, of_logs.quantiles.exp(), 1e-12, 0));
  CHECK(at::allclose(f.median, of_logs.median.exp(), 1e-12, 0));
  // The mean integrates the mapped quantile function (the levels forecast() averages for it), not
  // the map of the transformed mean.
  ForecastOptions grid = log_;
  grid.mean = false, grid.levels.clear();
  for (int i = 0; i < 32; ++i) grid.levels.push_back((i + 0.5) / 32);
  CHECK(at::allclose(f.mean, model->forecast(x, seen, ids, 12, grid).quantiles.mean(0), 1e-12, 0));
  CHECK(!at::allclose(f.mean, of_logs.mean.exp(), 1e-6, 0));
  // Guerrero's exponent, over blocks of the season: this series' swings grow with its level.
  guerrero.box_cox = std::numeric_limits<double>::quiet_NaN(), guerrero.season = 12;
  CHECK(guerrero_lambda(y, 12) == 0);
  CHECK(at::allclose(model->forecast(x, seen, ids, 12, guerrero).quantiles, f.quantiles, 1e-12, 0));
  // Exponent 1 is a shift by 1, which the scaler undoes (on whole patches); a quantile below the
  // transform's range (this untrained model's lowest go below 0) reads the floor, 0.
  ForecastOptions one = plain;
  one.box_cox = 1;
  const at::Tensor below = model->forecast(x, seen, ids, 12, plain).quantiles;
  CHECK((below < 0).any().item<bool>());
  CHECK(at::allclose(model->forecast(x, seen, ids, 12, one).quantiles, below.clamp_min(0), 1e-4, 0));
  // A series with a value <= 0 is forecast as it is; the other series of the batch is transformed.
  at::Tensor pair = at::cat({x, x - 60});
  const at::Tensor two_seen = at::ones_like(pair, at::kBool), two_ids = at::zeros({2, 1}, at::kLong);
  const Forecast both = model->forecast(pair, two_seen, two_ids, 12, guerrero);
  const Forecast as_is = model->forecast(pair, two_seen, two_ids, 12, plain);
  CHECK(at::allclose(both.quantiles.select(1, 1), as_is.quantiles.select(1, 1), 1e-12, 0));
  CHECK(at::allclose(both.quantiles.select(1, 0), f.quantiles.select(1, 0), 1e-5, 0));  // a batch of 2, not 1
  ForecastOptions bad = plain;
  bad.box_cox = 1.5;
  CHECK_THROWS_WITH(model->forecast(x, seen, ids, 12, bad), Catch::Contains("must lie in [0, 1]"));

  // The eval scores a model's Box-Cox forecasts with each window's season, and says so.
  EvalDataset d;
  d.name = "growing", d.frequency = Frequency::parse("M");
  d.series.push_back({"a", y, 12, {}, {}});
  auto transformed = model_forecaster(*model, "tiny", {64}, 8, nullptr, {.box_cox = true});
  auto untransformed = model_forecaster(*model, "tiny", {64}, 8);
  const Json r = run_eval({d}, {transformed.get(), untransformed.get()}, EvalProtocol{});
  CHECK(r["rows"][0]["crps"].get<double>() != Approx(r["rows"][1]["crps"].get<double>()).epsilon(1e-6));
  const std::vector<std::vector<double>> windows{std::vector<double>(y.begin(), y.end() - 12)};
  const auto one_window = transformed->forecast(windows, 12, 12, {0.1, 0.5, 0.9});
  ForecastOptions by_hand = guerrero;
  by_hand.mean = false;
  const Forecast expected = model->forecast(x.narrow(2, 52, 64), seen.narrow(2, 52, 64), ids, 12, by_hand);
  for (int64_t h = 0; h < 12; ++h) CHECK(one_window[0][1][h] == Approx(expected.median[0][0][h].item<double>()).epsilon(1e-12));
}

TEST_CASE("a checked Box-Cox keeps the transform only for the series whose own last horizon it forecast better") {
  auto model = test::tiny_model(5);
  const int64_t T = 128, H = 12;
  std::vector<double> grows, other;
  for (int t = 0; t < T; ++t) {
    grows.push_back(50 * std::exp(0.015 * t) * (1 + 0.25 * std::sin(2 * M_PI * t / 12)));
    other.push_back(80 * std::exp(0.01 * t) * (1 + 0.3 * std::cos(2 * M_PI * t / 12)));
  }
  at::Tensor x = at::stack({at::tensor(grows, at::kDouble), at::tensor(other, at::kDouble)}).view({2, 1, T});
  const at::Tensor seen = at::ones_like(x, at::kBool), ids = at::zeros({2, 1}, at::kLong);
  ForecastOptions plain, transformed;
  plain.levels = transformed.levels = {0.1, 0.5, 0.9};
  transformed.box_cox = std::numeric_limits<double>::quiet_NaN(), transformed.season = 12;
  // The last 12 steps are the check's: make series 0's the transformed forecast's median from the
  // steps before them, and series 1's the untransformed one's, so each check has a clear winner.
  const at::Tensor head = x.narrow(2, 0, T - H), head_seen = seen.narrow(2, 0, T - H);
  const Forecast ht = model->forecast(head, head_seen, ids, H, transformed), hp = model->forecast(head, head_seen, ids, H, plain);
  REQUIRE(!at::allclose(ht.median, hp.median, 1e-3, 0));  // the transform changes this model's forecasts
  x.select(0, 0).narrow(1, T - H, H).copy_(ht.median.select(0, 0));
  x.select(0, 1).narrow(1, T - H, H).copy_(hp.median.select(0, 1));
  ForecastOptions checked = transformed;
  checked.box_cox_check = true;
  const Forecast c = model->forecast(x, seen, ids, H, checked);
  const Forecast t = model->forecast(x, seen, ids, H, transformed), p = model->forecast(x, seen, ids, H, plain);
  CHECK(at::allclose(c.quantiles.select(1, 0), t.quantiles.select(1, 0), 0, 0));
  CHECK(at::allclose(c.quantiles.select(1, 1), p.quantiles.select(1, 1), 0, 0));
  CHECK(at::allclose(c.median.select(0, 0), t.median.select(0, 0), 0, 0));
  // Too short to hold out a horizon after a patch: forecast as it is.
  const at::Tensor short_x = x.narrow(2, 0, 40), short_seen = seen.narrow(2, 0, 40);
  CHECK(at::allclose(model->forecast(short_x, short_seen, ids, H, checked).quantiles,
                     model->forecast(short_x, short_seen, ids, H, plain).quantiles, 0, 0));
  // Through the evaluation, whose protocol says so.
  EvalDataset d;
  d.name = "growing", d.frequency = Frequency::parse("M");
  d.series.push_back({"a", grows, 12, {}, {}});
  auto guarded = model_forecaster(*model, "tiny", {64}, 8, nullptr, {.box_cox = true, .box_cox_check = true});
  const Json r = run_eval({d}, {guarded.get()}, EvalProtocol{});
  CHECK(std::isfinite(r["rows"][0]["crps"].get<double>()));
}

TEST_CASE("an averaged Box-Cox is the transformed and plain forecasts' mean, checked on that mean where asked") {
  auto model = test::tiny_model(5);
  const int64_t T = 128, H = 12;
  std::vector<double> grows, other;
  for (int t = 0; t < T; ++t) {
    grows.push_back(50 * std::exp(0.015 * t) * (1 + 0.25 * std::sin(2 * M_PI * t / 12)));
    other.push_back(80 * std::exp(0.01 * t) * (1 + 0.3 * std::cos(2 * M_PI * t / 12)));
  }
  const at::Tensor g = at::tensor(grows, at::kDouble);
  at::Tensor x = at::stack({g, at::tensor(other, at::kDouble), g}).view({3, 1, T});
  const at::Tensor seen = at::ones_like(x, at::kBool), ids = at::zeros({3, 1}, at::kLong);
  ForecastOptions plain, transformed;
  plain.levels = transformed.levels = {0.1, 0.5, 0.9};
  plain.mean = transformed.mean = true;
  transformed.box_cox = std::numeric_limits<double>::quiet_NaN(), transformed.season = 12;
  // Unchecked: every level of every row is the mean of the two forecasts, and so is the mean.
  ForecastOptions averaged = transformed;
  averaged.box_cox_average = true;
  const Forecast t = model->forecast(x, seen, ids, H, transformed), p = model->forecast(x, seen, ids, H, plain);
  REQUIRE(!at::allclose(t.quantiles, p.quantiles, 1e-3, 0));  // the transform changes this model's forecasts
  const Forecast a = model->forecast(x, seen, ids, H, averaged);
  CHECK(at::allclose(a.quantiles, (t.quantiles + p.quantiles) / 2, 1e-6, 0));
  CHECK(at::allclose(a.median, (t.median + p.median) / 2, 1e-6, 0));
  CHECK(at::allclose(a.mean, (t.mean + p.mean) / 2, 1e-6, 0));
  CHECK((a.quantiles.diff(1, 0) >= 0).all().item<bool>());  // still sorted along the levels
  // Checked: the last 12 steps are the check's. Series 0's are the transformed forecast's median
  // from the steps before them, so the average, erring at most the mean of its parts, beats the
  // plain forecast there; series 1's are the plain forecast's median, where it does not. Series 2
  // (series 0 again) lies between, nearer the plain median: there the average beats the plain
  // forecast and the transform alone does not, so a check that scored the transform alone would
  // keep the plain forecast. Each row keeps the average exactly where it scored better than the
  // plain forecast, computed here from the parts.
  const at::Tensor head = x.narrow(2, 0, T - H), head_seen = seen.narrow(2, 0, T - H);
  const Forecast ht = model->forecast(head, head_seen, ids, H, transformed), hp = model->forecast(head, head_seen, ids, H, plain);
  x.select(0, 0).narrow(1, T - H, H).copy_(ht.median.select(0, 0));
  x.select(0, 1).narrow(1, T - H, H).copy_(hp.median.select(0, 1));
  x.select(0, 2).narrow(1, T - H, H).copy_(0.4 * ht.median.select(0, 2) + 0.6 * hp.median.select(0, 2));
  const auto loss = [&](const at::Tensor& quantiles, int64_t row) {
    std::vector<std::vector<double>> q(3);
    for (size_t l = 0; l < q.size(); ++l) {
      const at::Tensor r = quantiles[static_cast<int64_t>(l)][row][0].contiguous();
      q[l].assign(r.data_ptr<double>(), r.data_ptr<double>() + H);
    }
    const at::Tensor y = x[row][0].narrow(0, T - H, H).contiguous();
    return pinball_loss(q, plain.levels, std::vector<double>(y.data_ptr<double>(), y.data_ptr<double>() + H));
  };
  const at::Tensor held_out_average = (ht.quantiles + hp.quantiles) / 2;
  REQUIRE(loss(held_out_average, 0) < loss(hp.quantiles, 0));
  REQUIRE(!(loss(held_out_average, 1) < loss(hp.quantiles, 1)));
  REQUIRE(loss(held_out_average, 2) < loss(hp.quantiles, 2));
  REQUIRE(loss(ht.quantiles, 2) >= loss(hp.quantiles, 2));
  averaged.box_cox_check = true;
  const Forecast c = model->forecast(x, seen, ids, H, averaged);
  const Forecast ct = model->forecast(x, seen, ids, H, transformed), cp = model->forecast(x, seen, ids, H, plain);
  const at::Tensor mean_of_both = (ct.quantiles + cp.quantiles) / 2;
  for (int64_t row = 0; row < 3; ++row) {
    const bool keeps = loss(held_out_average, row) < loss(hp.quantiles, row);
    CAPTURE(row, keeps);
    CHECK(at::allclose(c.quantiles.select(1, row), (keeps ? mean_of_both : cp.quantiles).select(1, row), 1e-6, 0));
  }
  // Refused without a transform to average, on every front end (test_cli, test_errors).
}

TEST_CASE("a checked Box-Cox sums its check over the last check_origins horizons, those a row can be checked at") {
  auto model = test::tiny_model(5);
  const int64_t T = 128, H = 12;
  std::vector<double> grows;
  for (int t = 0; t < T; ++t) grows.push_back(50 * std::exp(0.015 * t) * (1 + 0.25 * std::sin(2 * M_PI * t / 12)));
  at::Tensor x = at::tensor(grows, at::kDouble).view({1, 1, T}).repeat({3, 1, 1});
  at::Tensor seen = at::ones_like(x, at::kBool);
  const at::Tensor ids = at::zeros({3, 1}, at::kLong);
  ForecastOptions plain, transformed;
  plain.levels = transformed.levels = {0.1, 0.5, 0.9};
  transformed.box_cox = std::numeric_limits<double>::quiet_NaN(), transformed.season = 12;
  const auto median = [&](int64_t cut, const ForecastOptions& o) {
    return model->forecast(x.narrow(2, 0, cut), seen.narrow(2, 0, cut), ids, H, o).median;
  };
  // Row 0: the second horizon back is the transformed forecast's median from the steps before it,
  // and the last is unobserved: one origin cannot check it, two keep the transform. Row 1: the
  // last horizon is the transformed median, the one before unobserved: both keep the transform.
  x.select(0, 0).narrow(1, T - 2 * H, H).copy_(median(T - 2 * H, transformed).select(0, 0));
  seen.select(0, 0).narrow(1, T - H, H).fill_(false);
  x.select(0, 0).narrow(1, T - H, H).fill_(std::numeric_limits<double>::quiet_NaN());
  seen.select(0, 1).narrow(1, T - 2 * H, H).fill_(false);
  x.select(0, 1).narrow(1, T - 2 * H, H).fill_(std::numeric_limits<double>::quiet_NaN());
  x.select(0, 1).narrow(1, T - H, H).copy_(median(T - H, transformed).select(0, 1));
  // Row 2 is observed throughout: its choice is the sum over both origins, computed here.
  const auto loss = [&](int64_t cut, const ForecastOptions& o) {
    const Forecast f = model->forecast(x.narrow(2, 0, cut), seen.narrow(2, 0, cut), ids, H, o);
    std::vector<std::vector<double>> q(f.levels.size());
    for (size_t l = 0; l < q.size(); ++l) {
      const at::Tensor row = f.quantiles[static_cast<int64_t>(l)][2][0].contiguous();
      q[l].assign(row.data_ptr<double>(), row.data_ptr<double>() + H);
    }
    const at::Tensor a = x[2][0].narrow(0, cut, H).contiguous();
    return pinball_loss(q, f.levels, std::vector<double>(a.data_ptr<double>(), a.data_ptr<double>() + H));
  };
  const bool row2_transformed = loss(T - H, transformed) + loss(T - 2 * H, transformed) < loss(T - H, plain) + loss(T - 2 * H, plain);

  ForecastOptions checked = transformed;
  checked.box_cox_check = true;
  const Forecast t = model->forecast(x, seen, ids, H, transformed), p = model->forecast(x, seen, ids, H, plain);
  REQUIRE(!at::allclose(t.quantiles, p.quantiles, 1e-3, 0));  // the transform changes this model's forecasts
  const auto kept = [&](const Forecast& f, int64_t row) {
    return at::equal(f.quantiles.select(1, row), t.quantiles.select(1, row)) ? "transform"
           : at::equal(f.quantiles.select(1, row), p.quantiles.select(1, row)) ? "none" : "neither";
  };
  const Forecast one = model->forecast(x, seen, ids, H, checked);
  CHECK(std::string(kept(one, 0)) == "none");
  CHECK(std::string(kept(one, 1)) == "transform");
  checked.check_origins = 2;
  const Forecast two = model->forecast(x, seen, ids, H, checked);
  CHECK(std::string(kept(two, 0)) == "transform");
  CHECK(std::string(kept(two, 1)) == "transform");
  CHECK(std::string(kept(two, 2)) == (row2_transformed ? "transform" : "none"));
  // More origins than the rows are long for: those they are long enough for.
  checked.check_origins = 50;
  const Forecast many = model->forecast(x, seen, ids, H, checked);
  CHECK(std::string(kept(many, 0)) != "neither");
  checked.check_origins = 0;
  CHECK_THROWS_WITH(model->forecast(x, seen, ids, H, checked),
                    Catch::Contains("check_origins must be at least 1 (the horizons a check scores), got 0"));
}

TEST_CASE("a combination pools the forecasters' quantiles level by level: their mean, or their median") {
  using orrery::CombineRule;
  const std::vector<std::vector<std::vector<double>>> parts = {{{1, 2}, {3, 4}}, {{3, 2}, {5, 10}}, {{8, 2}, {4, 4}}};
  CHECK(orrery::combine_quantiles(parts, CombineRule::mean) == std::vector<std::vector<double>>{{4, 2}, {4, 6}});
  CHECK(orrery::combine_quantiles(parts, CombineRule::median) == std::vector<std::vector<double>>{{3, 2}, {4, 4}});
  CHECK(orrery::combine_quantiles({{{1.0}}, {{4.0}}}, CombineRule::median) == std::vector<std::vector<double>>{{2.5}});
  CHECK_THROWS_WITH(orrery::combine_quantiles({{{1.0, 2.0}}, {{1.0}}}, CombineRule::mean), Catch::Contains("horizons"));
  CHECK_THROWS_WITH(orrery::parse_combine_rule("mode", "eval: --combine-rule"),
                    Catch::Contains("eval: --combine-rule must be mean") && Catch::Contains("\"mode\""));

  // Through an evaluation: MODEL+naive+ets is, window by window, the mean of the model's and the
  // two baselines' forecasts on the same windows, so its scores follow from theirs; for each of
  // two models, which share the baselines' fits.
  auto model = test::tiny_model(6), other = test::tiny_model(7);
  const auto dir = fs::path(test::temp_dir("eval-combine"));
  {
    std::ofstream csv(dir / "m.csv");
    csv << "time,a,b\n";
    for (int t = 0; t < 150; ++t)
      csv << 2000 + t / 12 << "-" << (t % 12 < 9 ? "0" : "") << t % 12 + 1 << "-01," << 40 + 0.3 * t + 5 * std::sin(t * 0.52)
          << "," << 90 - 0.1 * t + 3 * std::cos(t * 0.52) + t % 5 << "\n";
  }
  EvalRequest r;
  r.models = {{"tiny", model.get()}, {"other", other.get()}};
  r.data = (dir / "m.csv").string();
  r.baselines = {"naive", "ets"};
  r.contexts = {64};
  r.combine = {"naive", "ets"};
  r.out = (dir / "out").string();
  r.quiet = true;
  evaluate_request(r);
  std::ifstream lines(dir / "out" / "eval_forecasts.jsonl");
  std::string header, line;
  std::getline(lines, header);
  const Json names = Json::parse(header)["forecasters"];
  CHECK(std::find(names.begin(), names.end(), "tiny+naive+ets") != names.end());
  CHECK(std::find(names.begin(), names.end(), "other+naive+ets") != names.end());
  int windows = 0;
  while (std::getline(lines, line)) {
    const Json w = Json::parse(line);
    const Json& f = w["forecasts"];
    for (const std::string m : {"tiny", "other"})
      for (size_t l = 0; l < f[m].size(); ++l)
        for (size_t h = 0; h < f[m][l].size(); ++h) {
          const double mean = (f[m][l][h].get<double>() + f["naive"][l][h].get<double>() + f["ets"][l][h].get<double>()) / 3;
          CHECK(f[m + "+naive+ets"][l][h].get<double>() == Approx(mean).epsilon(2e-6));  // 6 significant digits each
        }
    CHECK(f["tiny+naive+ets"] != f["other+naive+ets"]);
    ++windows;
  }
  CHECK(windows > 0);
  orrery::remove_tree(dir);
}

TEST_CASE("a checked combination keeps the pool for a series only where it forecast the series' own last horizon better") {
  using orrery::CombineRule;
  CHECK(orrery::pinball_loss({{1, 3}, {2, 5}}, {0.25, 0.75}, {2, NAN}) == Approx((0.25 * 1 + 0.25 * 0) / 2));
  CHECK(std::isinf(orrery::pinball_loss({{1.0}}, {0.5}, {NAN})));
  CHECK(orrery::combination_checkable({1, 2, 3, 4}, 2));
  CHECK(!orrery::combination_checkable({1, 2, 3}, 2));             // 1 step before the held-out 2
  CHECK(!orrery::combination_checkable({NAN, 2, 3, 4}, 2));        // 1 finite step before them
  CHECK(!orrery::combination_checkable({1, 2, NAN, NAN}, 2));      // nothing held out to score

  // Two steep trends: the untrained model forecasts near their level, naive their last value, far
  // apart. Series 0's last horizon is made naive's own forecast from the steps before it (a flat
  // line), which the pool is nearer; series 1's the model's median from the steps before, which
  // the model alone forecast exactly. Each check has a clear winner, computed here from the parts.
  auto model = test::tiny_model(6);
  const int64_t T = 100, H = 8;
  ForecastRequest alone;
  alone.horizon = H, alone.contexts = {64}, alone.options.levels = {0.1, 0.25, 0.5, 0.75, 0.9};
  std::vector<std::vector<double>> ys(2);
  for (int k = 0; k < 2; ++k)
    for (int64_t t = 0; t < T; ++t) ys[k].push_back(10 + (k + 2) * 3.0 * static_cast<double>(t));
  std::vector<std::vector<double>> heads;
  for (const auto& y : ys) {
    heads.emplace_back(y.begin(), y.end() - H);
    alone.series.push_back({{heads.back()}, {"head"}, {}, {}});
  }
  const ForecastAnswer before = answer(*model, alone);
  const double last = heads[0].back();
  for (int64_t h = 0; h < H; ++h) ys[0][T - H + h] = last, ys[1][T - H + h] = before.series[1][0].median[h];
  const auto naive = make_baseline("naive");
  std::vector<bool> pooled_better;
  for (int k = 0; k < 2; ++k) {
    const std::vector<double> actual(ys[k].end() - H, ys[k].end());
    const auto& m = before.series[k][0].quantiles;
    const auto pool = orrery::combine_quantiles({m, naive->forecast(heads[k], 1, H, before.levels)}, CombineRule::mean);
    pooled_better.push_back(orrery::pinball_loss(pool, before.levels, actual) < orrery::pinball_loss(m, before.levels, actual));
  }
  REQUIRE(pooled_better == std::vector<bool>{true, false});  // the construction above, as intended

  ForecastRequest r = alone;
  r.series.clear();
  for (const auto& y : ys) r.series.push_back({{y}, {"series"}, {}, {}});
  const ForecastAnswer plain = answer(*model, r);
  r.combine = {"naive"};
  const ForecastAnswer pooled = answer(*model, r);
  r.combine_check = true;
  const ForecastAnswer checked = answer(*model, r);
  CHECK(checked.series[0][0].quantiles == pooled.series[0][0].quantiles);
  CHECK(checked.series[0][0].median == pooled.series[0][0].median);
  CHECK(checked.series[1][0].quantiles == plain.series[1][0].quantiles);
  CHECK(checked.series[1][0].median == plain.series[1][0].median);
  CHECK(pooled.series[1][0].quantiles != plain.series[1][0].quantiles);
  {
    // Several origins: series 0 with its last horizon unobserved and the one before it naive's
    // flat forecast from the steps before: one origin cannot check it, two keep the pool.
    std::vector<double> y = ys[0];
    const std::vector<double> head(y.begin(), y.end() - 2 * H);
    for (int64_t h = 0; h < H; ++h) y[T - 2 * H + h] = head.back(), y[T - H + h] = NAN;
    ForecastRequest q = alone;
    q.series = {{{head}, {"head"}, {}, {}}};
    const auto m = answer(*model, q).series[0][0].quantiles;
    const std::vector<double> actual(y.end() - 2 * H, y.end() - H);
    const auto pool = orrery::combine_quantiles({m, naive->forecast(head, 1, H, before.levels)}, CombineRule::mean);
    REQUIRE(orrery::pinball_loss(pool, before.levels, actual) < orrery::pinball_loss(m, before.levels, actual));
    q.series = {{{y}, {"series"}, {}, {}}};
    const auto model_alone = answer(*model, q).series[0][0].quantiles;
    q.combine = {"naive"};
    const auto pooled_whole = answer(*model, q).series[0][0].quantiles;
    REQUIRE(pooled_whole != model_alone);
    q.combine_check = true;
    CHECK(answer(*model, q).series[0][0].quantiles == model_alone);
    q.options.check_origins = 2;
    CHECK(answer(*model, q).series[0][0].quantiles == pooled_whole);
    q.options.check_origins = 20;  // beyond the series' reach: every origin it has
    const auto every = answer(*model, q).series[0][0].quantiles;
    q.options.check_origins = int64_t{1} << 40;
    CHECK(answer(*model, q).series[0][0].quantiles == every);
    q.options.check_origins = 0;
    CHECK_THROWS_WITH(answer(*model, q), Catch::Contains("forecast: check_origins must be at least 1"));
  }
  // Too short to hold out a horizon: the model's forecast alone.
  r.series = {{{std::vector<double>(ys[0].begin(), ys[0].begin() + 2 * H - 1)}, {"short"}, {}, {}}};
  CHECK(answer(*model, r).series[0][0].quantiles == [&] { auto q = r; q.combine.clear(), q.combine_check = false; return answer(*model, q); }().series[0][0].quantiles);
  r.combine.clear();
  CHECK_THROWS_WITH(answer(*model, r), Catch::Contains("check needs baselines"));

  // With covariates: a window's rows are cut with its held-out horizon; a known-future row
  // missing inside a scored window is an error that names the step.
  {
    EvalDataset d;
    d.name = "promo", d.frequency = Frequency::parse("M");
    std::vector<double> y, promo;
    for (int t = 0; t < 120; ++t) y.push_back(50 + 0.4 * t + 6 * std::sin(t * 0.52) + 8 * (t % 7 == 0)), promo.push_back(t % 7 == 0);
    d.series.push_back({"a", y, 12, {}, {promo}});
    auto m = model_forecaster(*model, "tiny", {64}, 8, nullptr, {});
    const Json with = run_eval({d}, {m.get()}, EvalProtocol{});
    CHECK(std::isfinite(with["rows"][0]["crps"].get<double>()));
    // The forecast path, through the regression on the covariate: the check keeps the pool or
    // the model's forecast whole; a covariate missing over the held-out steps leaves it unchecked.
    ForecastRequest q;
    q.horizon = 12, q.contexts = {64}, q.regression = true;
    q.series.push_back({{std::vector<double>(y.begin(), y.begin() + 108)}, {"a"}, {{"promo", VariateRole::future, promo}}, {}});
    const auto model_alone = answer(*model, q).series[0][0].quantiles;
    q.combine = {"naive"};
    const auto pooled_whole = answer(*model, q).series[0][0].quantiles;
    q.combine_check = true;
    const auto checked_one = answer(*model, q).series[0][0].quantiles;
    CHECK((checked_one == pooled_whole || checked_one == model_alone));
    q.series[0].covariates[0].values[100] = NAN;  // inside the held-out steps 96..107
    const auto unchecked = answer(*model, q).series[0][0].quantiles;
    q.combine.clear(), q.combine_check = false;
    CHECK(unchecked == answer(*model, q).series[0][0].quantiles);
    d.series[0].future[0][115] = NAN;
    CHECK_THROWS_WITH(run_eval({d}, {m.get()}, EvalProtocol{}),
                      Catch::Contains("data set 'promo': series 'a': known-future covariate 1 has no value at step 116, "
                                      "inside test window 1, where it must be known"));
  }

  // Through an evaluation: each window of MODEL+naive/checked is what answer() gives its history
  // with the same check, and the protocol says so.
  const auto dir = fs::path(test::temp_dir("eval-combine-check"));
  std::map<std::string, std::vector<double>> columns;
  for (int t = 0; t < 150; ++t) {
    columns["m/a"].push_back(40 + 0.3 * t + 5 * std::sin(t * 0.52));  // "file/column"
    columns["m/b"].push_back(90 - 0.1 * t + 3 * std::cos(t * 0.52) + t % 5);
  }
  {
    std::ofstream csv(dir / "m.csv");
    csv.precision(17);
    csv << "time,a,b\n";
    for (int t = 0; t < 150; ++t)
      csv << 2000 + t / 12 << "-" << (t % 12 < 9 ? "0" : "") << t % 12 + 1 << "-01," << columns["m/a"][t] << ","
          << columns["m/b"][t] << "\n";
  }
  // 2^40 origins: as many as each window is long enough for, and no more work.
  for (const int64_t origins : {int64_t{1}, int64_t{3}, int64_t{1} << 40}) {
    EvalRequest e;
    e.models = {{"tiny", model.get()}};
    e.data = (dir / "m.csv").string();
    e.baselines = {};
    e.contexts = {64};
    e.box_cox = e.box_cox_check = false;
    e.combine = {"naive"};
    e.combine_check = true, e.check_origins = origins;
    e.out = (dir / ("out" + std::to_string(origins))).string();
    e.quiet = true;
    const Json result = evaluate_request(e);
    CHECK(result["protocol"]["combine"]["checked"] == true);
    CHECK_THAT(result["table"].get<std::string>(),
               Catch::Contains(origins == 1 ? std::string("last horizon better than the model alone")
                                            : "last " + std::to_string(origins) + " horizons better than the model alone"));
    CHECK(result["protocol"]["check_origins"] == origins);
    std::ifstream lines(fs::path(e.out) / "eval_forecasts.jsonl");
    std::string header, line;
    std::getline(lines, header);
    const Json head = Json::parse(header);
    int windows = 0;
    while (std::getline(lines, line)) {
      const Json w = Json::parse(line);
      ForecastRequest one;
      one.horizon = static_cast<int64_t>(w["actual"].size()), one.contexts = {64};
      one.options.levels = head["levels"].get<std::vector<double>>();
      const std::string series = w["series"].get<std::string>();
      INFO("series " << series);
      REQUIRE(columns.count(series));
      const auto& y = columns.at(series);
      one.series.push_back({{std::vector<double>(y.begin(), y.begin() + w["start"].get<int64_t>())}, {"window"}, {}, {}});
      one.combine = {"naive"}, one.combine_check = true, one.combine_season = w["season"].get<int64_t>();
      one.options.check_origins = origins;
      const auto expected = answer(*model, one).series[0][0].quantiles;
      const Json& got = w["forecasts"]["tiny+naive/checked"];
      REQUIRE(got.size() == expected.size());
      for (size_t l = 0; l < expected.size(); ++l)
        for (size_t h = 0; h < expected[l].size(); ++h) CHECK(got[l][h].get<double>() == Approx(expected[l][h]).epsilon(2e-6));
      ++windows;
    }
    CHECK(windows > 0);
  }
  orrery::remove_tree(dir);
}

TEST_CASE("a Box-Cox forecast does not depend on the series' unit: 1e-40 and 1e40 times a series forecast alike") {
  auto model = test::tiny_model(5);
  std::vector<double> y;
  for (int t = 0; t < 128; ++t) y.push_back(50 + 0.3 * t + 8 * std::sin(2 * M_PI * t / 12));
  ForecastOptions o;
  o.levels = {0.1, 0.5, 0.9};
  o.box_cox = 1.0;  // (y - 1) / 1: the 1 swallows a series of 1e-40s without a unit
  const at::Tensor seen = at::ones({1, 1, 128}, at::kBool), ids = at::zeros({1, 1}, at::kLong);
  auto forecast = [&](double scale) {
    std::vector<double> scaled;
    for (double v : y) scaled.push_back(v * scale);
    return model->forecast(at::tensor(scaled, at::kDouble).view({1, 1, -1}), seen, ids, 12, o).quantiles / scale;
  };
  const at::Tensor base = forecast(1);
  for (double scale : {1e-40, 1e-20, 1e40}) {
    INFO("scale " << scale);
    CHECK(at::allclose(forecast(scale), base, 1e-3, 0));
  }
}
