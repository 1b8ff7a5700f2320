// make_cuda_graphed_call in a build without ORRERY_CUDA.
#include "orrery/error.h"
#include "orrery/host/graphed_call.h"

namespace orrery {

std::unique_ptr<GraphedCall> make_cuda_graphed_call(const c10::Device& device) {
  throw Error("CUDA graphs on " + device.str() + ": this orrery was built without ORRERY_CUDA "
              "(configure it against a CUDA LibTorch, where ORRERY_CUDA is on by default)");
}

}  // namespace orrery
