#include "orrery/host/routed_optimizer.h"

#include <algorithm>

#include "orrery/error.h"
#include "orrery/host/registry.h"

namespace orrery {
namespace {

bool glob_match(const char* pattern, const char* text) {
  if (*pattern == '\0') return *text == '\0';
  if (*pattern == '*') return glob_match(pattern + 1, text) || (*text && glob_match(pattern, text + 1));
  return *text == *pattern && glob_match(pattern + 1, text + 1);
}

std::vector<std::string> strings(const Json& v, const std::string& what) {
  std::vector<std::string> out;
  if (v.is_string()) return {v.get<std::string>()};
  if (!v.is_array()) throw Error(what + " must be a string or a list of strings");
  for (const auto& e : v) {
    if (!e.is_string()) throw Error(what + " must be a string or a list of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

Role parse_role(const std::string& s, const std::string& what) {
  for (Role r : {Role::input, Role::hidden, Role::readout, Role::bias, Role::gain})
    if (s == role_name(r)) return r;
  throw Error(what + ": unknown role '" + s + "' (known: input, hidden, readout, bias, gain)");
}

}  // namespace

bool ParamSelector::matches(const ParamInfo& info) const {
  if (!roles.empty() && std::find(roles.begin(), roles.end(), info.role) == roles.end()) return false;
  if (stack && *stack != (info.stack_depth > 0)) return false;
  if (names.empty()) return true;
  for (const auto& g : names)
    if (glob_match(g.c_str(), info.name.c_str())) return true;
  return false;
}

ParamSelector ParamSelector::from_json(const Json& j, const std::string& what) {
  ParamSelector s;
  if (j.is_null()) return s;
  if (!j.is_object()) throw Error(what + " must be a table like {role = \"hidden\", stack = true}");
  for (const auto& [k, v] : j.items()) {
    if (k == "role") {
      for (const auto& r : strings(v, what + ".role")) s.roles.push_back(parse_role(r, what + ".role"));
    } else if (k == "name") {
      s.names = strings(v, what + ".name");
    } else if (k == "stack") {
      if (!v.is_boolean()) throw Error(what + ".stack must be true or false");
      s.stack = v.get<bool>();
    } else {
      throw Error(what + ": unknown selector '" + k + "' (known: role, name, stack)");
    }
  }
  return s;
}

Json ParamSelector::to_json() const {
  Json j = Json::object();
  if (!roles.empty()) {
    j["role"] = Json::array();
    for (Role r : roles) j["role"].push_back(role_name(r));
  }
  if (!names.empty()) j["name"] = names;
  if (stack) j["stack"] = *stack;
  return j;
}

ScheduleSet ScheduleSet::from_json(const Json& j, const std::string& what) {
  if (j.is_object() && j.empty()) return ScheduleSet{false, false, false};  // Lua's {}: none
  if (!j.is_array()) throw Error(what + " must be a list of schedule names (lr, momentum, weight_decay), got " + j.dump());
  ScheduleSet s{false, false, false};
  for (const auto& v : j) {
    const std::string name = v.is_string() ? v.get<std::string>() : v.dump();
    bool* flag = name == "lr" ? &s.lr : name == "momentum" ? &s.momentum : name == "weight_decay" ? &s.weight_decay : nullptr;
    if (!flag) throw Error(what + ": unknown schedule '" + name + "' (known: lr, momentum, weight_decay)");
    if (*flag) throw Error(what + ": schedule '" + name + "' named twice");
    *flag = true;
  }
  return s;
}

Json ScheduleSet::to_json() const {
  Json j = Json::array();
  if (lr) j.push_back("lr");
  if (momentum) j.push_back("momentum");
  if (weight_decay) j.push_back("weight_decay");
  return j;
}

StepScalars ScheduleSet::applied(StepScalars s) const {
  if (!lr) s.lr_factor = 1.0;
  if (!weight_decay) s.wd_factor = 1.0;
  if (!momentum) s.momentum = -1.0;
  return s;
}

std::vector<OptimizerGroup> optimizer_groups_from_json(const Json& j) {
  auto one = [](const Json& g, const std::string& what) {
    if (!g.is_object() || !g.contains("name") || !g["name"].is_string())
      throw Error(what + " needs the optimizer's name, e.g. {\"adamw\", lr = 1e-3}");
    OptimizerGroup group;
    group.optimizer = PluginSpec{g["name"], g.value("options", Json::object())};
    if (g.contains("params")) group.params = ParamSelector::from_json(g["params"], what + ".params");
    if (g.contains("schedules")) group.schedules = ScheduleSet::from_json(g["schedules"], what + ".schedules");
    return group;
  };
  if (j.is_object()) return {one(j, "optimizer")};
  if (!j.is_array() || j.empty()) throw Error("optimizer must be a plugin spec or a list of groups");
  std::vector<OptimizerGroup> groups;
  for (size_t i = 0; i < j.size(); ++i) groups.push_back(one(j[i], "optimizer group " + std::to_string(i + 1)));
  return groups;
}

RoutedOptimizer::RoutedOptimizer(const Registry& registry, const std::vector<OptimizerGroup>& groups,
                                 std::vector<Param>& params, const Parametrisation& param,
                                 const std::function<bool(const Param&)>& steps) {
  if (groups.empty()) throw Error("no optimizer given");
  std::vector<std::vector<Param>> owned(groups.size());
  for (const auto& p : params) {
    size_t g = 0;
    while (g < groups.size() && !groups[g].params.matches(p.info)) ++g;
    if (g == groups.size())
      throw Error("parameter '" + p.info.name + "' (role " + role_name(p.info.role) +
                  ") matches no optimizer group; add a last group without params = {...} to take the rest");
    owned[g].push_back(p);
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::string label = "optimizer group " + std::to_string(g + 1) + " (" + groups[g].optimizer.name + ")";
    if (owned[g].empty())
      throw Error(label + " matches no parameter (selector " + groups[g].params.to_json().dump() +
                  "; earlier groups take what they match first)");
    Routed r;
    r.group = groups[g];
    std::vector<Param> stepped;
    for (const auto& p : owned[g]) {
      r.names.push_back(p.info.name), r.tensors.push_back(p.tensor), r.numel += p.tensor.numel();
      if (!steps || steps(p)) stepped.push_back(p);
    }
    r.optimizer = registry.create<PluginKind::optimizer>(groups[g].optimizer.name,
                                                         groups[g].optimizer.options, stepped, param);
    routed_.push_back(std::move(r));
  }
}

void RoutedOptimizer::step(const StepScalars& s) {
  for (auto& r : routed_) r.optimizer->step(r.group.schedules.applied(s));
}

double RoutedOptimizer::base_lr() const { return routed_.front().optimizer->base_lr(); }

std::vector<ParamGroupView> RoutedOptimizer::groups() const {
  std::vector<ParamGroupView> out;
  for (const auto& r : routed_) {
    // Appended piecewise: GCC 12 warns falsely on "literal" + string chains.
    std::string what;
    auto add = [&](const std::string& part) { what.append(what.empty() ? "" : ",").append(part); };
    for (Role role : r.group.params.roles) add(role_name(role));
    if (what.empty())
      for (const auto& g : r.group.params.names) add(g);
    std::string label = r.group.optimizer.name;
    // A lone catch-all group takes every parameter; after other groups it takes the rest.
    label.append(":").append(!what.empty() ? what : routed_.size() == 1 ? "all" : "rest");
    out.push_back({label, r.tensors, r.optimizer->base_lr(), r.group.schedules.lr});
  }
  std::vector<std::string> base;
  for (const auto& g : out) base.push_back(g.label);
  for (size_t i = 0; i < out.size(); ++i)
    if (std::count(base.begin(), base.end(), base[i]) > 1)
      out[i].label.append("#").append(std::to_string(i + 1));
  return out;
}

NamedTensors RoutedOptimizer::state_tensors() const {
  NamedTensors out;
  for (const auto& r : routed_)
    for (auto& t : r.optimizer->state_tensors()) out.push_back(std::move(t));
  return out;
}

Json RoutedOptimizer::counters() const {
  Json out = Json::array();
  for (const auto& r : routed_) out.push_back(r.optimizer->counters());
  return out;
}

void RoutedOptimizer::restore_counters(const Json& c) {
  if (!c.is_array() || c.size() != routed_.size())
    throw Error("the saved optimizer state has " + std::to_string(c.is_array() ? c.size() : 0) + " group(s), this run " +
                std::to_string(routed_.size()));
  for (size_t i = 0; i < routed_.size(); ++i) routed_[i].optimizer->restore_counters(c[i]);
}

Json RoutedOptimizer::describe() const {
  Json out = Json::array();
  for (const auto& r : routed_)
    out.push_back({{"optimizer", r.group.optimizer.to_json()}, {"params", r.group.params.to_json()},
                   {"schedules", r.group.schedules.to_json()}, {"tensors", r.names.size()}, {"parameters", r.numel},
                   {"names", r.names}});
  return out;
}

}  // namespace orrery
