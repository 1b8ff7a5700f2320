#include "study.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <stdexcept>

#include "orrery/sort_stably.h"

namespace orrery::ui {

namespace {

// A value as the trials table shows it: text as it is, a number to 4 significant digits.
std::string text_of(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v.get<double>());
    return buf;
  }
  return v.dump();
}

double number(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : kNaN;
}

}  // namespace

SearchStudy parse_study(const Json& j, std::string name) {
  if (!j.is_object() || !j.contains("trials") || !j["trials"].is_array() || !j.contains("space") ||
      !j["space"].is_array())
    throw std::runtime_error("not a study.json");
  SearchStudy s;
  s.name = std::move(name);
  s.title = j.value("name", s.name);
  s.maximize = j.value("direction", "minimize") == "maximize";
  // The plotted dimensions, and where each comes from in a trial's params: (name, part).
  std::vector<std::pair<std::string, std::string>> source;
  for (const Json& d : j["space"]) {
    if (!d.is_object() || !d.contains("name")) continue;
    const std::string dim = d["name"].get<std::string>(), kind = d.value("kind", "");
    if (kind == "simplex") {
      for (const Json& part : d.value("parts", Json::array())) {
        s.dims.push_back({dim + "." + text_of(part), false, false, 0.0, 1.0, {}});
        source.emplace_back(dim, text_of(part));
      }
    } else if (kind == "categorical") {
      StudyDimension sd{dim, true, false, kNaN, kNaN, {}};
      for (const Json& c : d.value("choices", Json::array())) sd.choices.push_back(text_of(c));
      s.dims.push_back(std::move(sd));
      source.emplace_back(dim, "");
    } else {
      s.dims.push_back({dim, false, d.value("log", false), number(d, "low"), number(d, "high"), {}});
      source.emplace_back(dim, "");
    }
  }
  for (const Json& t : j["trials"]) {
    if (!t.is_object()) continue;
    StudyTrial st;
    st.number = t.value("number", int64_t{0});
    st.state = t.value("state", "running");
    st.value = number(t, "value");
    st.lost = t.value("lost", false);
    const Json params = t.value("params", Json::object());
    for (size_t k = 0; k < s.dims.size(); ++k) {
      const auto& [dim, part] = source[k];
      Json v = params.contains(dim) ? params[dim] : Json();
      if (!part.empty()) v = v.is_object() && v.contains(part) ? v[part] : Json();
      double x = kNaN;
      if (s.dims[k].categorical && !v.is_null()) {
        const auto& ch = s.dims[k].choices;
        const auto it = std::find(ch.begin(), ch.end(), text_of(v));
        if (it != ch.end()) x = static_cast<double>(it - ch.begin());
      } else if (v.is_number()) {
        x = v.get<double>();
      }
      st.values.push_back(x);
      st.texts.push_back(v.is_null() ? "" : text_of(v));
    }
    for (const Json& r : t.value("intermediate", Json::array()))
      if (r.is_array() && r.size() == 2 && r[0].is_number())
        st.intermediate.emplace_back(r[0].get<double>(), r[1].is_number() ? r[1].get<double>() : kNaN);
    s.trials.push_back(std::move(st));
  }
  std::sort(s.trials.begin(), s.trials.end(), [](const auto& a, const auto& b) { return a.number < b.number; });
  if (j.contains("best") && j["best"].is_number_integer()) s.best = j["best"].get<int64_t>();
  return s;
}

std::vector<double> main_effect_importance(const SearchStudy& s) {
  std::vector<double> out(s.dims.size(), kNaN);
  std::vector<const StudyTrial*> done;
  for (const auto& t : s.trials)
    if (t.state == "complete" && std::isfinite(t.value)) done.push_back(&t);
  if (done.size() < 4) return out;
  for (size_t k = 0; k < s.dims.size(); ++k) {
    // The trials where the dimension is active, and each one's bin.
    std::vector<std::pair<double, double>> xy;  // (value, objective)
    for (const StudyTrial* t : done)
      if (std::isfinite(t->values[k])) xy.emplace_back(t->values[k], t->value);
    if (xy.size() < 4) continue;
    std::sort(xy.begin(), xy.end());
    std::vector<int> bin(xy.size());
    if (s.dims[k].categorical) {
      for (size_t i = 0; i < xy.size(); ++i) bin[i] = static_cast<int>(xy[i].first);
    } else {  // up to five bins of (nearly) equal counts, ties kept together
      const size_t bins = std::min<size_t>(5, xy.size() / 2);
      for (size_t i = 0; i < xy.size(); ++i) {
        bin[i] = static_cast<int>(i * bins / xy.size());
        if (i > 0 && xy[i].first == xy[i - 1].first) bin[i] = bin[i - 1];
      }
    }
    double mean = 0;
    for (const auto& p : xy) mean += p.second;
    mean /= static_cast<double>(xy.size());
    double total = 0, between = 0;
    for (const auto& p : xy) total += (p.second - mean) * (p.second - mean);
    std::map<int, std::pair<double, int>> sums;  // bin -> (sum, count)
    for (size_t i = 0; i < xy.size(); ++i) sums[bin[i]].first += xy[i].second, sums[bin[i]].second += 1;
    for (const auto& [b, sc] : sums) {
      const double m = sc.first / sc.second;
      between += sc.second * (m - mean) * (m - mean);
    }
    out[k] = total > 0 ? between / total : 0.0;
  }
  return out;
}

