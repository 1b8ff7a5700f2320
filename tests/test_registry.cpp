#include <catch2/catch.hpp>

#include <cstdlib>

#include <ATen/ATen.h>

#include "orrery/host/batch_queue.h"
#include "orrery/error.h"
#include "orrery/host/registry.h"

using orrery::PluginKind;
using orrery::Registry;

TEST_CASE("every built-in plugin loads") {
  Registry& r = Registry::global();
  CHECK(r.problems().empty());
  for (auto [kind, name] : {std::pair{PluginKind::architecture, "toto2"},
                            {PluginKind::architecture, "mlp"},
                            {PluginKind::head, "quantile"},
                            {PluginKind::head, "point"},
                            {PluginKind::optimizer, "adamw"},
                            {PluginKind::parametrisation, "sp"},
                            {PluginKind::data, "synthetic"},
                            {PluginKind::data, "observability"},
                            {PluginKind::data, "csv"}}) {
    INFO(name);
    const auto& p = r.find(kind, name);
    CHECK(p.factory != nullptr);
    CHECK(!p.description.empty());
  }
}

TEST_CASE("plugins built for another ABI or LibTorch are refused, naming the file and both versions") {
  Registry r;
  r.load_directory(ORRERY_TEST_PLUGIN_DIR);  // mismatched.so, other_torch.so (sorted)
  CHECK(r.plugins().empty());
  REQUIRE(r.problems().size() == 2);
  const std::string host = "this host has plugin ABI " + std::to_string(ORRERY_PLUGIN_ABI) +
                           " with LibTorch " + std::to_string(TORCH_VERSION_MAJOR) + "." +
                           std::to_string(TORCH_VERSION_MINOR) + ".";
  const std::string abi = r.problems()[0], torch = r.problems()[1];
  CHECK(abi.find(std::string(ORRERY_TEST_PLUGIN_DIR) + "/mismatched.so") != std::string::npos);
  CHECK(abi.find("built for plugin ABI 999 with LibTorch 1.13.0") != std::string::npos);
  CHECK(abi.find(host) != std::string::npos);
  CHECK(torch.find(std::string(ORRERY_TEST_PLUGIN_DIR) + "/other_torch.so") != std::string::npos);
  CHECK(torch.find("built for plugin ABI " + std::to_string(ORRERY_PLUGIN_ABI) + " with LibTorch " +
                   std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR + 1) +
                   ".0") != std::string::npos);
  CHECK(torch.find(host) != std::string::npos);
}

TEST_CASE("the mismatched plugin does not stop the others from loading") {
  Registry r;
  r.load_directory(ORRERY_TEST_PLUGIN_DIR);
  for (const auto& d : Registry::default_directories()) r.load_directory(d);
  CHECK(r.problems().size() == 2);
  CHECK(r.names(PluginKind::architecture) == std::vector<std::string>{"gpt", "mlp", "toto2"});
}

TEST_CASE("an unknown plugin name lists the available ones") {
  CHECK_THROWS_WITH(Registry::global().find(PluginKind::architecture, "toto3"),
                    Catch::Contains("unknown architecture plugin 'toto3'") &&
                        Catch::Contains("did you mean 'toto2'") &&
                        Catch::Contains("available: gpt, mlp, toto2"));
}

TEST_CASE("ORRERY_PLUGIN_PATH folders are searched before the built-in folder") {
  setenv("ORRERY_PLUGIN_PATH", "/first:/second", 1);
  auto dirs = Registry::default_directories();
  unsetenv("ORRERY_PLUGIN_PATH");
  REQUIRE(dirs.size() == 3);
  CHECK(dirs[0] == "/first");
  CHECK(dirs[1] == "/second");
  CHECK(dirs[2].find("orrery-plugins") != std::string::npos);
}

TEST_CASE("a second plugin with the same kind and name is skipped with a note") {
  Registry r;
  for (const auto& d : Registry::default_directories()) r.load_directory(d);
  const size_t n = r.plugins().size();
  for (const auto& d : Registry::default_directories()) r.load_directory(d);
  CHECK(r.plugins().size() == n);
  CHECK(r.problems().size() == n);
  CHECK(r.problems()[0].find("already provided by") != std::string::npos);
}

// A data source and an optimizer that throw what they are told to.
namespace {
enum class Throw { error, runtime, other };
void throw_as(Throw t) {
  if (t == Throw::error) throw orrery::Error("the plugin's own message");
  if (t == Throw::runtime) throw std::runtime_error("boom");
  throw 42;
}
struct ThrowingSource final : orrery::DataSource {
  Throw how;
  explicit ThrowingSource(Throw h) : how(h) {}
  orrery::Batch sample(const orrery::SampleRequest&) const override { throw_as(how), std::abort(); }
};
struct ThrowingOptimizer final : orrery::Optimizer {
  void step(const orrery::StepScalars&) override { throw_as(Throw::other); }
  double base_lr() const override { return 0; }
  orrery::NamedTensors state_tensors() const override { return {}; }
};
}  // namespace

TEST_CASE("what a data source or optimizer throws names its plugin, from any thread") {
  orrery::PluginInfo info;
  info.kind = PluginKind::data, info.name = "flaky", info.path = "/plugins/data_flaky.so";
  auto message = [&](Throw how) {
    auto source = orrery::guard_plugin(std::make_unique<ThrowingSource>(how), info);
    try {
      orrery::BatchQueue queue(*source, {1, 8, 0, 2, 2});  // drawn on a worker thread
      queue.next();
    } catch (const orrery::Error& e) {
      return std::string(e.what());
    }
    return std::string("nothing thrown");
  };
  CHECK(message(Throw::error) == "the plugin's own message");
  CHECK(message(Throw::runtime) == "data plugin 'flaky' (/plugins/data_flaky.so) failed: boom");
  CHECK(message(Throw::other) ==
        "data plugin 'flaky' (/plugins/data_flaky.so) failed: it threw an exception that is not a std::exception");
  info.kind = PluginKind::optimizer, info.name = "odd", info.path = "/plugins/optim_odd.so";
  auto opt = orrery::guard_plugin(std::make_unique<ThrowingOptimizer>(), info);
  CHECK_THROWS_WITH(opt->step({}), "optimizer plugin 'odd' (/plugins/optim_odd.so) failed: it threw an exception that "
                                   "is not a std::exception");
}
