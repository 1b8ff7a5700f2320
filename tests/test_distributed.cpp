// Data-parallel foundations: the launch environment of torchrun and Slurm, and a process group of
// two processes on Gloo (this test program starts itself again as rank 1).
#include <catch2/catch.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ATen/ATen.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>

#include "orrery/launch_env.h"
#include "orrery/process_group.h"

extern char** environ;

namespace {

orrery::LaunchEnv env_of(const std::map<std::string, std::string>& vars) {
  return orrery::read_launch_env([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

// This program again, running only the test case `name` as rank 1 of a job on `port`.
pid_t start_rank1(const std::string& name, int port) {
  const std::string self = "/proc/self/exe";
  std::vector<std::string> env{"ORRERY_TEST_PORT=" + std::to_string(port)};
  for (char** e = environ; *e; ++e) env.push_back(*e);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string arg0 = self, arg1 = name;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()) == 0);
  return pid;
}

int exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

orrery::LaunchEnv local_job(int rank, int port) {
  orrery::LaunchEnv e;
  e.rank = rank, e.world_size = 2, e.local_rank = rank, e.local_world_size = 2, e.master_port = port;
  e.launcher = "test";
  return e;
}

int test_port() {
  if (const char* p = std::getenv("ORRERY_TEST_PORT")) return std::atoi(p);
  return 20000 + static_cast<int>(getpid() % 20000);
}

// Both ranks: rank r contributes r + 1 everywhere; the mean of 1 and 2 is 1.5.
void average_two_tensors(orrery::ProcessGroup& g) {
  const float mine = static_cast<float>(g.rank() + 1);
  at::Tensor a = at::full({1000}, mine), b = at::full({3, 4}, 10 * mine);
  g.all_reduce_mean({a, b});
  CHECK(a.eq(1.5f).all().item<bool>());
  CHECK(b.eq(15.0f).all().item<bool>());
  CHECK(b.sizes() == at::IntArrayRef({3, 4}));
  g.barrier();
}

}  // namespace

TEST_CASE("torchrun's and Slurm's variables, and none") {
  CHECK_FALSE(env_of({}).distributed());
  auto t = env_of({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"},
                   {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29400"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"}});
  CHECK(t.launcher == "torchrun");
  CHECK((t.rank == 3 && t.world_size == 8 && t.local_rank == 1 && t.local_world_size == 4));
  CHECK((t.master_addr == "node7" && t.master_port == 29400 && t.agent_store));
  auto s = env_of({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "6"}, {"SLURM_LOCALID", "2"},
                   {"SLURM_NTASKS_PER_NODE", "3"}, {"SLURM_JOB_NODELIST", "gpu[03-04,07],cpu1"}});
  CHECK(s.launcher == "slurm");
  CHECK((s.rank == 5 && s.world_size == 6 && s.local_rank == 2 && s.master_addr == "gpu03" && s.master_port == 29500));
  CHECK(orrery::first_slurm_host("cpu1,cpu2") == "cpu1");
  CHECK(orrery::first_slurm_host("n[1-4]") == "n1");
}

TEST_CASE("a malformed or inconsistent launch environment names the variable") {
  CHECK_THROWS_WITH(env_of({{"RANK", "x"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}}), Catch::Contains("RANK='x'"));
  CHECK_THROWS_WITH(env_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}}),
                    Catch::Contains("RANK=2 is not below the world size 2"));
  CHECK_THROWS_WITH(env_of({{"RANK", "0"}, {"WORLD_SIZE", "0"}, {"LOCAL_RANK", "0"}}), Catch::Contains("WORLD_SIZE='0'"));
  CHECK_THROWS_WITH(env_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}, {"MASTER_PORT", "70000"}}),
                    Catch::Contains("MASTER_PORT=70000"));
  CHECK_THROWS_WITH(env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NODELIST", "n[1-2"}}),
                    Catch::Contains("SLURM_JOB_NODELIST"));
}

TEST_CASE("rank 1 of the two-process job", "[.rank1]") {
  auto g = orrery::ProcessGroup::join(local_job(1, test_port()), std::chrono::seconds(20));
  average_two_tensors(*g);
}

TEST_CASE("rank 1 that leaves before the collective", "[.rank1_leaves]") {
  auto g = orrery::ProcessGroup::join(local_job(1, test_port()), std::chrono::seconds(20));
  std::_Exit(0);
}

TEST_CASE("two processes average tensors through Gloo") {
  const int port = test_port();
  const pid_t child = start_rank1("[.rank1]", port);
  auto g = orrery::ProcessGroup::join(local_job(0, port), std::chrono::seconds(20));
  CHECK((g->rank() == 0 && g->size() == 2));
  average_two_tensors(*g);
  CHECK(exit_code(child) == 0);
}

TEST_CASE("a rank that leaves ends the collective with an error naming this rank, not a hang") {
  const int port = test_port() + 1;
  const pid_t child = start_rank1("[.rank1_leaves]", port);
  auto g = orrery::ProcessGroup::join(local_job(0, port), std::chrono::seconds(5));
  CHECK(exit_code(child) == 0);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(g->all_reduce_mean({at::ones({16})}), Catch::Contains("rank 0 of 2: all-reduce failed"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("a job whose other rank never comes fails the rendezvous within the timeout") {
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(orrery::ProcessGroup::join(local_job(0, test_port() + 2), std::chrono::seconds(2)),
                    Catch::Contains("rank 0 of 2: the rendezvous at 127.0.0.1"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(8));
}
