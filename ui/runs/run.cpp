#include "run.h"

#include "orrery/host/events.h"

namespace orrery::ui {

namespace {

double number(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : kNaN;
}

// A JSON array of numbers (null = missing) as doubles.
std::vector<double> numbers(const Json& j) {
  std::vector<double> out;
  if (!j.is_array()) return out;
  out.reserve(j.size());
  for (const auto& v : j) out.push_back(v.is_number() ? v.get<double>() : kNaN);
  return out;
}

std::string plugin_name(const Json& spec) {
  if (spec.is_string()) return spec.get<std::string>();
  if (spec.is_object() && spec.contains("name") && spec["name"].is_string()) return spec["name"];
  return "";
}

// The plugin's name followed by the options its spec names (the user's, and any whose default
// changed, which every saved spec records), e.g. "umup depth_alpha=1 muon_rule=spectral": runs
// that differ in an option are different variants of a sweep.
std::string plugin_label(const Json& spec) {
  std::string label = plugin_name(spec);
  if (spec.is_object() && spec.contains("options") && spec["options"].is_object())
    for (const auto& [key, value] : spec["options"].items())
      label += " " + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  return label;
}

ForecastSeries parse_series(const Json& s) {
  ForecastSeries out;
  out.name = s.value("name", std::string("series"));
  if (s.contains("history")) out.history = numbers(s["history"]);
  if (s.contains("target")) out.target = numbers(s["target"]);
  if (s.contains("quantiles") && s["quantiles"].is_array())
    for (const auto& row : s["quantiles"]) out.quantiles.push_back(numbers(row));
  if (s.contains("covariates") && s["covariates"].is_array())
    for (const auto& row : s["covariates"]) {
      if (!row.is_object()) continue;
      CovariateRow c;
      c.known_future = row.contains("role") && row["role"] == "known-future";  // any other value: past-only
      if (row.contains("history")) c.history = numbers(row["history"]);
      if (c.known_future && row.contains("future")) c.future = numbers(row["future"]);
      out.covariates.push_back(std::move(c));
    }
  if (s.contains("statics") && s["statics"].is_object())
    for (const auto& [name, value] : s["statics"].items())
      if (value.is_number()) out.statics.emplace_back(name, value.get<double>());
  return out;
}

}  // namespace

const char* status_name(RunStatus s) {
  switch (s) {
    case RunStatus::running: return "running";
    case RunStatus::done: return "done";
    case RunStatus::interrupted: return "interrupted";
    case RunStatus::failed: return "failed";
    case RunStatus::stale: return "stale";
  }
  return "?";
}

RunStatus Run::status(double now) const {
  if (!error.empty()) return RunStatus::failed;
  if (finished) return interrupted ? RunStatus::interrupted : RunStatus::done;
  // A folder of its own for an evaluation (runs/eval): eval.json is written whole at the end.
  if (eval && config.is_null() && train_loss.empty()) return RunStatus::done;
  // No summary yet: running while its files keep changing (a log line at least every few
  // minutes for any sensible log_every), stale after that (killed, or its machine went away).
  return now - last_write < 300 ? RunStatus::running : RunStatus::stale;
}

double Run::latest_loss() const {
  if (finished && std::isfinite(final_loss)) return final_loss;
  return train_loss.last();
}

double Run::sweep_loss() const { return val_loss.empty() ? latest_loss() : val_loss.last(); }

void apply_config(Run& run, const Json& c) {
  run.config = c;
  if (c.contains("model") && c["model"].is_object()) {
    const Json& m = c["model"];
    if (m.contains("arch")) run.arch = plugin_name(m["arch"]);
    if (m.contains("head")) run.head = plugin_name(m["head"]);
    if (m.contains("param")) run.param = plugin_label(m["param"]);
    if (m.contains("d_model") && m["d_model"].is_number_integer()) run.width = m["d_model"];
    if (m.contains("depth") && m["depth"].is_number_integer()) run.depth = m["depth"];
    if (m.contains("seed") && m["seed"].is_number_integer() && m["seed"] >= 0) run.seed = m["seed"];
  }
  if (c.contains("optimizer")) {
    const Json& o = c["optimizer"];
    const Json* first = o.is_array() && !o.empty() ? &o[0] : &o;
    run.optimizer.clear();
    if (o.is_array()) {
      for (const auto& g : o) run.optimizer += (run.optimizer.empty() ? "" : "+") + plugin_name(g);
    } else {
      run.optimizer = plugin_name(o);
    }
    if (first->is_object() && first->contains("options") && (*first)["options"].is_object())
      run.lr = number((*first)["options"], "lr");
  }
  if (c.contains("world_size") && c["world_size"].is_number_integer() && c["world_size"] >= 1)
    run.world_size = c["world_size"];
  if (c.contains("train") && c["train"].is_object()) {
    const Json& t = c["train"];
    if (t.contains("steps") && t["steps"].is_number_integer()) run.planned_steps = t["steps"];
    if (t.contains("seed") && t["seed"].is_number_integer() && t["seed"] >= 0) run.seed = t["seed"];
  }
}

void apply_metrics_event(Run& run, const Json& e) {
  const auto kind = event_kind(e);
  if (!kind) return;
  const double step = number(e, "step");
  if (kind == EventKind::train && std::isfinite(step)) {
    run.step = static_cast<int64_t>(step);
    run.train_loss.add(step, number(e, "loss"));
    if (e.contains("lr") && e["lr"].is_number()) run.lr_curves["lr"].add(step, number(e, "lr"));
    run.grad_norm.add(step, number(e, "grad_norm"));
    run.elapsed.add(step, number(e, "elapsed_s"));
    run.series_per_s = number(e, "series_per_s");
    run.eta_s = number(e, "eta_s");
    run.elapsed_s = number(e, "elapsed_s");
    for (auto [field, into] : {std::pair{"lr", &run.lr_curves}, {"update_rms", &run.update_rms}, {"param_rms", &run.param_rms}})
      if (e.contains(field) && e[field].is_object())
        for (const auto& [group, v] : e[field].items())
          (*into)[group].add(step, v.is_number() ? v.get<double>() : kNaN);
  } else if (kind == EventKind::val && std::isfinite(step)) {
    run.val_loss.add(step, number(e, "loss"));
    if (e.contains("bits_per_unit") && e["bits_per_unit"].is_number()) {
      run.val_bits.add(step, number(e, "bits_per_unit"));
      if (e.contains("unit") && e["unit"].is_string()) run.val_unit = e["unit"];
    }
  } else if (kind == EventKind::sample && std::isfinite(step) && e.contains("text") && e["text"].is_string()) {
    const auto text = [&](const char* k) { return e.contains(k) && e[k].is_string() ? e[k].get<std::string>() : ""; };
    run.samples.push_back({static_cast<int64_t>(step), text("prompt"), text("text")});
  } else if (kind == EventKind::skip && std::isfinite(step)) {
    run.skipped.push_back(step);
  } else if (kind == EventKind::spike && std::isfinite(step)) {
    run.spikes.add(step, number(e, "loss"));
  } else if (kind == EventKind::end) {
    run.eta_s = 0;
  }
}

void apply_summary(Run& run, const Json& s) {
  if (!s.is_object()) return;
  run.finished = !s.empty();
  if (!run.finished) {
    run.final_loss = kNaN, run.error.clear(), run.interrupted = false;
    return;
  }
  run.final_loss = number(s, "final_loss");
  run.interrupted = s.contains("interrupted") && s["interrupted"].is_boolean() && s["interrupted"].get<bool>();
  run.error = s.contains("error") && s["error"].is_string() ? s["error"].get<std::string>() : "";
  if (s.contains("steps") && s["steps"].is_number_integer()) run.step = std::max<int64_t>(run.step, s["steps"]);
}

std::shared_ptr<const ForecastSnapshot> parse_forecast_event(const Json& e) {
  if (!e.is_object() || !e.contains("series") || !e["series"].is_array()) return nullptr;
  auto snap = std::make_shared<ForecastSnapshot>();
  snap->step = e.contains("step") && e["step"].is_number_integer() ? e["step"].get<int64_t>() : -1;
  snap->label = "step " + std::to_string(snap->step);
  snap->levels = numbers(e.value("levels", Json::array()));
  for (const auto& s : e["series"]) snap->series.push_back(parse_series(s));
  return snap;
}

std::shared_ptr<const ForecastSnapshot> parse_evaluation(const Json& j) {
  if (!j.is_object() || !j.contains("forecasts") || !j["forecasts"].is_array()) return nullptr;
  auto snap = std::make_shared<ForecastSnapshot>();
  snap->label = "evaluation";
  snap->levels = numbers(j.value("levels", Json::array()));
  for (const auto& s : j["forecasts"]) snap->series.push_back(parse_series(s));
  return snap->series.empty() ? nullptr : snap;
}

CoordCheck parse_coord_check(const Json& j, std::string name) {
  CoordCheck c;
  c.name = std::move(name);
  if (!j.is_object()) return c;
  c.axis = j.value("axis", std::string("width")) == "depth" ? "depth" : "width";
  const char* key = c.axis == "depth" ? "depths" : "widths";
  if (j.contains(key)) for (double w : numbers(j[key])) c.points.push_back(static_cast<int64_t>(w));
  c.steps = j.value("steps", int64_t{0});
  c.optimizer = j.value("optimizer", std::string());
  if (!j.contains("params") || !j["params"].is_object()) return c;
  for (const auto& [param, p] : j["params"].items()) {
    if (!p.contains("layers") || !p["layers"].is_array()) continue;
    auto& layers = c.params[param];
    for (const auto& l : p["layers"]) {
      CoordCheck::Layer layer;
      layer.name = l.value("name", std::string());
      layer.readout = l.value("readout", false);
      if (l.contains("steps") && l["steps"].is_array())
        for (const auto& s : l["steps"]) {
          layer.rms.push_back(numbers(s.value("rms", Json::array())));
          layer.change.push_back(numbers(s.value("change", Json::array())));
        }
      layers.push_back(std::move(layer));
    }
  }
  return c;
}

}  // namespace orrery::ui
