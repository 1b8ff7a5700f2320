// Data-parallel foundations: the launch environment of torchrun and Slurm, and a process group of
// two processes on Gloo (this test program starts itself again as rank 1).
#include <catch2/catch.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "orrery/host/gradient_sync.h"
#include "orrery/host/launch_env.h"
#include "orrery/host/metrics_bus.h"
#include "orrery/host/process_group.h"
#include "orrery/host/routed_optimizer.h"
#include "orrery/safetensors.h"
#include "orrery/host/trainer.h"
#include "orrery/host/zero.h"
#include "support.h"

namespace fs = std::filesystem;

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

orrery::LaunchEnv local_job(int rank, int port, double timeout_s = 20) {
  orrery::LaunchEnv e;
  e.timeout_s = timeout_s;
  e.rank = rank, e.world_size = 2, e.local_rank = rank, e.local_world_size = 2, e.master_port = port;
  e.launcher = "test";
  return e;
}

// Rank 1's port, as rank 0 passed it (start_rank1).
int rank1_port() {
  const char* p = std::getenv("ORRERY_TEST_PORT");
  REQUIRE(p);
  return std::atoi(p);
}

// A port nothing listens on. One derived from the process id could fall in the kernel's range
// for outgoing connections and be held by a concurrent test's Gloo pair: "address in use".
int free_port() { return orrery::free_local_port("the test needs one"); }

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

// The runs both ranks train, in this order: parametrisation, optimizer groups, graphed step.
struct Setup {
  const char* param;
  orrery::Json optimizer;
  bool graph;
  bool shard = false;  // ZeRO-1: each rank keeps state for its share (zero.h)
};
const std::vector<Setup>& setups() {
  static const std::vector<Setup> s = {
      {"sp", orrery::Json::array({{{"name", "adamw"}, {"options", {{"lr", 3e-3}}}}}), false},
      {"umup", orrery::Json::array({{{"name", "adamw"}, {"options", {{"lr", 3e-2}}}}}), false},
      {"sp",
       orrery::Json::array({{{"name", "normuon"}, {"options", {{"lr", 2e-2}}}, {"params", {{"role", "hidden"}}}},
                            {{"name", "adamw"}, {"options", {{"lr", 3e-3}}}}}),
       false},
      {"umup",
       orrery::Json::array({{{"name", "normuon"}, {"options", {{"lr", 5e-2}}}, {"params", {{"role", "hidden"}}}},
                            {{"name", "adamw"}, {"options", {{"lr", 3e-2}}}}}),
       false},
      // No hooks: every bucket reduced after the recorded backward.
      {"sp", orrery::Json::array({{{"name", "adamw"}, {"options", {{"lr", 3e-3}}}}}), true},
      // Sharded, against the unsharded single process.
      {"sp", orrery::Json::array({{{"name", "adamw"}, {"options", {{"lr", 3e-3}}}}}), false, true},
      {"umup",
       orrery::Json::array({{{"name", "normuon"}, {"options", {{"lr", 5e-2}}}, {"params", {{"role", "hidden"}}}},
                            {{"name", "adamw"}, {"options", {{"lr", 3e-2}}}}}),
       false, true},
  };
  return s;
}

struct Trained {
  at::Tensor weights;  // every parameter, flattened
  std::vector<double> losses;
  int64_t state_numel = 0;  // elements of optimizer state this process keeps
};

// 20 steps of the tiny toto2 with patch masking, micro-batches of 4 series x 128 steps.
Trained train_tiny(const Setup& s, orrery::ProcessGroup* world, int64_t accumulate) {
  auto& reg = orrery::Registry::global();
  orrery::ModelSpec spec = test::tiny_spec(5);
  spec.param = {s.param, orrery::Json::object()};
  orrery::Model model(spec, reg);
  auto data = reg.create<orrery::PluginKind::data>("synthetic", orrery::Json{{"seed", 5}}, orrery::DataContext{5});
  std::unique_ptr<orrery::Optimizer> owned;
  if (s.shard && world)
    owned = std::make_unique<orrery::ShardedOptimizer>(reg, orrery::optimizer_groups_from_json(s.optimizer),
                                                       model.params(), model.parametrisation(), *world);
  else
    owned = std::make_unique<orrery::RoutedOptimizer>(reg, orrery::optimizer_groups_from_json(s.optimizer),
                                                      model.params(), model.parametrisation());
  orrery::Optimizer& opt = *owned;
  orrery::TrainConfig cfg;
  cfg.steps = 20, cfg.batch_size = 4, cfg.accumulate = accumulate, cfg.context_length = 128, cfg.log_every = 1;
  cfg.quiet = true, cfg.graph = s.graph, cfg.data_workers = 0;
  orrery::MetricsBus bus;
  Trained t;
  bus.subscribe([&](const orrery::Json& e) {
    if (e["event"] == "train") t.losses.push_back(e["loss"]);
  });
  orrery::TrainHooks hooks;
  hooks.world = world;
  orrery::train(model, *data, opt, cfg, bus, nullptr, nullptr, hooks);
  std::vector<at::Tensor> flat;
  for (auto& p : model.params()) flat.push_back(p.tensor.detach().reshape(-1));
  t.weights = at::cat(flat);
  for (const auto& [name, tensor] : opt.state_tensors()) t.state_numel += tensor.numel();
  return t;
}

