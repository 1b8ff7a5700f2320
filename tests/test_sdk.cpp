// The plugin SDK outside the tree: an install (cmake --install) that works wherever it is moved,
// its CMake package Orrery, and `orrery new plugin`, whose scaffold of each kind builds against
// the install, loads through ORRERY_PLUGIN_PATH, is listed by `orrery plugins` and runs its
// script. (That every SDK header compiles alone, and one built-in plugin of each kind without the
// precompiled header, is part of the build: tests/CMakeLists.txt.)
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include "support.h"

namespace fs = std::filesystem;

namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Orrery installed under DIR/prefix, then moved to DIR/moved: what every case starts from.
std::string moved_install(const std::string& dir) {
  const auto install = test::run_command(quoted(ORRERY_CMAKE) + " --install " + quoted(ORRERY_BUILD_DIR) + " --prefix " +
                                         quoted(dir + "/prefix"));
  INFO(install.output);
  REQUIRE(install.status == 0);
  fs::rename(dir + "/prefix", dir + "/moved");
  return dir + "/moved";
}

// `orrery ARGS` of the install at `prefix`, run in `cwd`, with `env` before it.
test::CommandResult installed(const std::string& prefix, const std::string& cwd, const std::string& args,
                              const std::string& env = "") {
  return test::run_command("cd " + quoted(cwd) + " && " + env + " " + quoted(prefix + "/bin/orrery") + " " + args);
}

}  // namespace

TEST_CASE("an install finds its plugins, scripts and assets relative to itself, wherever it is moved", "[slow]") {
  const std::string dir = test::temp_dir("sdk-install");
  const std::string prefix = moved_install(dir);
  for (const char* file : {"bin/orrery", "lib/liborrery_core.so", "lib/orrery-plugins/optim_adamw.so",
                           "include/orrery/plugin.h", "include/orrery/optimizer.h", "lib/cmake/Orrery/OrreryConfig.cmake",
                           "lib/cmake/Orrery/OrreryConfigVersion.cmake", "lib/cmake/Orrery/OrreryPlugin.cmake",
                           "share/orrery/scripts/quickstart.lua", "share/orrery/assets/data/manifest.json"}) {
    INFO(file);
    CHECK(fs::exists(prefix + "/" + file));
  }
  CHECK_FALSE(fs::exists(prefix + "/include/orrery/host"));  // the host's headers are not the SDK
  fs::create_directory(dir + "/elsewhere");
  const auto plugins = installed(prefix, dir + "/elsewhere", "plugins", "ORRERY_PLUGIN_PATH=");
  INFO(plugins.output);
  CHECK(plugins.status == 0);
  CHECK(plugins.output.find("from " + prefix + "/lib/orrery-plugins/optim_adamw.so") != std::string::npos);
  CHECK(plugins.output.find("warning") == std::string::npos);
  // Its own scripts by name, and the bundled benchmark by default, from a folder that has neither.
  const auto help = installed(prefix, dir + "/elsewhere", "run quickstart.lua --help");
  CHECK(help.status == 0);
  CHECK(help.output.find("usage: orrery run " + prefix + "/share/orrery/scripts/quickstart.lua") != std::string::npos);
  const auto eval = installed(prefix, dir + "/elsewhere", "eval --baselines naive --terms short");
  INFO(eval.output);
  CHECK(eval.status == 0);
  CHECK(eval.output.find("yearly (8)") != std::string::npos);  // the bundled benchmark's 25 configurations
  CHECK(eval.output.find("higher (5)") != std::string::npos);
}

