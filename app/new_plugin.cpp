// `orrery new plugin KIND NAME [--dir DIR]`: a plugin of one's own, ready to build against this
// Orrery: its source (an option schema, the formula it computes in a box at the top, the
// ORRERY_PLUGIN macro), a CMakeLists.txt using find_package(Orrery), a README and a Lua script
// that uses it. The texts are app/templates/, compiled in (templates.h).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "commands.h"
#include "orrery/error.h"
#include "orrery/host/file_tree.h"
#include "orrery/host/program.h"
#include "orrery/options.h"
#include "templates.h"

namespace orrery {
namespace {
namespace fs = std::filesystem;

// The kinds as a user names them, long or short, and as orrery_add_plugin and the templates do.
const std::map<std::string, std::string> kKinds = {
    {"architecture", "arch"}, {"arch", "arch"},   {"head", "head"},   {"optimizer", "optim"},
    {"optim", "optim"},       {"parametrisation", "param"}, {"param", "param"}, {"data", "data"}};
const std::map<std::string, std::string> kKindNames = {
    {"arch", "architecture"}, {"head", "head"}, {"optim", "optimizer"}, {"param", "parametrisation"}, {"data", "data"}};

const char* kUsage =
    "usage: orrery new plugin KIND NAME [--dir DIR]\n\n"
    "Writes a plugin of your own into DIR (default ./NAME, which must not exist): NAME.cpp (its option\n"
    "schema and the formula it computes), CMakeLists.txt (find_package(Orrery), orrery_add_plugin),\n"
    "README.md and NAME.lua, an experiment that uses it. KIND: architecture, head, optimizer,\n"
    "parametrisation or data (or arch, optim, param). NAME: an identifier (letters, digits, _).\n"
    "Then: cmake -S DIR -B DIR/build -DCMAKE_PREFIX_PATH=<Orrery's prefix> && cmake --build DIR/build,\n"
    "and ORRERY_PLUGIN_PATH=DIR/build loads it. docs/plugins.md walks through it.\n";

bool identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::string substituted(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values)
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  return text;
}

// Where this Orrery's CMake package is: the prefix above bin/orrery when it holds
// lib/cmake/Orrery (an install, or the build tree); "" otherwise.
std::string package_prefix() {
  std::error_code ec;
  const fs::path prefix = fs::path(orrery_program()).parent_path().parent_path();
  return fs::exists(prefix / "lib" / "cmake" / "Orrery" / "OrreryConfig.cmake", ec) ? fs::absolute(prefix, ec).string() : "";
}

}  // namespace

int cmd_new(const std::vector<std::string>& args) {
  if (args.empty() || wants_help(args)) {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] != "plugin") throw Error("new: it makes plugins: orrery new plugin KIND NAME (see orrery new --help)");
  std::vector<std::string> rest;
  std::string dir;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--dir") {
      if (i + 1 >= args.size() || args[i + 1].empty()) throw Error("new: --dir needs a folder");
      dir = args[++i];
    } else if (args[i].starts_with("-")) {
      throw Error("new: unknown option '" + args[i] + "' (see orrery new --help)");
    } else {
      rest.push_back(args[i]);
    }
  }
  if (rest.size() > 2) throw Error("new: unexpected argument '" + rest[2] + "': orrery new plugin KIND NAME (see orrery new --help)");
  if (rest.size() != 2) throw Error("new: give a kind and a name: orrery new plugin KIND NAME (see orrery new --help)");
  const std::string& kind_given = rest[0];
  const std::string& name = rest[1];
  const auto kind = kKinds.find(kind_given);
  if (kind == kKinds.end()) {
    std::vector<std::string> names;
    for (const auto& [k, v] : kKinds) names.push_back(k);
    const std::string near = closest_name(kind_given, names);
    throw Error("new: unknown plugin kind " + quote_input(kind_given) + (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                "; the kinds are architecture, head, optimizer, parametrisation and data");
  }
  if (!identifier(name))
    throw Error("new: plugin name " + quote_input(name) + " is not an identifier (letters, digits and _, not starting "
                "with a digit): it names the library, the C++ symbols and the Lua choice");
  if (dir.empty()) dir = name;
  std::error_code ec;
  if (fs::exists(dir, ec) || fs::is_symlink(dir, ec))
    throw Error("new: " + dir + " already exists; nothing was written (give another --dir, or remove it)");

  const std::string prefix = package_prefix();
  const std::map<std::string, std::string> values = {
      {"@NAME@", name}, {"@KIND@", kind->second}, {"@KIND_NAME@", kKindNames.at(kind->second)},
      {"@PREFIX@", prefix.empty() ? "<Orrery's install prefix>" : prefix}};
  const std::vector<std::pair<std::string, std::string>> files = {
      {name + ".cpp", kind->second + "/plugin.cpp"}, {name + ".lua", kind->second + "/script.lua"},
      {"CMakeLists.txt", "CMakeLists.txt"}, {"README.md", "README.md"}};
  fs::create_directories(dir, ec);
  if (ec) throw Error("new: cannot make " + dir + ": " + ec.message());
  try {
    for (const auto& [file, from] : files) {
      const std::string* text = find_template(from);
      if (!text) throw Error("new: no template " + from + " compiled in (app/templates)");
      const std::string path = (fs::path(dir) / file).string();
      std::ofstream out(path, std::ios::binary);
      out << substituted(*text, values);
      out.close();
      if (!out) throw Error("new: cannot write " + path);
    }
  } catch (...) {
    remove_tree(dir, ec);  // it did not exist before: leave nothing half-written
    throw;
  }
  std::printf("wrote %s: %s.cpp, %s.lua, CMakeLists.txt, README.md (the %s plugin '%s')\n\n", dir.c_str(), name.c_str(),
              name.c_str(), kKindNames.at(kind->second).c_str(), name.c_str());
  const std::string at = fs::absolute(dir, ec).string();
  std::printf("  cmake -S %s -B %s/build -DCMAKE_PREFIX_PATH=%s\n  cmake --build %s/build\n"
              "  ORRERY_PLUGIN_PATH=%s/build orrery run %s/%s.lua\n",
              at.c_str(), at.c_str(), values.at("@PREFIX@").c_str(), at.c_str(), at.c_str(), at.c_str(), name.c_str());
  if (prefix.empty())
    std::printf("\n(this orrery has no CMake package beside it: install it, cmake --install build --prefix P, and give P)\n");
  return 0;
}

}  // namespace orrery
