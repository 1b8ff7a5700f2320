// A plugin with this host's ABI whose entry point orrery_plugin_describe throws: a
// std::runtime_error, or, when ORRERY_TEST_THROW=other, an int (no std::exception). The host
// refuses it with a warning naming the file, and the other plugins still load.
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "orrery/plugin.h"

extern "C" __attribute__((visibility("default"))) const orrery_plugin_abi_info*
orrery_plugin_abi(void) {
  static constexpr orrery_plugin_abi_info info = ORRERY_PLUGIN_ABI_INFO;
  return &info;
}

extern "C" __attribute__((visibility("default"))) const orrery_plugin_descriptor*
orrery_plugin_describe(void) {
  const char* what = std::getenv("ORRERY_TEST_THROW");
  if (what && std::strcmp(what, "other") == 0) throw 42;
  throw std::runtime_error("cannot build the option schema");
}
