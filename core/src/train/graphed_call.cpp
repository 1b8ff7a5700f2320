#include "orrery/host/graphed_call.h"

#include "orrery/error.h"

namespace orrery {
namespace {

// Off CUDA, replaying is running the recorded work again: the same reads and writes of the
// same tensors, so code that breaks the contract (a new input not copied into place, a result
// read from a tensor the work replaces) gives wrong answers here too.
class RerunCall final : public GraphedCall {
 public:
  void capture(std::function<void()> work) override {
    if (work_) throw Error("a graphed call is captured once");
    work_ = std::move(work);
    work_();
  }
  void replay() override {
    if (!work_) throw Error("a graphed call was replayed before it was captured");
    work_();
  }

 private:
  std::function<void()> work_;
};

}  // namespace

std::unique_ptr<GraphedCall> make_graphed_call(const c10::Device& device) {
  if (device.is_cuda()) return make_cuda_graphed_call(device);
  return std::make_unique<RerunCall>();
}

}  // namespace orrery
