// A plugin that claims to be built for plugin ABI 999 and LibTorch 1.13.0. The registry must
// refuse it without touching its factory, naming the file and both versions.
#include "orrery/plugin.h"

extern "C" __attribute__((visibility("default"))) const orrery_plugin_descriptor*
orrery_plugin_describe(void) {
  static const orrery_plugin_descriptor d{999, sizeof(orrery_plugin_descriptor), 1, 13, 0,
                                          "architecture", "mismatched", "0.0.1",
                                          "deliberately incompatible", "[]", nullptr};
  return &d;
}
