#pragma once
#include <memory>
#include <vector>

#include "orrery/json.h"
#include "orrery/param.h"

namespace orrery {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // One update of every parameter it owns, at learning rate base_lr() * lr_factor times the
  // parametrisation's per-parameter multiplier. Gradients are read from tensor.grad().
  virtual void step(double lr_factor) = 0;
  virtual double base_lr() const = 0;
};

using OptimizerFactory = std::unique_ptr<Optimizer> (*)(const Json& options,
                                                        std::vector<Param>& params,
                                                        const Parametrisation& param);
}  // namespace orrery
