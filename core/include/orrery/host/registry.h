#pragma once
// Finds, checks and indexes plugin libraries. Search order: the folders in ORRERY_PLUGIN_PATH
// (colon-separated, so a researcher's build can shadow a built-in), then lib/orrery-plugins
// next to liborrery_core. A plugin whose ABI or LibTorch version differs from the host's is
// refused with a message naming the file and both versions; the others still load.
#include <memory>
#include <string>
#include <vector>

#include "orrery/error.h"
#include "orrery/plugin.h"
#include "orrery/host/plugin_guard.h"

namespace orrery {

class Registry {
 public:
  // The process-wide registry, loaded on first use.
  static Registry& global();

  Registry() = default;
  // Loads every *.so in `dir` (non-recursive). Missing folders are ignored.
  void load_directory(const std::string& dir);
  // Loads one library; returns false (and records why) when it is refused.
  bool load_file(const std::string& path);

  const std::vector<PluginInfo>& plugins() const { return plugins_; }
  // Human-readable reasons why libraries were refused or shadowed.
  const std::vector<std::string>& problems() const { return problems_; }

  // Throws orrery::Error "unknown <kind> plugin 'x' (available: a, b)".
  const PluginInfo& find(PluginKind kind, const std::string& name) const;
  std::vector<std::string> names(PluginKind kind) const;
  // The architecture plugins that read a released checkpoint layout, in load order.
  std::vector<const PluginInfo*> checkpoint_readers() const;

  // Validates `options` against the plugin's schema and calls its factory.
  template <PluginKind K, class... Args>
  auto create(const std::string& name, const Json& options, Args&&... args) const {
    const PluginInfo& p = find(K, name);
    Json checked = p.schema.validate(options, std::string(kind_name(K)) + " plugin '" + name + "'");
    // const_cast first: clang refuses a reinterpret_cast that drops the pointee's const.
    auto factory = reinterpret_cast<typename KindTraits<K>::Factory>(const_cast<void*>(p.factory));
    try {
      auto made = factory(checked, std::forward<Args>(args)...);
      if constexpr (K == PluginKind::data || K == PluginKind::optimizer) return guard_plugin(std::move(made), p);
      else return made;
    } catch (const Error&) {
      throw;  // the plugin's own message for its user, naming the option or file at fault
    } catch (...) {
      rethrow_from_plugin(p);  // anything else names the plugin and its file
    }
  }

  // Inside a catch block: throws orrery::Error "<kind> plugin 'x' (path) failed: <what>" for
  // the exception in flight, whatever its type (a std::exception or not), so no exception
  // crosses the plugin boundary without naming the plugin.
  [[noreturn]] static void rethrow_from_plugin(const PluginInfo& p);

  // The default search folders, in order.
  static std::vector<std::string> default_directories();

 private:
  std::vector<PluginInfo> plugins_;
  std::vector<std::string> problems_;
};

}  // namespace orrery
