#pragma once
// The plugin boundary. A plugin library exports two extern "C" functions. orrery_plugin_abi
// returns constant plain data (plugin ABI, LibTorch version, libstdc++ ABI) and runs no other
// plugin code; the host checks it first, so a plugin built against another ABI or LibTorch is
// refused with a message instead of crashing. Only then does the host call
// orrery_plugin_describe for the descriptor (kind, name, options, factory), and, when an
// architecture plugin exports it, orrery_plugin_checkpoint_format for the released checkpoint
// layout it reads (checkpoint_format.h). Plugins are never unloaded.
#if !defined(__cplusplus)
#error "orrery/plugin.h is the C++ plugin SDK: compile the plugin as C++20 (a .cpp file, CMake's orrery_add_plugin)"
#elif __cplusplus < 202002L
#error "orrery/plugin.h needs C++20 (-std=c++20; find_package(Orrery) and orrery_add_plugin set it)"
#endif
#include <torch/version.h>

#include <cstdint>
#include <string>

#include "orrery/architecture.h"
#include "orrery/checkpoint_format.h"
#include "orrery/data_source.h"
#include "orrery/head.h"
#include "orrery/optimizer.h"
#include "orrery/options.h"
#include "orrery/parametrisation.h"

// The plugin SDK is core/include/orrery/ without host/: what a plugin may include. Bump when any
// of its interfaces changes layout or meaning; a change in host/ never asks for a bump.
#define ORRERY_PLUGIN_ABI 16

extern "C" {
struct orrery_plugin_abi_info {
  uint32_t abi_version;  // ORRERY_PLUGIN_ABI the plugin was built with
  uint32_t descriptor_size;  // sizeof(orrery_plugin_descriptor) in the plugin
  int torch_major, torch_minor, torch_patch;  // LibTorch the plugin was built with
  int cxx11_abi;  // _GLIBCXX_USE_CXX11_ABI
};
typedef const orrery_plugin_abi_info* (*orrery_plugin_abi_fn)(void);

struct orrery_plugin_descriptor {
  const char* kind;  // "architecture", "head", "optimizer", "parametrisation", "data"
  const char* name;
  const char* version;
  const char* description;
  const char* options_schema;  // JSON array, see OptionSchema::to_json
  const void* factory;         // the kind's factory function, e.g. ArchitectureFactory
};
typedef const orrery_plugin_descriptor* (*orrery_plugin_describe_fn)(void);
}
#define ORRERY_PLUGIN_ABI_ENTRY "orrery_plugin_abi"
#define ORRERY_PLUGIN_ENTRY "orrery_plugin_describe"
#define ORRERY_CHECKPOINT_FORMAT_ENTRY "orrery_plugin_checkpoint_format"
#define ORRERY_PLUGIN_ABI_INFO                                                                 \
  {ORRERY_PLUGIN_ABI, sizeof(orrery_plugin_descriptor), TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, \
   TORCH_VERSION_PATCH, _GLIBCXX_USE_CXX11_ABI}

namespace orrery {
enum class PluginKind { architecture, head, optimizer, parametrisation, data };
const char* kind_name(PluginKind k);

// A plugin the host has loaded: what its descriptor said, and the library it came from.
struct PluginInfo {
  PluginKind kind;
  std::string name, version, description, path;
  OptionSchema schema;
  const void* factory = nullptr;
  const CheckpointFormat* checkpoint_format = nullptr;  // architectures that read a release's files
  Json to_json() const;
};

template <PluginKind K> struct KindTraits;
template <> struct KindTraits<PluginKind::architecture> {
  using Factory = ArchitectureFactory; static constexpr const char* name = "architecture"; };
template <> struct KindTraits<PluginKind::head> {
  using Factory = HeadFactory; static constexpr const char* name = "head"; };
template <> struct KindTraits<PluginKind::optimizer> {
  using Factory = OptimizerFactory; static constexpr const char* name = "optimizer"; };
template <> struct KindTraits<PluginKind::parametrisation> {
  using Factory = ParametrisationFactory; static constexpr const char* name = "parametrisation"; };
template <> struct KindTraits<PluginKind::data> {
  using Factory = DataSourceFactory; static constexpr const char* name = "data"; };
}  // namespace orrery

// Declares a plugin. KIND is one of architecture, head, optimizer, parametrisation, data;
// SCHEMA_FN returns an orrery::OptionSchema; FACTORY has the kind's factory signature.
#define ORRERY_PLUGIN(KIND, NAME, VERSION, DESCRIPTION, SCHEMA_FN, FACTORY)                   \
  extern "C" __attribute__((visibility("default"))) const orrery_plugin_abi_info*            \
  orrery_plugin_abi(void) {                                                                   \
    static constexpr orrery_plugin_abi_info info = ORRERY_PLUGIN_ABI_INFO;                    \
    return &info;                                                                             \
  }                                                                                           \
  extern "C" __attribute__((visibility("default"))) const orrery_plugin_descriptor*          \
  orrery_plugin_describe(void) {                                                              \
    using Traits = ::orrery::KindTraits<::orrery::PluginKind::KIND>;                          \
    static const typename Traits::Factory factory = FACTORY;                                  \
    static const std::string orrery_schema_json_ = (SCHEMA_FN)().to_json().dump();                       \
    static const orrery_plugin_descriptor d{Traits::name, NAME, VERSION, DESCRIPTION,        \
        orrery_schema_json_.c_str(), reinterpret_cast<const void*>(factory)};                 \
    return &d;                                                                                \
  }

// Declares the checkpoint format an architecture plugin reads; FORMAT names a
// ::orrery::CheckpointFormat with static storage.
#define ORRERY_CHECKPOINT_FORMAT(FORMAT)                                                       \
  extern "C" __attribute__((visibility("default"))) const ::orrery::CheckpointFormat*        \
  orrery_plugin_checkpoint_format(void) {                                                     \
    return &(FORMAT);                                                                         \
  }
