#include "orrery/param.h"

#include <ATen/ATen.h>

namespace orrery {

const char* role_name(Role r) {
  switch (r) {
    case Role::input: return "input";
    case Role::hidden: return "hidden";
    case Role::readout: return "readout";
    case Role::bias: return "bias";
    case Role::gain: return "gain";
  }
  return "?";
}

Json ParamInfo::to_json() const {
  return {{"name", name}, {"role", role_name(role)}, {"fan_in", fan_in},
          {"fan_out", fan_out}, {"depth", depth}, {"stack_depth", stack_depth}, {"width", width},
          {"shape", shape}};
}

ParamFactory::ParamFactory(const Parametrisation& p, at::Generator gen, at::TensorOptions opts)
    : param_(p), gen_(std::move(gen)), opts_(opts) {}

at::Tensor ParamFactory::make(const std::string& name, Role role, std::vector<int64_t> shape,
                              int64_t fan_in, int64_t fan_out, int depth, Init init) {
  ParamInfo info{prefix_ + name, role, fan_in, fan_out, depth, depth >= 0 ? stack_depth_ : 0,
                 width_, shape};
  at::Tensor t;
  if (opts_.device().is_meta()) t = at::empty(shape, opts_);
  else if (init == Init::zeros) t = at::zeros(shape, opts_);
  // Initialise on the CPU from the model's generator so weights do not depend on the device.
  else t = param_.init(info, gen_).to(opts_);
  t = t.detach().requires_grad_(true);
  params_.push_back({std::move(info), t});
  return t;
}

ParamFactory::Scope::Scope(ParamFactory& f, const std::string& prefix)
    : f_(f), saved_(f.prefix_.size()) {
  f_.prefix_ += prefix + ".";
}
ParamFactory::Scope::~Scope() { f_.prefix_.resize(saved_); }

int64_t count_parameters(const std::vector<Param>& params) {
  int64_t n = 0;
  for (const auto& p : params) n += p.tensor.numel();
  return n;
}

}  // namespace orrery
