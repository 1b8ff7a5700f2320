#include "orrery/host/process_group.h"

#include <ATen/ATen.h>
#include <ATen/DeviceAccelerator.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <unistd.h>

#include "backends/gloo_backend.h"
#include "backends/nccl_backend.h"
#include "orrery/error.h"

namespace orrery {

struct ProcessGroup::Impl {
  LaunchEnv env;
  int rank = 0, size = 1;
  int64_t shared = 0;  // share() calls so far: the key of the next
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> backend;         // Gloo: CPU tensors (and GPU ones without NCCL)
  c10::intrusive_ptr<c10d::Backend> device_backend;  // NCCL for GPU tensors, when built and present
  c10d::Backend& for_tensor(const at::Tensor& t) const {
    return t.is_cuda() && device_backend ? *device_backend : *backend;
  }

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

std::unique_ptr<ProcessGroup> ProcessGroup::join(const LaunchEnv& env) {
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(env.timeout_s * 1000));
  auto impl = std::make_unique<Impl>();
  impl->env = env;
  impl->rank = env.rank, impl->size = env.world_size;
  c10d::TCPStoreOptions o;
  o.port = static_cast<uint16_t>(env.master_port);
  o.isServer = env.rank == 0 && !env.agent_store;
  o.numWorkers = env.world_size;
  o.waitWorkers = true;  // every rank counts itself in (a client that does not is never counted)
  o.timeout = timeout;
  // Each rank takes its machine's local_rank-th GPU, when there is one for it (CPU training
  // may start more ranks than a machine has GPUs).
  const bool device = at::accelerator::getAccelerator(false) && env.local_rank < at::accelerator::deviceCount();
  if (device) at::accelerator::setDeviceIndex(static_cast<c10::DeviceIndex>(env.local_rank));
  try {
    // Each torchrun attempt under keys of its own: an agent's store outlives the attempts.
    impl->store = c10::make_intrusive<c10d::PrefixStore>(
        "orrery/attempt_" + std::to_string(env.restart), c10::make_intrusive<c10d::TCPStore>(env.master_addr, o));
  } catch (const std::exception& e) {
    // An sbatch script with several tasks sets Slurm's variables without srun starting the tasks.
    impl->fail("the rendezvous at " + env.master_addr + ":" + std::to_string(env.master_port) +
                   (env.launcher == "slurm" ? " (under Slurm, start every rank with srun)" : ""),
               e);
  }
  try {
    impl->backend = make_gloo_backend(c10::make_intrusive<c10d::PrefixStore>("gloo", impl->store), env.rank,
                                      env.world_size, timeout, own_address(env), env.socket_interface);
  } catch (const std::exception& e) {
    impl->fail("setting up Gloo", e);
  }
  // GPU tensors through NCCL, on this rank's GPU.
  if (device && at::accelerator::getAccelerator(false) == c10::DeviceType::CUDA) try {
      impl->device_backend = make_nccl_backend(c10::make_intrusive<c10d::PrefixStore>("nccl", impl->store), env.rank,
                                               env.world_size, timeout);
    } catch (const std::exception& e) {
      impl->fail("setting up NCCL", e);
    }
  return std::unique_ptr<ProcessGroup>(new ProcessGroup(std::move(impl)));
}

int ProcessGroup::rank() const { return impl_->rank; }
int ProcessGroup::size() const { return impl_->size; }
const LaunchEnv& ProcessGroup::env() const { return impl_->env; }

struct ProcessGroup::Pending::Impl {
  c10::intrusive_ptr<c10d::Work> work;
  const ProcessGroup::Impl* group = nullptr;
};
ProcessGroup::Pending::Pending() = default;
ProcessGroup::Pending::~Pending() = default;
ProcessGroup::Pending::Pending(Pending&&) noexcept = default;
ProcessGroup::Pending& ProcessGroup::Pending::operator=(Pending&&) noexcept = default;

void ProcessGroup::Pending::wait() {
  if (!impl_ || !impl_->work) return;
  auto work = std::move(impl_->work);
  try {
    work->wait();
  } catch (const std::exception& e) {
    impl_->group->fail("all-reduce", e);
  }
}

ProcessGroup::Pending ProcessGroup::start_sum(const at::Tensor& flat) {
  Pending p;
  p.impl_ = std::make_unique<Pending::Impl>();
  p.impl_->group = impl_.get();
  std::vector<at::Tensor> one{flat};
  try {
    p.impl_->work = impl_->for_tensor(flat).allreduce(one);
  } catch (const std::exception& e) {
    impl_->fail("all-reduce", e);
  }
  return p;
}

namespace {
at::Tensor flatten(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> flat;
  for (const auto& t : tensors) flat.push_back(t.reshape(-1));
  return at::cat(flat);
}
void unflatten(const at::Tensor& bucket, const std::vector<at::Tensor>& tensors) {
  int64_t at = 0;
  for (const auto& t : tensors) {
    t.view(-1).copy_(bucket.narrow(0, at, t.numel()));
    at += t.numel();
  }
}
}  // namespace

void ProcessGroup::all_reduce_sum(const std::vector<at::Tensor>& tensors) {
  if (tensors.empty()) return;
  at::Tensor bucket = flatten(tensors);
  start_sum(bucket).wait();
  unflatten(bucket, tensors);
}

void ProcessGroup::all_reduce_mean(const std::vector<at::Tensor>& tensors) {
  if (tensors.empty()) return;
  at::Tensor bucket = flatten(tensors);
  start_sum(bucket).wait();
  bucket.div_(impl_->size);
  unflatten(bucket, tensors);
}

void ProcessGroup::broadcast(const std::vector<at::Tensor>& tensors, int root) {
  if (tensors.empty()) return;
  std::vector<at::Tensor> bucket{flatten(tensors)};
  c10d::BroadcastOptions o;
  o.rootRank = root;
  try {
    impl_->for_tensor(bucket[0]).broadcast(bucket, o)->wait();
  } catch (const std::exception& e) {
    impl_->fail("broadcast", e);
  }
  unflatten(bucket[0], tensors);
}

std::string ProcessGroup::share(const std::string& text) {
  const std::string key = "share/" + std::to_string(impl_->shared++);
  try {
    if (impl_->rank == 0) {
      impl_->store->set(key, std::vector<uint8_t>(text.begin(), text.end()));
      return text;
    }
    const std::vector<uint8_t> got = impl_->store->get(key);
    return std::string(got.begin(), got.end());
  } catch (const std::exception& e) {
    impl_->fail("waiting for rank 0 (it may have failed first: see its error)", e);
  }
}

std::vector<std::string> ProcessGroup::gather_text(const std::string& text) {
  const std::string key = "gather/" + std::to_string(impl_->shared++) + "/";
  std::vector<std::string> out;
  try {
    impl_->store->set(key + std::to_string(impl_->rank), std::vector<uint8_t>(text.begin(), text.end()));
    if (impl_->rank == 0)
      for (int r = 0; r < impl_->size; ++r) {
        const std::vector<uint8_t> got = impl_->store->get(key + std::to_string(r));
        out.emplace_back(got.begin(), got.end());
      }
  } catch (const std::exception& e) {
    impl_->fail("gathering the ranks' values through the store", e);
  }
  return out;
}

std::vector<at::Tensor> ProcessGroup::gather(const at::Tensor& mine) {
  std::vector<at::Tensor> input{mine.contiguous()};
  std::vector<std::vector<at::Tensor>> output;
  if (impl_->rank == 0) {
    output.emplace_back();
    for (int r = 0; r < impl_->size; ++r) output.back().push_back(at::empty_like(input[0]));
  }
  c10d::GatherOptions o;
  o.rootRank = 0;
  try {
    impl_->for_tensor(input[0]).gather(output, input, o)->wait();
  } catch (const std::exception& e) {
    impl_->fail("gather", e);
  }
  return output.empty() ? std::vector<at::Tensor>{} : output.front();
}

void ProcessGroup::barrier() {
  try {
    impl_->backend->barrier()->wait();
  } catch (const std::exception& e) {
    impl_->fail("barrier", e);
  }
}

}  // namespace orrery
