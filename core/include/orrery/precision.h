#pragma once
// Numerical precision of a forward pass. fp32 is exact training as written; bf16 runs the
// architecture and head forward under autocast (matrix products, attention and the ops autocast
// lists in bfloat16) while the weights, their gradients and the optimizer's state stay float32,
// and the causal scaler and the loss stay float32 or wider. bf16 needs no loss scaling.
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <string>

namespace orrery {

enum class Precision { fp32, bf16 };

// "fp32" or "bf16"; anything else is an error naming `owner` (an option, a flag) and the choices.
Precision parse_precision(const std::string& name, const std::string& owner);
const char* precision_name(Precision p);

// Autocast to bfloat16 on `device`'s type for the guard's lifetime when `p` is bf16 (nothing
// otherwise), restoring the previous state on exit, as Python's torch.autocast does. Autocast is
// thread-local, so a guard affects only the thread that holds it.
class AutocastGuard {
 public:
  AutocastGuard(c10::DeviceType device, Precision p);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  c10::DeviceType device_;
  bool active_ = false, previous_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::ScalarType::Float;
};

}  // namespace orrery