TEST_CASE("orrery new plugin: each kind's scaffold builds against the install, loads, is listed and runs", "[slow]") {
  const std::string dir = test::temp_dir("sdk-scaffold");
  const std::string prefix = moved_install(dir);
  const std::string cmake = quoted(ORRERY_CMAKE), generator = "-G Ninja -DCMAKE_MAKE_PROGRAM=" + quoted(ORRERY_NINJA);
  for (const std::string kind : {"optimizer", "head", "architecture", "parametrisation", "data"}) {
    const std::string name = "my_" + kind, at = dir + "/" + name;
    INFO(kind);
    const auto made = installed(prefix, dir, "new plugin " + kind + " " + name);
    INFO(made.output);
    REQUIRE(made.status == 0);
    for (const std::string& file : std::vector<std::string>{name + ".cpp", name + ".lua", "CMakeLists.txt", "README.md"})
      CHECK(fs::exists(at + "/" + file));
    CHECK(test::read_text(at + "/CMakeLists.txt").find("find_package(Orrery REQUIRED)") != std::string::npos);
    CHECK(made.output.find("-DCMAKE_PREFIX_PATH=" + prefix) != std::string::npos);  // the install's own prefix
    const auto built = test::run_command(cmake + " -S " + quoted(at) + " -B " + quoted(at + "/build") + " " + generator +
                                         " -DCMAKE_PREFIX_PATH=" + quoted(prefix) + " && " + cmake + " --build " +
                                         quoted(at + "/build"));
    INFO(built.output);
    REQUIRE(built.status == 0);
    const std::string path = "ORRERY_PLUGIN_PATH=" + quoted(at + "/build");
    const auto listed = installed(prefix, dir, "plugins", path);
    INFO(listed.output);
    CHECK(listed.output.find(" " + name + " ") != std::string::npos);
    CHECK(listed.output.find("from " + at + "/build/") != std::string::npos);
    const auto ran = installed(prefix, dir, "run " + quoted(at + "/" + name + ".lua") + " steps=3", path + " OMP_NUM_THREADS=1");
    INFO(ran.output);
    CHECK(ran.status == 0);
    CHECK(ran.output.find("loss") != std::string::npos);
  }
  // A build of one's own shadows the built-in plugin of the same kind and name, and says so.
  const auto made = installed(prefix, dir, "new plugin optim adamw --dir mine");
  REQUIRE(made.status == 0);
  REQUIRE(test::run_command(cmake + " -S " + quoted(dir + "/mine") + " -B " + quoted(dir + "/mine/build") + " " + generator +
                            " -DCMAKE_PREFIX_PATH=" + quoted(prefix) + " && " + cmake + " --build " + quoted(dir + "/mine/build"))
              .status == 0);
  const auto shadowed = installed(prefix, dir, "plugins", "ORRERY_PLUGIN_PATH=" + quoted(dir + "/mine/build"));
  INFO(shadowed.output);
  CHECK(shadowed.output.find("from " + dir + "/mine/build/optim_adamw.so") != std::string::npos);
  CHECK(shadowed.output.find("skipped plugin " + prefix + "/lib/orrery-plugins/optim_adamw.so: optimizer 'adamw' is "
                             "already provided by " + dir + "/mine/build/optim_adamw.so") != std::string::npos);
  // Configured against another LibTorch, a plugin is refused before it is built, naming both.
  fs::create_directory(dir + "/other-torch");
  std::ofstream(dir + "/other-torch/TorchConfig.cmake") << "set(TORCH_LIBRARIES \"\")\n";
  std::ofstream(dir + "/other-torch/TorchConfigVersion.cmake")
      << "set(PACKAGE_VERSION \"9.9.9\")\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n";
  const auto other = test::run_command(cmake + " -S " + quoted(dir + "/mine") + " -B " + quoted(dir + "/mine/other") +
                                       " -DCMAKE_PREFIX_PATH=" + quoted(prefix) + " -DTorch_DIR=" + quoted(dir + "/other-torch"));
  INFO(other.output);
  CHECK(other.status != 0);
  const std::string said = std::regex_replace(other.output, std::regex("\\s+"), " ");  // CMake wraps its messages
  CHECK(said.find("was built with LibTorch " ORRERY_TORCH_VERSION) != std::string::npos);
  CHECK(said.find("but this project found LibTorch 9.9.9") != std::string::npos);
}

TEST_CASE("orrery new plugin refuses a folder that exists, a name that is not an identifier and an unknown kind") {
  const std::string dir = test::temp_dir("sdk-new-refused");
  fs::create_directory(dir + "/taken");
  std::ofstream(dir + "/taken/keep.txt") << "mine\n";
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"new plugin head taken", "new: taken already exists; nothing was written"},
           {"new plugin head x --dir taken", "new: taken already exists; nothing was written"},
           {"new plugin head 9lives", "new: plugin name \"9lives\" is not an identifier"},
           {"new plugin head my-head", "new: plugin name \"my-head\" is not an identifier"},
           {"new plugin optimiser x", "new: unknown plugin kind \"optimiser\" (did you mean 'optimizer'?)"},
           {"new plugin head", "new: give a kind and a name: orrery new plugin KIND NAME"},
           {"new plugin head x --dri y", "new: unknown option '--dri'"},
           {"new widget x y", "new: it makes plugins: orrery new plugin KIND NAME"}}) {
    const auto r = test::run_command("cd " + quoted(dir) + " && " + test::orrery_cmd(args));
    INFO(args << "\n" << r.output);
    CHECK(r.status == 1);
    CHECK(r.output.find(message) != std::string::npos);
  }
  CHECK(test::read_text(dir + "/taken/keep.txt") == "mine\n");  // never overwritten
  // The SDK from a C compiler, or a C++ one before C++20: one line that says what to do.
  std::ofstream(dir + "/plugin.c") << "#include \"orrery/plugin.h\"\n";
  const std::string include = " -fsyntax-only -I'" + std::string(ORRERY_SOURCE_DIR) + "/core/include' ";
  const auto c = test::run_command("cc" + include + "'" + dir + "/plugin.c'");
  CHECK(c.status != 0);
  CHECK(c.output.find("orrery/plugin.h is the C++ plugin SDK: compile the plugin as C++20") != std::string::npos);
  const auto cxx17 = test::run_command("c++ -std=c++17 -x c++" + include + "'" + dir + "/plugin.c'");
  CHECK(cxx17.status != 0);
  CHECK(cxx17.output.find("orrery/plugin.h needs C++20") != std::string::npos);
  CHECK_FALSE(fs::exists(dir + "/x"));
  const auto usage = test::run_command(test::orrery_cmd("new"));
  CHECK(usage.status == 2);
  CHECK(usage.output.find("usage: orrery new plugin KIND NAME [--dir DIR]") != std::string::npos);
}
