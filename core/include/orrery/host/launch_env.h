#pragma once
// Where this process sits in a job, read from the variables torchrun (`--no-python`) and Slurm
// (`srun`) set: rank, world size, local rank, and where rank 0's rendezvous store listens.
#include <functional>
#include <string>

namespace orrery {

struct LaunchEnv {
  int rank = 0, world_size = 1;
  int local_rank = 0, local_world_size = 1;  // among the processes of this machine
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  bool agent_store = false;  // torchrun's agent hosts the store; rank 0 must not serve one
  int restart = 0;           // torchrun's restart count: each attempt rendezvouses under its own keys
  // How long a rendezvous or a collective waits for the other ranks before it fails, naming
  // the rank that waited (ORRERY_DIST_TIMEOUT, seconds). Long enough for rank 0's validation
  // and checkpoints, which the others wait out at their next collective.
  double timeout_s = 600;
  // GLOO_SOCKET_IFNAME, as PyTorch reads it: the network interface Gloo binds ("eth0"), for
  // machines whose host name does not resolve to the address the others reach. Empty: the host
  // name's address (loopback for a job on one machine).
  std::string socket_interface;
  std::string launcher;      // "torchrun", "slurm", or empty for a single process
  bool distributed() const { return world_size > 1; }
};

// `lookup` reads one variable (nullptr when unset): getenv in the program, a table in tests.
// torchrun is recognised by RANK, WORLD_SIZE and LOCAL_RANK together, Slurm by SLURM_PROCID and
// SLURM_NTASKS; neither means one process. SLURM_NTASKS_PER_NODE may read "4(x2)". Malformed or inconsistent values are errors that
// name the variable.
LaunchEnv read_launch_env(const std::function<const char*(const char*)>& lookup);

// A TCP port on the loopback interface that nothing listens on now, as the kernel hands one out
// (bind to port 0). A job on this machine rendezvouses there; `hint` ends the error if none is free.
int free_local_port(const std::string& hint);

// The first host of a Slurm node list: "gpu[03-04,07],cpu1" -> "gpu03".
std::string first_slurm_host(const std::string& nodelist);

}  // namespace orrery
