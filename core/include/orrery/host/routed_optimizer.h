#pragma once
// Routing a model's parameters to several optimizers by their metadata, e.g. Toto 2.0's split
// (matrices inside the stack to NorMuon; input/output projections, biases and gains to AdamW)
// or nanochat's groups with their own learning rates. One step call steps every group.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "orrery/host/model.h"
#include "orrery/optimizer.h"

namespace orrery {
class Registry;

// Which parameters a group takes. Every given criterion must hold; none given = all the rest.
struct ParamSelector {
  std::vector<Role> roles;          // any of these roles
  std::vector<std::string> names;   // any of these globs ('*' = any run of characters)
  std::optional<bool> stack;        // inside (true) or outside (false) the depth-scaled stack
  bool matches(const ParamInfo& info) const;
  static ParamSelector from_json(const Json& j, const std::string& what);
  Json to_json() const;
};

// Which of the run's schedules a group follows (all by default). nanochat warms up and decays
// only Muon's momentum and weight decay; its AdamW groups keep their own betas and decay and
// follow the learning-rate schedule alone: schedules = {"lr"}.
struct ScheduleSet {
  bool lr = true, momentum = true, weight_decay = true;
  static ScheduleSet from_json(const Json& j, const std::string& what);
  Json to_json() const;
  bool all() const { return lr && momentum && weight_decay; }
  StepScalars applied(StepScalars s) const;  // the run's scalars, with those not followed left neutral
};

struct OptimizerGroup {
  PluginSpec optimizer;
  ParamSelector params;
  ScheduleSet schedules;
};

// Groups from JSON: one plugin spec {"name", "options"}, or a list of them with a "params"
// selector each. Errors name the group.
std::vector<OptimizerGroup> optimizer_groups_from_json(const Json& j);

class RoutedOptimizer final : public Optimizer {
 public:
  // Each parameter goes to the first group whose selector matches. A parameter no group takes,
  // or a group that takes nothing, is an error naming it. `steps` picks the routed parameters
  // this optimizer updates and keeps state for (default: all); the others are routed and listed
  // in groups() and describe() all the same: a rank's share of a sharded optimizer (zero.h).
  RoutedOptimizer(const Registry& registry, const std::vector<OptimizerGroup>& groups,
                  std::vector<Param>& params, const Parametrisation& param,
                  const std::function<bool(const Param&)>& steps = {});
  void step(const StepScalars& s) override;
  double base_lr() const override;  // the first group's; groups() has every group's
  // One view per group, labelled "<optimizer>:<roles>" (roles joined by ','; the name globs
  // when the selector gives no roles; "rest" when it gives neither), e.g. "normuon:hidden",
  // "adamw:rest". Labels that would repeat get "#<group number>" (1-based) appended.
  std::vector<ParamGroupView> groups() const override;
  // Every group's state tensors (parameter names are unique across groups) and counters, a
  // list with one entry per group.
  NamedTensors state_tensors() const override;
  Json counters() const override;
  void restore_counters(const Json& counters) override;
  // Which optimizer took which parameters: [{optimizer, tensors, parameters, names}].
  Json describe() const;

 private:
  struct Routed {
    OptimizerGroup group;
    std::vector<std::string> names;
    std::vector<at::Tensor> tensors;
    int64_t numel = 0;
    std::unique_ptr<Optimizer> optimizer;
  };
  std::vector<Routed> routed_;
};

}  // namespace orrery
