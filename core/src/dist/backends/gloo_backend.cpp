// Compiled against the stand-in gloo headers of gloo_stand_in/ (see its rendezvous/store.h):
// only functions libtorch_cpu exports are called here, and no gloo type is built or derived.
#include "gloo_backend.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

namespace orrery {

c10::intrusive_ptr<c10d::Backend> make_gloo_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                    std::chrono::milliseconds timeout, const std::string& host,
                                                    const std::string& interface) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  options->devices.push_back(interface.empty() ? c10d::ProcessGroupGloo::createDeviceForHostname(host)
                                               : c10d::ProcessGroupGloo::createDeviceForInterface(interface));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
}

}  // namespace orrery