double ScalingLaw::predict(const Fit& f, double n, double d) {
  double y = f.E + f.A * std::pow(n, -f.alpha);
  if (std::isfinite(f.B) && std::isfinite(f.beta) && std::isfinite(d)) y += f.B * std::pow(d, -f.beta);
  return y;
}

namespace {

ScalingLaw::Fit fit_of(const Json& j) {
  return {number(j, "E"), number(j, "A"), number(j, "alpha"), number(j, "B"), number(j, "beta")};
}

ScalingLaw law_of(const Json& j) {
  ScalingLaw l;
  if (!j.is_object()) return l;
  l.law = j.value("law", "");
  const ScalingLaw::Fit f = fit_of(j);
  l.E = f.E, l.A = f.A, l.alpha = f.alpha, l.B = f.B, l.beta = f.beta;
  const Json iv = j.value("intervals", Json::object());
  auto bounds = [&](const char* key, double& lo, double& hi) {
    if (iv.contains(key) && iv[key].is_array() && iv[key].size() == 2 && iv[key][0].is_number())
      lo = iv[key][0].get<double>(), hi = iv[key][1].get<double>();
  };
  bounds("alpha", l.alpha_lo, l.alpha_hi);
  bounds("beta", l.beta_lo, l.beta_hi);
  for (const Json& b : j.value("bootstrap", Json::array()))
    if (b.is_object()) l.bootstrap.push_back(fit_of(b));
  if (j.contains("holdout") && j["holdout"].is_object()) {
    l.holdout_error = number(j["holdout"], "error");
    if (j["holdout"].contains("law")) l.holdout.push_back(fit_of(j["holdout"]["law"]));
  }
  return l;
}

}  // namespace

ScalingStudy parse_scaling(const Json& j, std::string name) {
  if (!j.is_object() || !j.contains("points") || !j["points"].is_array() || !j.contains("size"))
    throw std::runtime_error("not a scaling.json");
  ScalingStudy s;
  s.name = std::move(name);
  // A point is the fit's data: one of the wrong type is refused, not plotted somewhere wrong.
  for (size_t i = 0; i < j["points"].size(); ++i) {
    const Json& p = j["points"][i];
    auto bad = [&](const char* what) {
      return std::runtime_error("scaling.json: point " + std::to_string(i + 1) + ": " + what);
    };
    if (!p.is_object()) throw bad("not an object");
    for (const char* key : {"params", "tokens", "loss"})
      if (!p.contains(key) || !p[key].is_number()) throw bad((std::string("'") + key + "' is not a number").c_str());
    if (p.contains("budget") && !p["budget"].is_number_integer()) throw bad("'budget' is not a whole number");
    if (!p.contains("run") || !p["run"].is_string()) throw bad("'run' is not a text");
    ScalingPoint sp{number(p, "params"), number(p, "tokens"), number(p, "loss"), p.value("budget", int64_t{0}),
                    p["run"].get<std::string>()};
    s.points.push_back(sp);
    if (std::find(s.sizes.begin(), s.sizes.end(), sp.run) == s.sizes.end()) s.sizes.push_back(sp.run);
  }
  // Smallest first, by parameters.
  auto params_of = [&](const std::string& run) {
    for (const auto& p : s.points)
      if (p.run == run) return p.params;
    return kNaN;
  };
  sort_stably(s.sizes, [&](const auto& a, const auto& b) { return params_of(a) < params_of(b); });
  s.size = law_of(j["size"]);
  s.joint = law_of(j.value("joint", Json()));
  s.points_per_param = number(j, "points_per_param");
  return s;
}

}  // namespace orrery::ui
