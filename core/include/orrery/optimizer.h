#pragma once
// An optimizer owns a set of parameters and their state. It reads each parameter's metadata
// (role, fans, depth) to pick its per-parameter learning-rate multiplier from the active
// parametrisation; a RoutedOptimizer (routed_optimizer.h) splits a model's parameters across
// several optimizers so that one step call steps all of them.
#include <ATen/core/grad_mode.h>  // at::NoGradGuard: an optimizer's step runs outside autograd

#include <memory>
#include <string>
#include <vector>

#include "orrery/json.h"
#include "orrery/param.h"
#include "orrery/safetensors.h"

namespace orrery {

// A labelled set of parameters that one optimizer steps together, for diagnostics (the trainer
// logs each group's learning rate, update RMS and weight RMS).
struct ParamGroupView {
  std::string label;                // e.g. "normuon:hidden", "adamw:rest"
  std::vector<at::Tensor> tensors;  // the parameters themselves (handles, not copies)
  double base_lr = 0;               // the group optimizer's base learning rate
  bool lr_scheduled = true;         // false: its rate stays base_lr (the group's schedules leave out lr)
  // Its learning rate at a step whose schedule says `lr_factor`.
  double lr(double lr_factor) const { return lr_scheduled ? base_lr * lr_factor : base_lr; }
};

// What the schedules say for one step. Every optimizer applies all three.
struct StepScalars {
  double lr_factor = 1.0;  // multiplies the base learning rate (warmup, decay)
  double wd_factor = 1.0;  // multiplies the weight decay (weight-decay schedule)
  double momentum = -1.0;  // momentum for this step (momentum warmup); < 0 keeps the optimizer's own
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // One update of every parameter it owns whose gradient is defined, at learning rate
  // base_lr() * s.lr_factor * the parametrisation's multiplier for the parameter's role.
  // Gradients are read from tensor.grad() and left untouched.
  virtual void step(const StepScalars& s) = 0;
  virtual double base_lr() const = 0;
  // The groups it steps, labelled. Empty (the default) = one group the caller labels itself:
  // the trainer calls it "all" and takes every model parameter.
  virtual std::vector<ParamGroupView> groups() const { return {}; }

  // Checkpoints. Every tensor it keeps across steps, as handles (not copies) named
  // "<parameter name>.<what>" ("layers.0.ff.in.weight.m"), and its counters (step counts,
  // running products) as JSON. Resuming copies a saved state into an optimizer made with the
  // same options over the same parameters (load_optimizer_state), then restore_counters.
  virtual NamedTensors state_tensors() const = 0;
  virtual Json counters() const { return Json::object(); }
  virtual void restore_counters(const Json& counters) {}
};

// Copies `saved` into `opt`'s state tensors by name and restores its counters. Every state
// tensor must be there with its shape and dtype, and nothing else: errors name `file` and the
// tensors, and no tensor is touched unless all fit. `share`: `opt` holds a share of the saved
// state (zero.h): saved tensors it has no slot for are other ranks'.
void load_optimizer_state(Optimizer& opt, const NamedTensors& saved, const Json& counters, const std::string& file,
                          bool share = false);

using OptimizerFactory = std::unique_ptr<Optimizer> (*)(const Json& options,
                                                        std::vector<Param>& params,
                                                        const Parametrisation& param);
}  // namespace orrery
