#include "dashboard_process.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "orrery/error.h"
#include "orrery/host/program.h"

namespace orrery::ui {

long start_dashboard_process(const std::vector<std::string>& args, bool wait) {
  std::vector<std::string> argv = {orrery_program(), "ui"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, cargv[0], nullptr, &attr, cargv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (err) throw Error("cannot start " + argv[0] + ": " + std::strerror(err));
  if (!wait) {
    std::thread([pid] { waitpid(pid, nullptr, 0); }).detach();  // reaped when it closes
    return pid;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("the dashboard failed (" +
                std::string(WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status)) : "killed") +
                "); its message is above");
  return 0;
}

}  // namespace orrery::ui