// The largest weight difference, relative to the largest weight.
double weight_gap(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max()).item<double>();
}

}  // namespace

TEST_CASE("torchrun's and Slurm's variables, and none", "[process]") {
  CHECK_FALSE(env_of({}).distributed());
  auto t = env_of({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"},
                   {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29400"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                   {"TORCHELASTIC_RESTART_COUNT", "2"}, {"ORRERY_DIST_TIMEOUT", "45.5"}});
  CHECK((t.restart == 2 && t.timeout_s == 45.5));
  CHECK(t.launcher == "torchrun");
  CHECK((t.rank == 3 && t.world_size == 8 && t.local_rank == 1 && t.local_world_size == 4));
  CHECK((t.master_addr == "node7" && t.master_port == 29400 && t.agent_store));
  auto s = env_of({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "6"}, {"SLURM_LOCALID", "2"},
                   {"SLURM_NTASKS_PER_NODE", "3(x2)"}, {"SLURM_JOB_NODELIST", "gpu[03-04,07],cpu1"}});
  CHECK((s.local_world_size == 3 && s.timeout_s == 600));
  CHECK(s.launcher == "slurm");
  CHECK((s.rank == 5 && s.world_size == 6 && s.local_rank == 2 && s.master_addr == "gpu03" && s.master_port == 29500));
  CHECK(orrery::first_slurm_host("cpu1,cpu2") == "cpu1");
  CHECK(orrery::first_slurm_host("n[1-4]") == "n1");
}

TEST_CASE("a malformed or inconsistent launch environment names the variable", "[process]") {
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
  auto g = orrery::ProcessGroup::join(local_job(1, rank1_port()));
  average_two_tensors(*g);
}

TEST_CASE("rank 1 that leaves before the collective", "[.rank1_leaves]") {
  auto g = orrery::ProcessGroup::join(local_job(1, rank1_port()));
  std::_Exit(0);
}

TEST_CASE("two processes average tensors through Gloo") {
  const int port = free_port();
  const pid_t child = start_rank1("[.rank1]", port);
  auto g = orrery::ProcessGroup::join(local_job(0, port));
  CHECK((g->rank() == 0 && g->size() == 2));
  average_two_tensors(*g);
  CHECK(exit_code(child) == 0);
}

TEST_CASE("a rank that leaves ends the collective with an error naming this rank, not a hang", "[process]") {
  const int port = free_port();
  const pid_t child = start_rank1("[.rank1_leaves]", port);
  auto g = orrery::ProcessGroup::join(local_job(0, port, 5));
  CHECK(exit_code(child) == 0);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(g->all_reduce_mean({at::ones({16})}), Catch::Contains("rank 0 of 2: all-reduce failed"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("a job whose other rank never comes fails the rendezvous within the timeout", "[process]") {
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(orrery::ProcessGroup::join(local_job(0, free_port(), 2)),
                    Catch::Contains("rank 0 of 2: the rendezvous at 127.0.0.1"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(8));
}

// Both ranks, two micro-batches: `a` is used by both (an unarmed backward, then the armed one),
// `b` by rank 1 only, `c` by none. Buckets of 8 bytes: several, started from the hooks.
void sync_gradients(orrery::ProcessGroup& g) {
  at::Tensor a = at::zeros({3}).requires_grad_(), b = at::zeros({2}).requires_grad_(), c = at::zeros({2}).requires_grad_();
  orrery::GradientSync sync(g, {a, b, c}, true, 8, 8);
  CHECK(sync.buckets() == 3);
  a.sum().backward();  // the first micro-batch: accumulated, not reduced
  sync.arm();
  at::Tensor loss = (a * static_cast<double>(g.rank() + 1)).sum() + (c * 0).sum().detach();
  if (g.rank() == 1) loss = loss + (b * 4).sum();
  loss.backward();
  sync.finish();
  CHECK(a.grad().eq(1 + 1.5).all().item<bool>());  // 1 + the mean of 1 and 2
  CHECK(b.grad().eq(2).all().item<bool>());        // the mean of none (0) and 4
  CHECK_FALSE(c.grad().defined());                 // no rank had one: none, as in one process
}

TEST_CASE("rank 1 of the gradient job", "[.rank1_sync]") {
  auto g = orrery::ProcessGroup::join(local_job(1, rank1_port()));
  sync_gradients(*g);
}

TEST_CASE("gradients are averaged from the hooks, with what earlier micro-batches accumulated") {
  const int port = free_port();
  const pid_t child = start_rank1("[.rank1_sync]", port);
  auto g = orrery::ProcessGroup::join(local_job(0, port));
  sync_gradients(*g);
  CHECK(exit_code(child) == 0);
}

TEST_CASE("rank 1 of the training job", "[.rank1_train]") {
  auto g = orrery::ProcessGroup::join(local_job(1, rank1_port()));
  for (const auto& s : setups()) train_tiny(s, g.get(), 1);
}

// The acceptance test: two processes with batch B each reach the weights of one process
// with the global batch 2B (here as 2 micro-batches of B: the same samples, trainer.h) after 20
// steps, under sp and umup, with AdamW and with NorMuon. What remains is the order of float sums
// (the mean of two gradients against the sum of two halves); the stated tolerance is 1e-4 of
// the largest weight, and a run on half the batch is far outside it.
TEST_CASE("two ranks with batch B train the weights one process trains with batch 2B", "[slow]") {
  const int port = free_port();
  const pid_t child = start_rank1("[.rank1_train]", port);
  auto g = orrery::ProcessGroup::join(local_job(0, port));
  std::vector<Trained> parallel;
  for (const auto& s : setups()) parallel.push_back(train_tiny(s, g.get(), 1));
  REQUIRE(exit_code(child) == 0);
  for (size_t i = 0; i < setups().size(); ++i) {
    const Setup& s = setups()[i];
    const Trained one = train_tiny(s, nullptr, 2), half = train_tiny(s, nullptr, 1);
    INFO(s.param << " " << s.optimizer.dump() << (s.graph ? " graphed" : ""));
    const double gap = weight_gap(parallel[i].weights, one.weights), off = weight_gap(half.weights, one.weights);
    INFO("weight gap " << gap << ", against batch B alone " << off);
    CHECK(gap < 1e-4);
    CHECK(off > 100 * 1e-4);
    REQUIRE(parallel[i].losses.size() == one.losses.size());
    for (size_t k = 0; k < one.losses.size(); ++k) CHECK(parallel[i].losses[k] == Approx(one.losses[k]).epsilon(1e-4));
    // A rank of a sharded pair keeps about half the state (shares are whole tensors).
    if (s.shard) {
      INFO("state elements: this rank " << parallel[i].state_numel << ", one process " << one.state_numel);
      CHECK(parallel[i].state_numel > 0);
      CHECK(parallel[i].state_numel < 0.6 * static_cast<double>(one.state_numel));
    } else {
      CHECK(parallel[i].state_numel == one.state_numel);
    }
  }
}

namespace {
// A small script of 12 steps; `extra` goes into its orrery.train call.
std::string parallel_script(const std::string& dir, const std::string& extra) {
  const std::string path = dir + "/dp.lua";
  std::ofstream(path) << "local w = orrery.world()\n"
                         "local model = orrery.model{arch = {'toto2', d_model = 32, num_layers = 2, num_heads = 2},\n"
                         "                           head = 'quantile', param = 'umup', seed = 1}\n"
                         "local run = orrery.train{model = model, data = {'synthetic', seed = 2}, steps = args.steps or 12,\n"
                         "  batch_size = 4, context_length = 128, log_every = 4, name = args.name or 'dp', checkpoint_every = 4,\n"
                         "  runs_dir = args.runs or 'runs',\n"
                         "  optimizer = {'adamw', lr = 1e-2}, " + extra + "}\n"
                         "print(string.format('rank %d of %d (%s): final %.9g world %d dir %s', w.rank, w.size,\n"
                         "                    w.launcher, run.final_loss, run.world_size, run.run_dir))\n";
  return path;
}
}  // namespace

TEST_CASE("orrery launch runs a script as two ranks: the run equals one process with twice the micro-batches", "[slow]") {
  const std::string dir = test::temp_dir("launch");
  parallel_script(dir, "accumulate = args.accumulate or 1");
  const auto two = test::run_command("cd '" + dir + "' && " + test::orrery_cmd("launch -n 2 dp.lua"));
  INFO(two.output);
  REQUIRE(two.status == 0);
  CHECK_THAT(two.output, Catch::Contains("2 processes, writing runs/dp"));
  CHECK_THAT(two.output, Catch::Contains("rank 0 of 2 (torchrun)"));
  CHECK_THAT(two.output, Catch::Contains("rank 1 of 2 (torchrun)"));
  // One LibTorch thread, as launch gives each rank of two on two cores: the same float sums.
  const auto one = test::run_command("cd '" + dir + "' && OMP_NUM_THREADS=1 " +
                                     test::orrery_cmd("run dp.lua accumulate=2 name=one"));
  INFO(one.output);
  REQUIRE(one.status == 0);
  CHECK_THAT(one.output, Catch::Contains("rank 0 of 1 (none)"));
  // The same final loss to the last printed digit; rank 1 reports rank 0's folder.
  const auto final_of = [](const std::string& out, const std::string& who) {
    const size_t at = out.find(who);
    return at == std::string::npos ? std::string() : out.substr(out.find("final", at), 22);
  };
  CHECK(final_of(two.output, "rank 0 of 2") == final_of(one.output, "rank 0 of 1"));
  CHECK(final_of(two.output, "rank 1 of 2") == final_of(one.output, "rank 0 of 1"));
  CHECK_THAT(two.output, Catch::Contains("world 2 dir runs/dp\n"));
  CHECK(test::read_text(dir + "/runs/dp/config.json").find("\"world_size\": 2") != std::string::npos);
  // Resuming at another split of the same micro-batches is allowed; another global batch is not.
  const auto resumed = test::run_command("cd '" + dir + "' && " + test::orrery_cmd("run dp.lua --resume accumulate=2"));
  CHECK(resumed.status == 0);
  CHECK_THAT(resumed.output, Catch::Contains("finished before"));
  const auto other = test::run_command("cd '" + dir + "' && " + test::orrery_cmd("run dp.lua --resume accumulate=1"));
  CHECK(other.status == 1);
  CHECK_THAT(other.output, Catch::Contains("the micro-batches of a step (accumulate x world size) were 2, now 1"));
}

TEST_CASE("a rank that fails takes the job down, naming it, and the run folder stays intact", "[process]") {
  const std::string dir = test::temp_dir("launch-fail");
  parallel_script(dir, "on_step = function(ev) if w.rank == 1 and ev.step >= 8 then os.exit(3) end end");
  const auto start = std::chrono::steady_clock::now();
  const auto r = test::run_command("cd '" + dir + "' && " + test::orrery_cmd("launch -n 2 --timeout 20 dp.lua"));
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK_THAT(r.output, Catch::Contains("orrery launch: rank 1 exited with status 3; stopping the other ranks"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  // Rank 0 wrote its checkpoints before and a summary with the error; resuming goes on from step 8.
  CHECK(test::read_text(dir + "/runs/dp/summary.json").find("\"error\"") != std::string::npos);
  parallel_script(dir, "");
  const auto resumed = test::run_command("cd '" + dir + "' && " + test::orrery_cmd("launch -n 2 dp.lua --resume"));
  INFO(resumed.output);
  CHECK(resumed.status == 0);
  CHECK_THAT(resumed.output, Catch::Contains("resuming at step 8/12"));
}

TEST_CASE("orrery launch refuses bad flags by name", "[process]") {
  CHECK_THAT(test::run_command(test::orrery_cmd("launch -n 0 x.lua")).output, Catch::Contains("-n takes the number of processes"));
  CHECK_THAT(test::run_command(test::orrery_cmd("launch -n 2 --timeout soon x.lua")).output,
             Catch::Contains("--timeout takes seconds above 0, got 'soon'"));
  CHECK_THAT(test::run_command(test::orrery_cmd("launch -n 2 --nprocs 2 x.lua")).output, Catch::Contains("unknown flag '--nprocs'"));
  CHECK_THAT(test::run_command(test::orrery_cmd("launch -n 2")).output, Catch::Contains("which script?"));
  CHECK_THAT(test::run_command(test::orrery_cmd("bench train --nproc 2 --graph on")).output,
             Catch::Contains("--nproc times the eager step"));
}

TEST_CASE("shard_files gives each rank every world-th file, and refuses fewer files than ranks", "[process]") {
  const std::string dir = test::temp_dir("launch-shard");
  for (const char* f : {"co2", "lynx", "nile"})
    std::filesystem::copy_file(std::string(ORRERY_SOURCE_DIR) + "/assets/data/" + f + ".csv", dir + "/" + f + ".csv");
  std::ofstream(dir + "/shard.lua")
      << "local d = orrery.data{'csv', files = args.files, shard_files = true, timestamp_format = 'year'}\n"
         "local names = {}\n"
         "for _, f in ipairs(d:describe().files) do names[#names + 1] = f:match('([^/]+)$') end\n"
         "print(string.format('rank %d reads %s', orrery.world().rank, table.concat(names, ',')))\n";
  const auto r = test::run_command("cd '" + dir + "' && " + test::orrery_cmd("launch -n 2 shard.lua files=*.csv"));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("rank 0 reads co2.csv,nile.csv"));
  CHECK_THAT(r.output, Catch::Contains("rank 1 reads lynx.csv"));
  const auto alone = test::run_command("cd '" + dir + "' && " + test::orrery_cmd("run shard.lua files=*.csv"));
  CHECK_THAT(alone.output, Catch::Contains("rank 0 reads co2.csv,lynx.csv,nile.csv"));
  const auto few = test::run_command("cd '" + dir + "' && " + test::orrery_cmd("launch -n 2 shard.lua files=nile.csv"));
  CHECK(few.status == 1);
  CHECK_THAT(few.output, Catch::Contains("shard_files gives each of the 2 ranks its own files, but there are only 1"));
}

TEST_CASE("a sharded optimizer's checkpoint holds the whole state: resumed by two ranks or by one process, "
          "the run goes on as if never stopped", "[slow]") {
  const std::string dir = test::temp_dir("launch-zero");
  // `stop=8`: every rank exits at step 8's log line, before its checkpoint: the newest is step 4's.
  parallel_script(dir, "shard_optimizer = true, accumulate = args.accumulate or 1, "
                       "on_step = function(ev) if args.stop and ev.step >= args.stop then os.exit(5) end end");
  const auto run = [&](const std::string& how, const std::string& args, bool ok = true) {
    const auto r = test::run_command("cd '" + dir + "' && OMP_NUM_THREADS=1 " + test::orrery_cmd(how + " dp.lua " + args));
    INFO(r.output);
    CHECK((r.status == 0) == ok);
    const size_t at = r.output.find("rank 0 of");
    return at == std::string::npos ? std::string() : r.output.substr(r.output.find("final", at), 16);
  };
  const std::string straight = run("launch -n 2", "name=straight");
  CHECK(straight.size() == 16);
  run("launch -n 2", "name=halves stop=8", false);
  CHECK(run("launch -n 2", "name=halves --resume") == straight);
  // The same kind of checkpoint, resumed by one process with the same micro-batches (accumulate 2).
  run("launch -n 2", "name=alone stop=8", false);
  CHECK(run("run", "name=alone --resume accumulate=2") == straight);
  // The gathered state is the unsharded optimizer's: the single process's checkpoint of the same
  // step holds the same tensors, bit for bit, and the same counters.
  const std::string step12 = "/checkpoints/step-000000012/optimizer.safetensors";
  const auto gathered = orrery::load_safetensors(dir + "/runs/straight" + step12);
  const auto single = orrery::load_safetensors(dir + "/runs/alone" + step12);
  CHECK(gathered.metadata == single.metadata);
  REQUIRE(gathered.tensors.size() == single.tensors.size());
  CHECK(gathered.tensors.size() > 10);
  std::map<std::string, at::Tensor> by_name(single.tensors.begin(), single.tensors.end());
  for (const auto& [name, t] : gathered.tensors) {
    INFO(name);
    REQUIRE(by_name.count(name));
    CHECK(at::equal(t, by_name.at(name)));
  }
}

namespace {
// A shell command starting `orrery run ARGS` as rank `rank` of `world` on this machine, with
// torchrun's variables set by hand (so ranks can be given wrong ones) and a 10 s timeout.
std::string as_rank(int rank, int world, int port, const std::string& args) {
  const std::string r = std::to_string(rank), w = std::to_string(world);
  return "RANK=" + r + " LOCAL_RANK=" + r + " WORLD_SIZE=" + w + " LOCAL_WORLD_SIZE=" + w +
         " MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) + " ORRERY_DIST_TIMEOUT=10 OMP_NUM_THREADS=1 " +
         test::orrery_cmd("run " + args);
}

// The processes whose command line holds `needle` (ranks are started as "orrery run ..."), from /proc.
int processes_with(const std::string& needle) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = test::read_text(e.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    n += cmdline.find(needle) != std::string::npos;
  }
  return n;
}
}  // namespace

TEST_CASE("the ranks of an orrery launch killed with -9 stop too, freeing the run folder", "[process]") {
  const std::string dir = test::temp_dir("launch-kill9");
  parallel_script(dir, "");
  const std::string script = dir + "/dp.lua";
  // Before: both ranks trained on as orphans, and a relaunch found the run folder "in use".
  test::Background launch({"launch", "-n", "2", script, "steps=100000", "name=orphans", "runs=" + dir + "/runs"},
                          dir + "/launch.log");
  REQUIRE(launch.wait_for("writing", 60));
  REQUIRE(processes_with(script) == 3);  // the launcher and its two ranks
  launch.kill_now();
  bool gone = false;
  for (int i = 0; i < 600 && !gone; ++i) {
    gone = processes_with(script) == 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(gone);
  const std::string summary = test::read_text(dir + "/runs/orphans/summary.json");
  CHECK(summary.find("\"interrupted\": true") != std::string::npos);  // stopped after a step, summary written
}

TEST_CASE("ranks that disagree are named at the rendezvous or the run's start, not left to time out", "[process][slow]") {
  const std::string dir = test::temp_dir("dp-disagree");
  // The job stays up a few seconds, so that a late duplicate still finds it.
  std::ofstream(dir + "/hello.lua") << "print('rank ' .. orrery.world().rank .. ' joined'); os.execute('sleep 4')\n";
  parallel_script(dir, "");
  const int port = free_port();
  const auto in = [&](const std::string& line) { return test::run_command("cd '" + dir + "' && " + line); };
  // Two processes given RANK=1 (before: raw c10d text, or a Gloo timeout).
  const auto twice = in("(" + as_rank(0, 2, port, "hello.lua") + " & " + as_rank(1, 2, port, "hello.lua") + " & " +
                        as_rank(1, 2, port, "hello.lua") + " & wait)");
  INFO(twice.output);
  CHECK_THAT(twice.output, Catch::Contains("another process already joined as rank 1 (two processes given RANK=1?)"));
  // Another world size.
  const int port2 = free_port();
  const auto sizes = in("(" + as_rank(0, 2, port2, "hello.lua") + " & " + as_rank(1, 3, port2, "hello.lua") + " & wait)");
  INFO(sizes.output);
  CHECK_THAT(sizes.output, Catch::Contains("was started with WORLD_SIZE=3, rank 0 with 2: every rank of a job must be "
                                           "given the same world size"));
  // Another run: the same script with other arguments.
  const int port3 = free_port();
  const auto runs = in("(" + as_rank(0, 2, port3, "dp.lua steps=10") + " & " + as_rank(1, 2, port3, "dp.lua steps=12") +
                       " & wait)");
  INFO(runs.output);
  CHECK_THAT(runs.output, Catch::Contains("rank 1 asks for another run than rank 0 (train.steps is 10 on rank 0, 12 on "
                                          "rank 1): every rank must run the same script with the same arguments"));
  CHECK_THAT(runs.output, Catch::Contains("rank 0 could not start the run: rank 1 asks for another run"));
}

TEST_CASE("a hung rank is named by the rank that timed out waiting for it", "[process][slow]") {
  const std::string dir = test::temp_dir("dp-hung");
  // Rank 1 stops answering after step 8 (a sleep standing for a hang); rank 0 waits 10 s.
  parallel_script(dir, "on_step = function(ev) if w.rank == 1 and ev.step >= 8 and not slept then slept = true; "
                       "os.execute('sleep 15') end end");
  const auto r = test::run_command("cd '" + dir + "' && " + test::orrery_cmd("launch -n 2 --timeout 10 dp.lua steps=40"));
  INFO(r.output);
  CHECK(r.status != 0);
  // Before: Gloo's "Timed out waiting 10000ms for recv", and the launcher blamed rank 0.
  CHECK_THAT(r.output, Catch::Contains("rank 0 of 2: all-reduce failed"));
  CHECK_THAT(r.output, Catch::Contains("where the ranks were: rank 0 starting step"));
  CHECK_THAT(r.output, Catch::Contains(": rank 1 fell behind (hung, slow or stopped)"));
}
