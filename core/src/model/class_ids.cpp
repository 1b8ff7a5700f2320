#include "orrery/class_ids.h"

#include <ATen/ATen.h>

#include "orrery/error.h"

namespace orrery {

bool are_class_ids(const at::Tensor& values, int64_t n, const at::Tensor& only) {
  at::Tensor ok = (values >= 0) & (values < static_cast<double>(n)) & (values == values.floor());
  if (only.defined()) {
    if (only.sizes() != values.sizes())
      throw Error("are_class_ids: a mask of shape " + c10::str(only.sizes()) + " for values of shape " +
                  c10::str(values.sizes()));
    ok = ok | only.logical_not();
  }
  return ok.all().item<bool>();
}

}  // namespace orrery
