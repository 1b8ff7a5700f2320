#include "orrery/precision.h"

#include <ATen/autocast_mode.h>

#include "orrery/error.h"

namespace orrery {

Precision parse_precision(const std::string& name, const std::string& owner) {
  if (name == "fp32") return Precision::fp32;
  if (name == "bf16") return Precision::bf16;
  throw Error(owner + ": unknown precision '" + name + "' (fp32 or bf16)");
}

const char* precision_name(Precision p) { return p == Precision::bf16 ? "bf16" : "fp32"; }

AutocastGuard::AutocastGuard(c10::DeviceType device, Precision p) : device_(device) {
  if (p != Precision::bf16) return;
  previous_enabled_ = at::autocast::is_autocast_enabled(device_);
  previous_dtype_ = at::autocast::get_autocast_dtype(device_);
  at::autocast::set_autocast_enabled(device_, true);
  at::autocast::set_autocast_dtype(device_, at::kBFloat16);
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastGuard::~AutocastGuard() {
  if (!active_) return;
  // The cache of casted weights lives as long as the outermost autocast region, as in Python.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_, previous_enabled_);
  at::autocast::set_autocast_dtype(device_, previous_dtype_);
}

}  // namespace orrery
