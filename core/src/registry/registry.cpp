#include "orrery/host/registry.h"

#include "orrery/host/plugin_guard.h"

#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <sstream>

#include "orrery/error.h"

namespace fs = std::filesystem;

namespace orrery {

const char* kind_name(PluginKind k) {
  switch (k) {
    case PluginKind::architecture: return "architecture";
    case PluginKind::head: return "head";
    case PluginKind::optimizer: return "optimizer";
    case PluginKind::parametrisation: return "parametrisation";
    case PluginKind::data: return "data";
  }
  return "?";
}

namespace {
std::optional<PluginKind> parse_kind(const std::string& s) {
  for (auto k : {PluginKind::architecture, PluginKind::head, PluginKind::optimizer,
                 PluginKind::parametrisation, PluginKind::data})
    if (s == kind_name(k)) return k;
  return std::nullopt;
}

std::string version_string(int major, int minor, int patch) {
  std::ostringstream s;
  s << major << "." << minor << "." << patch;
  return s.str();
}

// A plugin that aborts while it loads (its static initialisers run inside dlopen, and an
// exception escaping one ends in std::terminate, which aborts) takes the process with it: no
// C++ can catch that. While a library loads, SIGABRT first writes which file it was, with
// write(2) from a message prepared beforehand, then kills the process as before (exit 134).
const char* g_loading_message = nullptr;
size_t g_loading_length = 0;

void on_abort_while_loading(int sig) {
  if (g_loading_message) {
    ssize_t ignored = ::write(STDERR_FILENO, g_loading_message, g_loading_length);
    (void)ignored;
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);  // delivered when the handler returns: the process ends by SIGABRT
}

class AbortReport {
 public:
  explicit AbortReport(const std::string& path)
      : message_("orrery: the plugin " + path + " aborted the program while it was being loaded (a static "
                 "initialiser or an entry point called abort() or let an exception escape); remove it from "
                 "the plugin folders (ORRERY_PLUGIN_PATH, lib/orrery-plugins) or rebuild it\n") {
    g_loading_message = message_.c_str();
    g_loading_length = message_.size();
    struct sigaction action = {};
    action.sa_handler = on_abort_while_loading;
    sigemptyset(&action.sa_mask);
    installed_ = ::sigaction(SIGABRT, &action, &previous_) == 0;
  }
  ~AbortReport() {
    if (installed_) ::sigaction(SIGABRT, &previous_, nullptr);
    g_loading_message = nullptr;
  }
  AbortReport(const AbortReport&) = delete;
  AbortReport& operator=(const AbortReport&) = delete;

 private:
  std::string message_;
  struct sigaction previous_ = {};
  bool installed_ = false;
};
}  // namespace

void Registry::rethrow_from_plugin(const PluginInfo& p) {
  throw Error(plugin_label(p) + " failed: " + current_exception_text());
}

Json PluginInfo::to_json() const {
  Json j = {{"kind", kind_name(kind)}, {"name", name},       {"version", version},
            {"description", description}, {"path", path}, {"options", schema.to_json()}};
  if (checkpoint_format) j["checkpoint_format"] = checkpoint_format->name;
  return j;
}

std::vector<std::string> Registry::default_directories() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("ORRERY_PLUGIN_PATH")) {
    std::stringstream ss(env);
    std::string d;
    while (std::getline(ss, d, ':'))
      if (!d.empty()) dirs.push_back(d);
  }
  // lib/orrery-plugins beside the library that holds this function (liborrery_core.so).
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&Registry::default_directories), &info) && info.dli_fname)
    dirs.push_back((fs::path(info.dli_fname).parent_path() / "orrery-plugins").lexically_normal().string());
  return dirs;
}

Registry& Registry::global() {
  static Registry r = [] {
    Registry reg;
    for (const auto& d : default_directories()) reg.load_directory(d);
    return reg;
  }();
  return r;
}

void Registry::load_directory(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".so") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());  // deterministic order
  for (const auto& f : files) load_file(f);
}

