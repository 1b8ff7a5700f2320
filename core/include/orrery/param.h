#pragma once
// The central seam, roles and scales: an architecture never picks an init std
// or a learning rate. It asks the ParamFactory for each weight with its role, fan-in, fan-out
// and depth; the active Parametrisation answers init, forward multipliers and per-role
// learning-rate multipliers; every parameter keeps its metadata so optimizers can route it.
#include <ATen/core/Tensor.h>
#include <ATen/core/Generator.h>

#include <string>
#include <vector>

#include "orrery/json.h"

namespace orrery {

enum class Role {
  input,    // maps data features into the model (first projection)
  hidden,   // a matrix inside the stack (attention, MLP)
  readout,  // maps the model width to outputs (last projection)
  bias,     // additive vector
  gain,     // multiplicative vector (norm weights, per-dim scales)
};
const char* role_name(Role r);

// Optimizers come in families whose learning rates scale differently with width.
enum class OptimizerFamily { adam_like, muon_like, sgd_like };

struct ParamInfo {
  std::string name;     // "layers.3.attn.in_proj.weight"
  Role role = Role::hidden;
  int64_t fan_in = 1;   // input features of the linear map this belongs to
  int64_t fan_out = 1;  // output features
  int depth = -1;       // index of the layer in the depth-scaled stack; -1 = outside it
  int stack_depth = 0;  // layers in that stack (u-muP scales learning rates by its -1/2 power)
  int64_t width = 0;    // the model width (d_model) it was made at; 0 = not given (muP's width_mult)
  std::vector<int64_t> shape;
  Json to_json() const;
};

struct Param {
  ParamInfo info;
  at::Tensor tensor;  // a leaf that requires grad
};

// Where multipliers and inits come from. Plugins implement this (sp, mup, umup).
class Parametrisation {
 public:
  virtual ~Parametrisation() = default;
  virtual std::string name() const = 0;
  // A freshly initialised tensor of info.shape (float32, CPU) drawn from `gen`.
  virtual at::Tensor init(const ParamInfo& info, at::Generator& gen) const = 0;
  // Multiplier applied to the output of a linear map (bias included), e.g. 1/sqrt(fan_in).
  virtual double linear_multiplier(const ParamInfo& weight) const = 0;
  // Learning-rate multiplier of this parameter under an optimizer family.
  virtual double lr_multiplier(const ParamInfo& info, OptimizerFamily family) const = 0;
  // Multiplier of an Adam-family optimizer's epsilon for this parameter: epsilon guards a
  // denominator the size of the parameter's gradient, so a parametrisation whose gradients
  // shrink with depth or width shrinks it alike (CompleteP's split). 1 by default.
  virtual double eps_multiplier(const ParamInfo& info) const {
    (void)info;
    return 1.0;
  }
  // Weights (branch, skip) of residual branch `index` (0-based) out of `count` in the
  // depth-scaled stack: x <- a*branch + b*skip. Branches outside the stack use index = -1.
  virtual std::pair<double, double> residual_weights(int index, int count) const = 0;
  // Scale applied after a nonlinearity in patch MLPs (1 in SP; unit-scaled SiLU in u-muP).
  virtual double activation_scale(const std::string& nonlinearity) const = 0;
  // Softmax scale of attention with head dimension d_head.
  virtual double attention_scale(int64_t d_head) const = 0;

  // ---- backward scales (u-muP's scale_bwd) ----
  // Whether the ops below replace the chain rule's gradients by explicit scales. When false
  // (SP, muP) autograd is left alone and the other methods are not called.
  virtual bool scales_backward() const { return false; }
  // Factors the gradients of a linear map y = m (x W^T + b) get in place of the chain rule's m:
  // dL/dx = input * g W and dL/dW = weight * g^T x (the bias like the weight). `global_rows`
  // is the number of rows x has across the global batch (local x world size x accumulation).
  struct LinearGrads { double input = 1, weight = 1; };
  virtual LinearGrads linear_grads(const ParamInfo& weight, int64_t global_rows) const {
    const double m = linear_multiplier(weight);
    (void)global_rows;
    return {m, m};
  }
  // Factor on the gradient of a gain applied elementwise to an activation of `global_numel`
  // elements across the global batch.
  virtual double gain_grad_scale(const ParamInfo& gain, int64_t global_numel) const {
    (void)gain, (void)global_numel;
    return 1.0;
  }
};

// Creates parameters for an architecture or head, records their metadata, and applies the
// parametrisation's init. Names are prefixed by the current scope ("layers.0.").
class ParamFactory {
 public:
  ParamFactory(const Parametrisation& p, at::Generator gen, at::TensorOptions opts);

  // How a parameter starts: from the parametrisation, or at zero when the architecture defines
  // its value at init (e.g. an offset inside a softplus, such as Toto's PerDimScale).
  enum class Init { parametrised, zeros };

  // On the meta device nothing is allocated or drawn: shapes and metadata only (counting the
  // parameters of a 2.5B-parameter preset costs nothing).
  at::Tensor make(const std::string& name, Role role, std::vector<int64_t> shape,
                  int64_t fan_in, int64_t fan_out, int depth = -1, Init init = Init::parametrised);

  // Parameters made with depth >= 0 from now on belong to a depth-scaled stack of `layers`.
  void set_stack_depth(int layers) { stack_depth_ = layers; }
  // The model width every parameter made from now on records (muP's width multiplier).
  void set_width(int64_t width) { width_ = width; }
  // The full name `name` would get in the current scope.
  std::string full_name(const std::string& name) const { return prefix_ + name; }

  // Scoped name prefixes: `auto s = factory.scope("layers.0");`
  class Scope {
   public:
    Scope(ParamFactory& f, const std::string& prefix);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
   private:
    ParamFactory& f_;
    size_t saved_;
  };
  Scope scope(const std::string& prefix) { return Scope(*this, prefix); }

  const Parametrisation& parametrisation() const { return param_; }
  std::vector<Param>& params() { return params_; }
  const at::TensorOptions& options() const { return opts_; }

 private:
  const Parametrisation& param_;
  at::Generator gen_;
  at::TensorOptions opts_;
  std::string prefix_;
  int stack_depth_ = 0;
  int64_t width_ = 0;
  std::vector<Param> params_;
};

int64_t count_parameters(const std::vector<Param>& params);

}  // namespace orrery
