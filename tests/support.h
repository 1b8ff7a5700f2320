#pragma once
// Helpers shared by the tests: small models through the real registry, command runs.
#include <ATen/ATen.h>

#include <array>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <cstdio>
#include <memory>
#include <string>

#include "orrery/host/model.h"
#include "temp_dir.h"
#include "orrery/host/registry.h"

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

inline std::string orrery_cmd(const std::string& args) {
  std::string cmd = "'";  // appended piecewise: GCC 12 warns falsely on literal + string chains
  cmd.append(ORRERY_BIN).append("' ").append(args);
  return cmd;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The orrery program running in the background, its output going to a file, so a test can
// wait for a line, send it a signal and time its exit.
class Background {
 public:
  Background(const std::vector<std::string>& args, const std::string& output) : output_(output) {
    std::vector<std::string> argv = {ORRERY_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    if (posix_spawn(&pid_, cargv[0], &files, nullptr, cargv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&files);
  }
  ~Background() {
    if (pid_ > 0 && !done_) kill(pid_, SIGKILL), waitpid(pid_, nullptr, 0);
  }
  // Waits up to `seconds` for `text` in the output.
  bool wait_for(const std::string& text, double seconds) const {
    for (auto end = clock::now() + to_duration(seconds); clock::now() < end;) {
      if (read_text(output_).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  void signal(int sig) const { kill(pid_, sig); }
  // Whether it has not exited yet (reaps it when it has; exit_status() then tells how).
  bool running() {
    if (done_) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
    done_ = true, status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -2;
    return false;
  }
  // Kills it with SIGKILL now and reaps it.
  void kill_now() {
    if (done_) return;
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    done_ = true, status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -2;
  }
  int exit_status() const { return status_; }
  // The exit status after at most `seconds` (-1: still running, then killed; -2: killed by a signal).
  int wait_exit(double seconds) {
    for (auto end = clock::now() + to_duration(seconds); clock::now() < end;) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        done_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }
  std::string output() const { return read_text(output_); }

 private:
  using clock = std::chrono::steady_clock;
  static clock::duration to_duration(double s) {
    return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(s));
  }
  std::string output_;
  pid_t pid_ = -1;
  bool done_ = false;
  int status_ = -1;
};

}  // namespace test
