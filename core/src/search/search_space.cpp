#include "orrery/host/search/search_space.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "orrery/error.h"

namespace orrery::search {
namespace {
constexpr double kSimplexLow = 1e-6;  // u's floor: -ln u stays finite (at most 13.8)
}

std::vector<double> simplex_weights(const std::vector<double>& u, const std::vector<double>& caps) {
  const size_t k = u.size();
  std::vector<double> x(k);
  for (size_t i = 0; i < k; ++i) x[i] = -std::log(u[i]);
  if (std::accumulate(x.begin(), x.end(), 0.0) <= 0) std::fill(x.begin(), x.end(), 1.0);
  std::vector<double> w(k);
  std::vector<bool> fixed(k, false);
  for (size_t round = 0; round <= k; ++round) {
    double free_x = 0, fixed_mass = 0;
    for (size_t i = 0; i < k; ++i) (fixed[i] ? fixed_mass += caps[i] : free_x += x[i]);
    for (size_t i = 0; i < k; ++i)
      w[i] = fixed[i] ? caps[i] : free_x > 0 ? (1 - fixed_mass) * x[i] / free_x : 0;
    bool over = false;
    for (size_t i = 0; i < k; ++i)
      if (!fixed[i] && w[i] > caps[i]) fixed[i] = over = true;
    if (!over) break;
  }
  return w;
}

Dimension Dimension::of(std::string name, Distribution dist) {
  Dimension d;
  d.name = std::move(name);
  d.dist = std::move(dist);
  return d;
}

Dimension Dimension::mixture(std::string name, std::vector<std::string> parts, std::vector<double> caps) {
  Dimension d;
  d.name = std::move(name);
  d.simplex = true;
  d.parts = std::move(parts);
  d.caps = std::move(caps);
  return d;
}

Dimension Dimension::only_when(std::string parent, std::vector<Json> values) && {
  when = std::move(parent);
  when_values = std::move(values);
  return std::move(*this);
}

std::vector<std::pair<std::string, Distribution>> Dimension::internal() const {
  if (!simplex) return {{name, dist}};
  std::vector<std::pair<std::string, Distribution>> out;
  for (const auto& part : parts) out.emplace_back(name + "/" + part, Distribution::real(kSimplexLow, 1));
  return out;
}

SearchSpace::SearchSpace(std::vector<Dimension> dims) : dims_(std::move(dims)) {
  std::set<std::string> seen;
  for (size_t i = 0; i < dims_.size(); ++i) {
    const Dimension& d = dims_[i];
    auto fail = [&](const std::string& why) { return Error("search dimension '" + d.name + "': " + why); };
    if (d.name.empty() || d.name.find('/') != std::string::npos)
      throw Error("search dimensions need names without '/', got '" + d.name + "'");
    if (!seen.insert(d.name).second) throw fail("named twice");
    if (d.simplex) {
      if (d.parts.size() < 2) throw fail("a simplex needs at least two components");
      if (d.caps.size() != d.parts.size()) throw fail("give one cap per component");
      if (std::set<std::string>(d.parts.begin(), d.parts.end()).size() != d.parts.size())
        throw fail("a component is named twice");
      double sum = 0;
      for (double c : d.caps) {
        if (!(c > 0 && c <= 1)) throw fail("caps must lie in (0, 1]");
        sum += c;
      }
      if (sum < 1 - 1e-12) throw fail("the caps sum to " + std::to_string(sum) + ": no mixture can reach 1");
    } else {
      d.dist.check(d.name);
    }
    if (!d.when.empty()) {
      auto parent = std::find_if(dims_.begin(), dims_.begin() + static_cast<long>(i),
                                 [&](const Dimension& p) { return p.name == d.when; });
      if (parent == dims_.begin() + static_cast<long>(i) || parent->simplex ||
          parent->dist.kind != Distribution::Kind::categorical)
        throw fail("its condition names '" + d.when + "', which must be a categorical dimension before it");
      if (d.when_values.empty()) throw fail("its condition needs at least one value of '" + d.when + "'");
      for (const Json& v : d.when_values)
        if (std::find(parent->dist.choices.begin(), parent->dist.choices.end(), v) == parent->dist.choices.end())
          throw fail("its condition's value " + v.dump() + " is not a choice of '" + d.when + "'");
    }
  }
}

std::map<std::string, Distribution> SearchSpace::internal() const {
  std::map<std::string, Distribution> out;
  for (const auto& d : dims_)
    for (auto& [name, dist] : d.internal()) out[name] = dist;
  return out;
}

bool SearchSpace::active(const Dimension& d, const Json& external) {
  if (d.when.empty()) return true;
  if (!external.contains(d.when)) return false;
  return std::find(d.when_values.begin(), d.when_values.end(), external[d.when]) != d.when_values.end();
}

Json SearchSpace::external(const std::map<std::string, double>& internal) const {
  Json out = Json::object();
  for (const auto& d : dims_) {
    if (!active(d, out)) continue;
    if (!d.simplex) {
      if (auto it = internal.find(d.name); it != internal.end()) out[d.name] = d.dist.to_external(it->second);
      continue;
    }
    std::vector<double> u;
    for (const auto& part : d.parts)
      if (auto it = internal.find(d.name + "/" + part); it != internal.end()) u.push_back(it->second);
    if (u.size() != d.parts.size()) continue;
    const auto w = simplex_weights(u, d.caps);
    Json mix = Json::object();
    for (size_t i = 0; i < w.size(); ++i) mix[d.parts[i]] = w[i];
    out[d.name] = mix;
  }
  return out;
}

std::map<std::string, double> SearchSpace::internal_of(const Json& external) const {
  if (!external.is_object()) throw Error("a configuration is a table of dimension = value, got " + external.dump());
  std::map<std::string, double> out;
  for (const auto& [key, value] : external.items()) {
    auto d = std::find_if(dims_.begin(), dims_.end(), [&](const Dimension& x) { return x.name == key; });
    if (d == dims_.end()) throw Error("the configuration names '" + key + "', which is not a dimension of the space");
    try {
      if (!d->simplex) {
        out[key] = d->dist.to_internal(value);
        continue;
      }
      // Weights p become u = exp(-p): -ln u = p, so the weights come back as given.
      double sum = 0;
      for (size_t i = 0; i < d->parts.size(); ++i) {
        if (!value.contains(d->parts[i]) || !value[d->parts[i]].is_number())
          throw Error("give a weight for every component (" + d->parts[i] + " is missing)");
        const double p = value[d->parts[i]].get<double>();
        if (!(p >= 0) || p > d->caps[i] + 1e-12)
          throw Error("the weight of " + d->parts[i] + " must lie in [0, " + std::to_string(d->caps[i]) + "]");
        sum += p;
      }
      if (std::abs(sum - 1) > 1e-6) throw Error("the weights must sum to 1, got " + std::to_string(sum));
      for (size_t i = 0; i < d->parts.size(); ++i)
        out[key + "/" + d->parts[i]] = std::exp(-value[d->parts[i]].get<double>());
    } catch (const Error& e) {
      throw Error("dimension '" + key + "': " + e.what());
    }
  }
  return out;
}

Json SearchSpace::to_json() const {
  Json arr = Json::array();
  for (const auto& d : dims_) {
    Json j = d.simplex ? Json{{"kind", "simplex"}, {"parts", d.parts}, {"caps", d.caps}} : d.dist.to_json();
    j["name"] = d.name;
    if (!d.when.empty()) j["when"] = {{"dimension", d.when}, {"values", d.when_values}};
    arr.push_back(j);
  }
  return arr;
}

SearchSpace SearchSpace::from_json(const Json& j) {
  std::vector<Dimension> dims;
  for (const Json& e : j) {
    Dimension d;
    d.name = e.at("name").get<std::string>();
    if (e.at("kind") == "simplex") {
      d.simplex = true;
      d.parts = e.at("parts").get<std::vector<std::string>>();
      d.caps = e.at("caps").get<std::vector<double>>();
    } else {
      d.dist = Distribution::from_json(e);
    }
    if (e.contains("when")) {
      d.when = e["when"].at("dimension").get<std::string>();
      d.when_values = e["when"].at("values").get<std::vector<Json>>();
    }
    dims.push_back(std::move(d));
  }
  return SearchSpace(std::move(dims));
}

}  // namespace orrery::search
