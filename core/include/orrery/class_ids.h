#pragma once
// Class and token ids travel in the float values of a batch (a text source's rows, the targets a
// categorical head scores, what generation decodes). One check says whether they are ids.
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace orrery {

// True when every value of `values` is a whole number in [0, n); where `only` (bool, of the
// same shape, else an Error) is given, only the values where it is true. It reads the answer
// back to the host, so it cannot run while a CUDA graph records.
bool are_class_ids(const at::Tensor& values, int64_t n, const at::Tensor& only = {});

}  // namespace orrery
