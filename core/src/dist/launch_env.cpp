#include "orrery/host/launch_env.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <cstdlib>

#include "orrery/error.h"

namespace orrery {
namespace {

// `repeat` accepts Slurm's "4(x2)" (4 tasks on each of 2 nodes) and reads its 4.
int integer(const std::function<const char*(const char*)>& lookup, const char* name, int fallback, int low,
            bool repeat = false) {
  const char* text = lookup(name);
  if (!text) return fallback;
  const std::string s = text;
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const bool whole = end == s.data() + s.size() || (repeat && *end == '(' && s.back() == ')');
  if (ec != std::errc() || !whole || v < low)
    throw Error("launch environment: " + std::string(name) + "='" + s + "' is not a whole number" +
                (low > 0 ? " of at least " + std::to_string(low) : " of 0 or more"));
  return v;
}

}  // namespace

int free_local_port(const std::string& hint) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error("cannot open a socket to find a free port (" + std::string(std::strerror(errno)) + "): " + hint);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  const int err = errno;
  close(fd);
  if (!ok) throw Error("cannot find a free port (" + std::string(std::strerror(err)) + "): " + hint);
  return ntohs(a.sin_port);
}

std::string first_slurm_host(const std::string& nodelist) {
  const size_t cut = nodelist.find_first_of(",[");
  if (cut == std::string::npos || nodelist[cut] == ',') return nodelist.substr(0, cut);
  // prefix[a-b,c]: the prefix and the first entry's first number, zero padding kept.
  const size_t close = nodelist.find(']', cut);
  if (close == std::string::npos) throw Error("launch environment: SLURM_JOB_NODELIST='" + nodelist + "' has no closing ]");
  const std::string first = nodelist.substr(cut + 1, nodelist.find_first_of(",-]", cut + 1) - cut - 1);
  return nodelist.substr(0, cut) + first;
}

LaunchEnv read_launch_env(const std::function<const char*(const char*)>& lookup) {
  LaunchEnv e;
  const bool torchrun = lookup("RANK") && lookup("WORLD_SIZE") && lookup("LOCAL_RANK");
  const bool slurm = !torchrun && lookup("SLURM_PROCID") && lookup("SLURM_NTASKS");
  if (torchrun) {
    e.launcher = "torchrun";
    e.rank = integer(lookup, "RANK", 0, 0), e.world_size = integer(lookup, "WORLD_SIZE", 1, 1);
    e.local_rank = integer(lookup, "LOCAL_RANK", 0, 0);
    e.local_world_size = integer(lookup, "LOCAL_WORLD_SIZE", e.world_size, 1);
    const char* agent = lookup("TORCHELASTIC_USE_AGENT_STORE");
    e.agent_store = agent && std::string(agent) == "True";
    e.restart = integer(lookup, "TORCHELASTIC_RESTART_COUNT", 0, 0);
  } else if (slurm) {
    e.launcher = "slurm";
    e.rank = integer(lookup, "SLURM_PROCID", 0, 0), e.world_size = integer(lookup, "SLURM_NTASKS", 1, 1);
    e.local_rank = integer(lookup, "SLURM_LOCALID", 0, 0);
    e.local_world_size = integer(lookup, "SLURM_NTASKS_PER_NODE", e.world_size, 1, true);
    if (const char* nodes = lookup("SLURM_JOB_NODELIST")) e.master_addr = first_slurm_host(nodes);
  } else {
    return e;
  }
  if (const char* addr = lookup("MASTER_ADDR")) e.master_addr = addr;
  e.master_port = integer(lookup, "MASTER_PORT", e.master_port, 1);
  if (const char* i = lookup("GLOO_SOCKET_IFNAME")) e.socket_interface = i;
  if (const char* t = lookup("ORRERY_DIST_TIMEOUT")) {
    char* end = nullptr;
    e.timeout_s = std::strtod(t, &end);
    if (end == t || *end || !(e.timeout_s > 0) || e.timeout_s > 1e6)
      throw Error(std::string("launch environment: ORRERY_DIST_TIMEOUT='") + t +
                  "' is not a number of seconds above 0 (and at most 1e6)");
  }
  if (e.master_port > 65535) throw Error("launch environment: MASTER_PORT=" + std::to_string(e.master_port) + " is not a port");
  const std::string who = e.launcher == "torchrun" ? "RANK" : "SLURM_PROCID";
  if (e.rank >= e.world_size)
    throw Error("launch environment: " + who + "=" + std::to_string(e.rank) + " is not below the world size " +
                std::to_string(e.world_size));
  if (e.local_rank >= e.local_world_size)
    throw Error("launch environment: the local rank " + std::to_string(e.local_rank) +
                " is not below the local world size " + std::to_string(e.local_world_size));
  return e;
}

}  // namespace orrery
