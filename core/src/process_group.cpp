#include "orrery/process_group.h"

#include <ATen/ATen.h>
#include <unistd.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "distributed/gloo_backend.h"
#include "orrery/error.h"

namespace orrery {

struct ProcessGroup::Impl {
  int rank = 0, size = 1;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> backend;

  // c10d's errors carry stack traces; the first line says what went wrong.
  [[noreturn]] void fail(const std::string& what, const std::exception& e) const {
    std::string m = e.what();
    m = m.substr(0, m.find('\n'));
    throw Error("rank " + std::to_string(rank) + " of " + std::to_string(size) + ": " + what + " failed: " + m);
  }
};

namespace {
// The address Gloo listens on: loopback for a job on one machine, else this machine's name.
std::string own_address(const LaunchEnv& env) {
  if (env.master_addr == "127.0.0.1" || env.master_addr == "localhost") return "127.0.0.1";
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) throw Error("cannot read this machine's host name for Gloo");
  return name;
}
}  // namespace

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProcessGroup::~ProcessGroup() = default;

std::unique_ptr<ProcessGroup> ProcessGroup::join(const LaunchEnv& env, std::chrono::milliseconds timeout) {
  auto impl = std::make_unique<Impl>();
  impl->rank = env.rank, impl->size = env.world_size;
  c10d::TCPStoreOptions o;
  o.port = static_cast<uint16_t>(env.master_port);
  o.isServer = env.rank == 0 && !env.agent_store;
  o.numWorkers = env.world_size;
  o.waitWorkers = true;  // every rank counts itself in (a client that does not is never counted)
  o.timeout = timeout;
  try {
    impl->store = c10::make_intrusive<c10d::PrefixStore>(
        "orrery", c10::make_intrusive<c10d::TCPStore>(env.master_addr, o));
  } catch (const std::exception& e) {
    impl->fail("the rendezvous at " + env.master_addr + ":" + std::to_string(env.master_port), e);
  }
  try {
    impl->backend = make_gloo_backend(impl->store, env.rank, env.world_size, timeout, own_address(env));
  } catch (const std::exception& e) {
    impl->fail("setting up Gloo", e);
  }
  return std::unique_ptr<ProcessGroup>(new ProcessGroup(std::move(impl)));
}

int ProcessGroup::rank() const { return impl_->rank; }
int ProcessGroup::size() const { return impl_->size; }

void ProcessGroup::all_reduce_mean(const std::vector<at::Tensor>& tensors) {
  if (tensors.empty()) return;
  std::vector<at::Tensor> flat;
  for (const auto& t : tensors) flat.push_back(t.reshape(-1));
  std::vector<at::Tensor> bucket{at::cat(flat)};
  try {
    impl_->backend->allreduce(bucket)->wait();
  } catch (const std::exception& e) {
    impl_->fail("all-reduce", e);
  }
  bucket[0].div_(impl_->size);
  int64_t at = 0;
  for (const auto& t : tensors) {
    t.view(-1).copy_(bucket[0].narrow(0, at, t.numel()));
    at += t.numel();
  }
}

void ProcessGroup::barrier() {
  try {
    impl_->backend->barrier()->wait();
  } catch (const std::exception& e) {
    impl_->fail("barrier", e);
  }
}

}  // namespace orrery
