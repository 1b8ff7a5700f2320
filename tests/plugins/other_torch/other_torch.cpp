// A plugin with this host's plugin ABI but built against the next LibTorch minor version: only
// the LibTorch check can refuse it.
#include <cstdlib>

#include "orrery/plugin.h"

extern "C" __attribute__((visibility("default"))) const orrery_plugin_abi_info*
orrery_plugin_abi(void) {
  static constexpr orrery_plugin_abi_info info{ORRERY_PLUGIN_ABI, sizeof(orrery_plugin_descriptor),
                                               TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR + 1, 0,
                                               _GLIBCXX_USE_CXX11_ABI};
  return &info;
}

extern "C" __attribute__((visibility("default"))) const orrery_plugin_descriptor*
orrery_plugin_describe(void) {
  std::abort();  // the host must not get this far
}
