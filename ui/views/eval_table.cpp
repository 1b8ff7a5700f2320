// Several runs' eval.json merged into one table for the evaluation view: which models, in
// which colours, and each one's scores per configuration.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "orrery/sort_stably.h"
#include "views.h"

namespace orrery::ui {

namespace {

// FNV-1a: a model's colour must not depend on the standard library's std::hash.
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// Saturated, far from the baselines' greys and from each other on the dark plot area.
constexpr uint32_t kStrong[] = {0xff8c1a, 0x3d9bff, 0x4cd964, 0xff4d6d, 0xffd23f, 0xc77dff, 0x2ee6d6, 0xff66c4};
constexpr size_t kStrongCount = sizeof kStrong / sizeof kStrong[0];

// The geometric mean of the finite positive ratios (for a run whose summary lacks a model).
double geometric_mean(const std::vector<EvalTableRow>& rows, size_t model, EvalMetric m) {
  double s = 0;
  int n = 0;
  for (const auto& r : rows)
    if (const double v = eval_ratio(r.cells[model], m); v > 0 && std::isfinite(v)) s += std::log(v), ++n;
  return n ? std::exp(s / n) : kNaN;
}

std::string title_of(const Evaluation& e) {
  std::string terms;
  for (const auto& t : e.terms) terms += (terms.empty() ? "" : ", ") + t;
  std::string title = e.protocol.empty() ? "evaluation" : e.protocol;
  if (!terms.empty()) title += ", " + terms + (e.terms.size() == 1 ? " term" : " terms");
  return title;
}

}  // namespace

bool is_eval_baseline(const std::string& model) {
  // `orrery eval --baselines`' names (core/src/eval/baselines/registry.cpp); the plot library does
  // not link the core, so the list is repeated here.
  return model == "naive" || model == "seasonal_naive" || model == "theta" || model == "ets";
}

plot::Color eval_model_color(const std::string& model, bool baseline, size_t probe) {
  if (baseline) {
    // Muted and told apart by lightness and a hint of hue: the reference points, not the news.
    if (model == "naive") return plot::Color::hex(0x7a7f89);
    if (model == "seasonal_naive") return plot::Color::hex(0xc3c7cf);
    if (model == "theta") return plot::Color::hex(0x6fa39a);
    return plot::Color::hex(0xb08cc0);  // ets
  }
  return plot::Color::hex(kStrong[(fnv1a(model) + probe) % kStrongCount]);
}

double eval_ratio(const EvalScores& s, EvalMetric m) { return m == EvalMetric::crps ? s.crps_ratio : s.mase_ratio; }
double eval_raw(const EvalScores& s, EvalMetric m) { return m == EvalMetric::crps ? s.crps : s.mase; }

EvalTable merge_evaluations(std::span<const std::shared_ptr<const Run>> runs) {
  EvalTable t;
  // How many runs have a model of each name: those names get their run's name in front.
  std::map<std::string, int> runs_with;
  for (const auto& r : runs)
    if (r->eval) {
      std::set<std::string> names;
      for (const auto& res : r->eval->results) names.insert(res.model);
      for (const auto& n : names) ++runs_with[n];
      if (t.title.empty()) t.title = title_of(*r->eval);
    }
  // Strong colours by name, a clash moving the later name (in name order) to the next free one.
  std::map<std::string, plot::Color> strong;
  std::set<uint32_t> taken;
  for (const auto& [name, n] : runs_with) {
    if (is_eval_baseline(name)) continue;
    plot::Color c = eval_model_color(name, false);
    for (size_t probe = 1; probe < kStrongCount && taken.count((c.r << 16) | (c.g << 8) | c.b); ++probe)
      c = eval_model_color(name, false, probe);
    taken.insert((c.r << 16) | (c.g << 8) | c.b);
    strong[name] = c;
  }

  std::map<std::string, size_t> row_of;
  std::map<std::string, int> seen;  // runs so far with a model of this name: its marker
  std::vector<EvalModel> models;
  std::vector<std::map<std::string, EvalScores>> cells;  // per model: row label -> scores
  auto add_row = [&](const EvalConfiguration& c) {
    if (row_of.emplace(c.label(), t.rows.size()).second) t.rows.push_back({c.label(), {}});
  };
  for (const auto& r : runs) {
    if (!r->eval) continue;
    const Evaluation& e = *r->eval;
    for (const auto& c : e.configurations) add_row(c);
    std::map<std::string, size_t> index;  // this run's models
    for (const auto& res : e.results) {
      add_row(res.where);
      auto [it, fresh] = index.emplace(res.model, models.size());
      if (fresh) {
        EvalModel m;
        m.run = r->name, m.name = res.model;
        m.label = runs_with[res.model] > 1 ? r->name + ": " + res.model : res.model;
        m.baseline = is_eval_baseline(res.model);
        m.color = m.baseline ? eval_model_color(res.model, true) : strong[res.model];
        constexpr plot::Marker shapes[] = {plot::Marker::circle, plot::Marker::ring, plot::Marker::cross};
        m.marker = shapes[seen[res.model]++ % 3];
        m.summary.model = res.model;
        for (const auto& s : e.summary)
          if (s.model == res.model) m.summary = s;
        models.push_back(std::move(m));
        cells.emplace_back();
      }
      cells[it->second][res.where.label()] = res.scores;
    }
  }
  // Orrery models first, then the baselines; a name shared by runs keeps its entries together.
  std::map<std::string, size_t> first_seen;
  for (size_t i = 0; i < models.size(); ++i) first_seen.emplace(models[i].name, i);
  std::vector<size_t> order(models.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  sort_stably(order, [&](size_t a, size_t b) {
    return std::pair(models[a].baseline, first_seen[models[a].name]) < std::pair(models[b].baseline, first_seen[models[b].name]);
  });
  for (size_t i : order) t.models.push_back(models[i]);
  for (auto& row : t.rows) {
    row.cells.resize(t.models.size());
    for (size_t k = 0; k < order.size(); ++k)
      if (const auto it = cells[order[k]].find(row.label); it != cells[order[k]].end()) row.cells[k] = it->second;
  }
  for (size_t k = 0; k < t.models.size(); ++k) {
    EvalModelSummary& s = t.models[k].summary;
    if (!std::isfinite(s.crps)) s.crps = geometric_mean(t.rows, k, EvalMetric::crps);
    if (!std::isfinite(s.mase)) s.mase = geometric_mean(t.rows, k, EvalMetric::mase);
  }
  return t;
}

void sort_eval_rows(EvalTable& t, size_t model, size_t baseline, EvalMetric m) {
  auto ratio = [&](const EvalTableRow& row) {
    if (model >= row.cells.size() || baseline >= row.cells.size()) return kNaN;
    const EvalScores& a = row.cells[model];
    const EvalScores& b = row.cells[baseline];
    return m == EvalMetric::crps ? a.crps / b.crps : a.mase / b.mase;
  };
  sort_stably(t.rows, [&](const EvalTableRow& a, const EvalTableRow& b) {
    const double x = ratio(a), y = ratio(b);
    if (!std::isfinite(y)) return std::isfinite(x);
    return std::isfinite(x) && x > y;
  });
}

}  // namespace orrery::ui
