// CUDA graphs (ATen's at::cuda::CUDAGraph), compiled in builds with ORRERY_CUDA.
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "orrery/error.h"
#include "orrery/host/graphed_call.h"

namespace orrery {
namespace {

class CudaGraphCall final : public GraphedCall {
 public:
  explicit CudaGraphCall(const c10::Device& device) : device_(device) {}

  void capture(std::function<void()> work) override {
    if (work_) throw Error("a graphed call is captured once");
    work_ = std::move(work);  // the graph replays kernels that read what the work holds
    c10::cuda::CUDAGuard on_device(device_);
    // ATen captures only on a stream other than the default one. Warm-up runs first, on the
    // same stream: lazy initialisation (cuBLAS handles and workspaces, kernel selection) and
    // the caching allocator's first blocks stay out of the graph.
    c10::cuda::getCurrentCUDAStream().synchronize();  // inputs copied before are in place
    const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device_.index());
    {
      c10::cuda::CUDAStreamGuard on_side(side);
      for (int i = 0; i < kWarmups; ++i) work_();
      side.synchronize();
      graph_.capture_begin();
      try {
        work_();
      } catch (...) {
        graph_.capture_end();  // leaves the stream out of capture mode for the error to surface
        throw;
      }
      graph_.capture_end();
    }
    side.synchronize();
  }

  void replay() override {
    if (!work_) throw Error("a graphed call was replayed before it was captured");
    c10::cuda::CUDAGuard on_device(device_);
    graph_.replay();
  }

 private:
  static constexpr int kWarmups = 3;
  c10::Device device_;
  std::function<void()> work_;
  at::cuda::CUDAGraph graph_;
};

}  // namespace

std::unique_ptr<GraphedCall> make_cuda_graphed_call(const c10::Device& device) {
  return std::make_unique<CudaGraphCall>(device);
}

}  // namespace orrery
