#pragma once
// Helpers shared by the tests: small models through the real registry, command runs.
#include <ATen/ATen.h>

#include <array>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "orrery/model.h"
#include "orrery/registry.h"

namespace test {

inline orrery::ModelSpec tiny_spec(uint64_t seed = 0) {
  orrery::ModelSpec s;
  s.arch = {"toto2", {{"d_model", 32}, {"num_layers", 2}, {"num_heads", 2}}};
  s.head = {"quantile", orrery::Json::object()};
  s.param = {"sp", orrery::Json::object()};
  s.seed = seed;
  return s;
}

inline std::unique_ptr<orrery::Model> tiny_model(uint64_t seed = 0) {
  return std::make_unique<orrery::Model>(tiny_spec(seed), orrery::Registry::global());
}

struct CommandResult {
  int status;
  std::string output;  // stdout and stderr together
};

inline CommandResult run_command(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf;
  while (p && fgets(buf.data(), buf.size(), p)) out += buf.data();
  int status = p ? pclose(p) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

inline std::string temp_dir(const std::string& name) {
  std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                    "/orrery-test-" + name + "-" + std::to_string(::getpid());
  std::string cmd = "rm -rf '" + dir + "' && mkdir -p '" + dir + "'";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("cannot create " + dir);
  return dir;
}

}  // namespace test