bool Registry::load_file(const std::string& path) {
  const AbortReport report(path);  // until the plugin's code has run: dlopen, its entry points
  // A static initialiser's exception runs through dlopen, which glibc declares noexcept: GCC then
  // terminates at the call, while clang lets it unwind on to whoever catches it. Called through a
  // pointer without noexcept (volatile, so it is not folded back into the declared call) it
  // reaches the handler below under either compiler. The dynamic loader's lock and state are
  // unknown after it, so no further library can be loaded safely: the process ends as an abort.
  static void* (*volatile open_library)(const char*, int) = dlopen;
  void* handle = nullptr;
  try {
    handle = open_library(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  } catch (...) {
    std::abort();
  }
  if (!handle) {
    problems_.push_back("refused plugin " + path + ": " + dlerror());
    return false;
  }
  // Plain data first: nothing of the plugin's C++ runs before its versions are known to match.
  auto abi = reinterpret_cast<orrery_plugin_abi_fn>(dlsym(handle, ORRERY_PLUGIN_ABI_ENTRY));
  auto describe = reinterpret_cast<orrery_plugin_describe_fn>(dlsym(handle, ORRERY_PLUGIN_ENTRY));
  if (!abi || !describe) {
    problems_.push_back("refused plugin " + path + ": not an Orrery plugin (no " +
                        (abi ? ORRERY_PLUGIN_ENTRY : ORRERY_PLUGIN_ABI_ENTRY) + " entry point)");
    return false;  // never dlclose: a plugin's code may still back live objects or static destructors
  }
  static constexpr orrery_plugin_abi_info host = ORRERY_PLUGIN_ABI_INFO;
  const orrery_plugin_abi_info* a = nullptr;
  try {
    a = abi();
  } catch (...) {
    problems_.push_back("refused plugin " + path + ": its entry point " ORRERY_PLUGIN_ABI_ENTRY " failed: " +
                        current_exception_text());
    return false;
  }
  if (!a || a->abi_version != host.abi_version || a->descriptor_size != host.descriptor_size ||
      a->torch_major != host.torch_major || a->torch_minor != host.torch_minor ||
      a->cxx11_abi != host.cxx11_abi) {
    auto describe_build = [](const orrery_plugin_abi_info& i) {
      return "plugin ABI " + std::to_string(i.abi_version) + " with LibTorch " +
             version_string(i.torch_major, i.torch_minor, i.torch_patch) +
             (i.cxx11_abi ? "" : " (pre-C++11 libstdc++ ABI)");
    };
    problems_.push_back("refused plugin " + path + ": built for " +
                        (a ? describe_build(*a) : std::string("an unknown ABI")) +
                        ", but this host has " + describe_build(host) +
                        "; rebuild the plugin against this host");
    return false;
  }
  const orrery_plugin_descriptor* d = nullptr;
  try {
    d = describe();
  } catch (...) {
    problems_.push_back("refused plugin " + path + ": its entry point " ORRERY_PLUGIN_ENTRY " failed: " +
                        current_exception_text());
    return false;
  }
  if (!d || !d->name || !d->version || !d->description || !d->options_schema || !d->factory) {
    problems_.push_back("refused plugin " + path + ": incomplete descriptor");
    return false;
  }
  auto kind = parse_kind(d->kind ? d->kind : "");
  if (!kind) {
    problems_.push_back("refused plugin " + path + ": unknown kind '" +
                        std::string(d->kind ? d->kind : "") + "'");
    return false;
  }
  PluginInfo info;
  info.kind = *kind;
  info.name = d->name;
  info.version = d->version;
  info.description = d->description;
  info.path = path;
  info.factory = d->factory;
  if (auto format = reinterpret_cast<const CheckpointFormat* (*)()>(dlsym(handle, ORRERY_CHECKPOINT_FORMAT_ENTRY))) {
    try {
      info.checkpoint_format = format();
    } catch (...) {
      problems_.push_back("refused plugin " + path + ": its entry point " ORRERY_CHECKPOINT_FORMAT_ENTRY " failed: " +
                          current_exception_text());
      return false;
    }
    const CheckpointFormat* f = info.checkpoint_format;
    if (info.kind != PluginKind::architecture || !f || !f->name || !f->recognises || !f->spec || !f->take_buffers) {
      problems_.push_back("refused plugin " + path + ": incomplete checkpoint format (only an "
                          "architecture plugin may export one, with every function set)");
      return false;
    }
  }
  try {
    info.schema = OptionSchema::from_json(Json::parse(d->options_schema));
  } catch (const std::exception& e) {
    problems_.push_back("refused plugin " + path + ": malformed option schema: " + e.what());
    return false;
  }
  for (const auto& p : plugins_)
    if (p.kind == info.kind && p.name == info.name) {
      problems_.push_back("skipped plugin " + path + ": " + kind_name(info.kind) + " '" +
                          info.name + "' is already provided by " + p.path);
      return false;
    }
  plugins_.push_back(std::move(info));
  return true;
}

std::vector<std::string> Registry::names(PluginKind kind) const {
  std::vector<std::string> out;
  for (const auto& p : plugins_)
    if (p.kind == kind) out.push_back(p.name);
  return out;
}

std::vector<const PluginInfo*> Registry::checkpoint_readers() const {
  std::vector<const PluginInfo*> out;
  for (const auto& p : plugins_)
    if (p.checkpoint_format) out.push_back(&p);
  return out;
}

const PluginInfo& Registry::find(PluginKind kind, const std::string& name) const {
  for (const auto& p : plugins_)
    if (p.kind == kind && p.name == name) return p;
  auto available = names(kind);
  std::string msg = "unknown " + std::string(kind_name(kind)) + " plugin '" + name + "'";
  std::string near = closest_name(name, available);
  if (!near.empty()) msg += " (did you mean '" + near + "'?)";
  msg += "; available: ";
  if (available.empty()) msg += "none (is ORRERY_PLUGIN_PATH right?)";
  for (size_t i = 0; i < available.size(); ++i) msg += (i ? ", " : "") + available[i];
  throw Error(msg);
}

}  // namespace orrery
