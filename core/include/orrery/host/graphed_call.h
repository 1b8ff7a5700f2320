#pragma once
// A fixed-shape piece of work recorded once and replayed: on a CUDA device one CUDA graph (no
// per-kernel launch cost, nothing waiting on the host between kernels); elsewhere the work run
// again, which keeps the contract checkable on any machine. The contract, as for
// torch.cuda.graph: the work reads only tensors that stay alive and in place (copy new inputs
// into them before replay()), writes its results into tensors it leaves in place (read them
// after replay()), reads no device value on the host, and every host value it uses (shapes,
// scalars, branches) is frozen at capture. Ops see ForwardContext::host_sync == false.
#include <c10/core/Device.h>

#include <functional>
#include <memory>

namespace orrery {

class GraphedCall {
 public:
  virtual ~GraphedCall() = default;
  // Runs `work` (warm-up runs first on a CUDA device) and records it. Once only.
  virtual void capture(std::function<void()> work) = 0;
  // Runs what capture() recorded, on the current stream.
  virtual void replay() = 0;
};

// A CUDA graph on a CUDA device; the work re-run elsewhere.
std::unique_ptr<GraphedCall> make_graphed_call(const c10::Device& device);

// The CUDA implementation: graphed_call_cuda.cpp in a build with ORRERY_CUDA; without it, an
// error that says how the program was built.
std::unique_ptr<GraphedCall> make_cuda_graphed_call(const c10::Device& device);

}  // namespace orrery
