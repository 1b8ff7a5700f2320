// `orrery launch -n N SCRIPT.lua`: a data-parallel job on this machine, as torchrun would start
// it. Nothing beyond torchrun's variables: each rank is `orrery run` reading its place from them.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "orrery/error.h"
#include "orrery/host/launch_env.h"

extern char** environ;

namespace orrery {
namespace {

const char* kLaunchUsage =
    "usage: orrery launch -n N [--port P] [--timeout S] SCRIPT.lua [--resume] [key=value ...]\n\n"
    "Runs `orrery run SCRIPT.lua ...` as N processes of one data-parallel job on this machine. Each\n"
    "gets the variables torchrun sets (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,\n"
    "MASTER_PORT); for several machines start `orrery run` with torchrun --no-python or srun\n"
    "instead. Every orrery.train of the script then trains on world x accumulate micro-batches a\n"
    "step; rank 0 prints and writes the run folder. Each rank gets cores / N LibTorch threads\n"
    "unless OMP_NUM_THREADS is set. When a rank fails, the others are stopped and launch exits\n"
    "with its status, naming it; Ctrl-C stops every rank after its step.\n"
    "--port P: the rendezvous port (default: a free one).\n"
    "--timeout S: seconds a rank waits for the others at a collective (ORRERY_DIST_TIMEOUT,\n"
    "default 600).\n";

// The ranks, for the signal handler that passes Ctrl-C and SIGTERM on to them: a handler can
// reach nothing else. Only this command's process sets it.
pid_t g_ranks[1024];
volatile sig_atomic_t g_rank_count = 0;
volatile sig_atomic_t g_stopping = 0;  // Ctrl-C or SIGTERM reached launch: statuses are expected

void pass_on(int signal) {
  for (sig_atomic_t i = 0; i < g_rank_count; ++i)
    if (g_ranks[i] > 0) kill(g_ranks[i], signal);
}

void stop_ranks(int signal) {
  g_stopping = 1;
  pass_on(signal);
}

// A wait status as an exit code: the code, or 128 + the signal.
int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

int cmd_launch(const std::vector<std::string>& args) {
  if (args.empty() || wants_help(args)) {
    std::fputs(kLaunchUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  int64_t n = 0, port = 0;
  std::string timeout;
  size_t i = 0;
  for (; i < args.size() && args[i].starts_with("-"); ++i) {
    const std::string& a = args[i];
    if (i + 1 >= args.size()) throw Error("launch: " + a + " needs a value (see orrery launch --help)");
    const std::string v = args[++i];
    if (a == "-n" || a == "--nproc") n = parse_whole_number("launch: " + a, v);
    else if (a == "--port") port = parse_whole_number("launch: --port", v);
    else if (a == "--timeout") timeout = v;
    else throw Error("launch: unknown flag '" + a + "' (see orrery launch --help)");
  }
  if (n < 1 || n > 1024) throw Error("launch: -n takes the number of processes, 1 to 1024 (see orrery launch --help)");
  if (port < 0 || port > 65535) throw Error("launch: --port " + std::to_string(port) + " is not a port");
  if (i >= args.size()) throw Error("launch: which script? (see orrery launch --help)");
  if (!timeout.empty()) {
    char* end = nullptr;
    const double s = std::strtod(timeout.c_str(), &end);
    if (end == timeout.c_str() || *end || !(s > 0))
      throw Error("launch: --timeout takes seconds above 0, got '" + timeout + "'");
  }
  std::vector<std::string> run{"run"};
  run.insert(run.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  return run_ranks(n, static_cast<int>(port), timeout, run);
}

int run_ranks(int64_t n, int port, const std::string& timeout, const std::vector<std::string>& orrery_args) {
  if (port == 0) port = free_local_port("launch: give one with --port");
  std::vector<std::string> argv_text{"orrery"};
  argv_text.insert(argv_text.end(), orrery_args.begin(), orrery_args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::string threads = std::to_string(std::max<int64_t>(1, cores / n));

  std::vector<pid_t> ranks;
  signal(SIGINT, stop_ranks);
  signal(SIGTERM, stop_ranks);
  for (int64_t r = 0; r < n; ++r) {
    std::vector<std::string> env{"RANK=" + std::to_string(r), "LOCAL_RANK=" + std::to_string(r),
                                 "WORLD_SIZE=" + std::to_string(n), "LOCAL_WORLD_SIZE=" + std::to_string(n),
                                 "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port),
                                 "ORRERY_LAUNCHER_PID=" + std::to_string(::getpid())};  // main.cpp: die with it
    if (!timeout.empty()) env.push_back("ORRERY_DIST_TIMEOUT=" + timeout);
    if (!std::getenv("OMP_NUM_THREADS")) env.push_back("OMP_NUM_THREADS=" + threads);
    for (char** e = environ; *e; ++e) {
      const std::string var = *e;
      const std::string name = var.substr(0, var.find('='));
      bool ours = false;
      for (const auto& o : env) ours = ours || o.compare(0, name.size() + 1, name + "=") == 0;
      if (!ours) env.push_back(var);
    }
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    if (const int err = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), envp.data())) {
      pass_on(SIGTERM);
      throw Error("launch: cannot start rank " + std::to_string(r) + ": " + std::strerror(err));
    }
    ranks.push_back(pid);
    g_ranks[r] = pid;
    g_rank_count = static_cast<sig_atomic_t>(r + 1);
  }

  // Wait for every rank; the first that fails stops the others. A rank blocked in a collective
  // notices a dead peer at once; one still running 30 s after the stop is killed.
  int first_failure = 0;
  std::chrono::steady_clock::time_point kill_at{};
  for (size_t left = ranks.size(); left > 0;) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, first_failure ? WNOHANG : 0);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) break;
    if (pid == 0) {
      if (std::chrono::steady_clock::now() >= kill_at) pass_on(SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    size_t r = 0;
    while (r < ranks.size() && ranks[r] != pid) ++r;
    if (r == ranks.size()) continue;
    g_ranks[r] = 0, --left;
    const int code = exit_code(status);
    if (code == 0 || first_failure) continue;
    first_failure = code;
    if (left == 0) break;
    // Stopped by Ctrl-C or SIGTERM, every rank has its signal already: a second one would make it
    // quit at once (lua_session.cpp), cutting the stop it is making.
    if (!g_stopping) {
      std::fprintf(stderr, "orrery launch: rank %zu exited with status %d; stopping the other ranks\n", r, code);
      pass_on(SIGTERM);
    }
    std::fflush(stderr);
    kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  }
  g_rank_count = 0;
  return first_failure;
}

}  // namespace orrery
