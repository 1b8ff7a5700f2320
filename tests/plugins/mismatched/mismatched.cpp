// A plugin that claims to be built for plugin ABI 999 and LibTorch 1.13.0. The registry must
// refuse it from its ABI record alone, never calling orrery_plugin_describe.
#include <cstdlib>

#include "orrery/plugin.h"

extern "C" __attribute__((visibility("default"))) const orrery_plugin_abi_info*
orrery_plugin_abi(void) {
  static constexpr orrery_plugin_abi_info info{999, sizeof(orrery_plugin_descriptor), 1, 13, 0,
                                               _GLIBCXX_USE_CXX11_ABI};
  return &info;
}

extern "C" __attribute__((visibility("default"))) const orrery_plugin_descriptor*
orrery_plugin_describe(void) {
  std::abort();  // the host must not get this far
}
