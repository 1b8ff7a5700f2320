// eval.json as plain values. The file comes from another process (often still being copied onto
// a shared disk), so every field is checked for its type: a field of the wrong shape is left
// at its default and an entry without a model or data set is skipped, rather than thrown on.
#include "run.h"

namespace orrery::ui {

namespace {

double number(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : kNaN;
}

int64_t whole(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

std::string text(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const Json& array(const Json& j, const char* key) {
  static const Json empty = Json::array();
  const auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty;
}

EvalConfiguration configuration(const Json& j) {
  return {text(j, "dataset"), text(j, "frequency"), text(j, "term"), whole(j, "horizon"), whole(j, "windows"),
          whole(j, "items")};
}

}  // namespace

std::shared_ptr<const Evaluation> parse_eval(const Json& j) {
  if (!j.is_object()) return nullptr;
  auto e = std::make_shared<Evaluation>();
  if (const auto it = j.find("protocol"); it != j.end() && it->is_object()) {
    e->protocol = text(*it, "name");
    for (const auto& t : array(*it, "terms"))
      if (t.is_string()) e->terms.push_back(t.get<std::string>());
  }
  for (const auto& c : array(j, "configurations"))
    if (c.is_object() && !text(c, "dataset").empty()) e->configurations.push_back(configuration(c));
  for (const auto& r : array(j, "rows")) {
    if (!r.is_object() || text(r, "model").empty() || text(r, "dataset").empty()) continue;
    EvalResult res{configuration(r), text(r, "model"), {}};
    res.scores = {number(r, "mase"), number(r, "crps"), number(r, "coverage"), number(r, "mase_ratio"),
                  number(r, "crps_ratio")};
    e->results.push_back(std::move(res));
  }
  for (const auto& s : array(j, "summary"))
    if (s.is_object() && !text(s, "model").empty())
      e->summary.push_back({text(s, "model"), number(s, "mase"), number(s, "crps"), number(s, "coverage"),
                            whole(s, "configurations")});
  // Rows are what the view draws; configurations alone (an evaluation that found no model) or
  // an empty object (the file was removed) are no evaluation.
  return e->results.empty() ? nullptr : e;
}

}  // namespace orrery::ui
