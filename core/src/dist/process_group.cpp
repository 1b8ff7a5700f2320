#include "orrery/host/process_group.h"

#include <ATen/ATen.h>
#include <ATen/DeviceAccelerator.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "backends/gloo_backend.h"
#include "backends/nccl_backend.h"
#include "orrery/error.h"
#include "orrery/json.h"

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

  // c10d's errors carry stack traces; the first line says what went wrong. A collective that
  // failed (a peer hung or gone) also says where every rank last was (note_progress).
  [[noreturn]] void fail(const std::string& what, const std::exception& e, bool collective = false) const {
    std::string m = e.what();
    m = m.substr(0, m.find('\n'));
    throw Error("rank " + std::to_string(rank) + " of " + std::to_string(size) + ": " + what + " failed: " + m +
                (collective ? progress_report() : ""));
  }

  // "; where the ranks were: rank 0 starting step 9 (0.0 s ago), rank 1 starting step 4 (31.0 s
  // ago): rank 1 fell behind (hung, slow or stopped)", from the progress each rank posts to the
  // store. Asks without waiting (check, then get), and says nothing when the store itself is gone.
  std::string progress_report() const {
    try {
      std::string out;
      std::vector<int> behind;
      int64_t latest = -1;
      std::vector<std::pair<int64_t, double>> seen(static_cast<size_t>(size), {-1, 0.0});
      for (int r = 0; r < size; ++r) {
        const std::string key = "progress/" + std::to_string(r);
        if (r == rank && step.load() >= 0) {  // this rank's own, as it is now
          seen[static_cast<size_t>(r)] = {step.load(), wall_seconds()};
          latest = std::max(latest, step.load());
          continue;
        }
        if (!store->check({key})) continue;
        const std::vector<uint8_t> got = store->get(key);
        const Json p = Json::parse(std::string(got.begin(), got.end()));
        seen[static_cast<size_t>(r)] = {p.at("step").get<int64_t>(), p.at("time").get<double>()};
        latest = std::max(latest, seen[static_cast<size_t>(r)].first);
      }
      const double now = wall_seconds();
      for (int r = 0; r < size; ++r) {
        const auto [step, time] = seen[static_cast<size_t>(r)];
        char line[96];
        if (step < 0) std::snprintf(line, sizeof line, "rank %d posted no step", r);
        else std::snprintf(line, sizeof line, "rank %d starting step %lld (%.1f s ago)", r, static_cast<long long>(step), now - time);
        out += (out.empty() ? "" : ", ") + std::string(line);
        if (step < latest) behind.push_back(r);
      }
      std::string names;
      for (int r : behind) names += (names.empty() ? "" : ", ") + std::to_string(r);
      return "; where the ranks were: " + out +
             (behind.empty() ? "" : ": rank" + std::string(behind.size() > 1 ? "s " : " ") + names + " fell behind (hung, "
                                    "slow or stopped)");
    } catch (const std::exception&) {
      return "";
    }
  }

  static double wall_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  }

  // The step this rank is at (note_progress), posted to the store by a thread of its own once a
  // second when it changed: a store round trip each step would cost a fast GPU step dearly, and
  // a rank whose main thread hangs keeps its last post, with its time.
  std::atomic<int64_t> step{-1};
  std::mutex poster_mutex;
  std::condition_variable poster_wake;
  bool poster_stop = false;
  std::thread poster;
  void post_progress() {
    int64_t posted = -1;
    std::unique_lock lock(poster_mutex);
    while (!poster_wake.wait_for(lock, std::chrono::seconds(1), [&] { return poster_stop; })) {
      const int64_t now = step.load();
      if (now == posted) continue;
      const std::string p = Json{{"step", now}, {"time", wall_seconds()}}.dump();
      try {  // c10d's TCPStore serialises its operations: safe beside the main thread's
        store->set("progress/" + std::to_string(rank), std::vector<uint8_t>(p.begin(), p.end()));
        posted = now;
      } catch (const std::exception&) {
        return;  // the store is gone: the main thread's next collective says so
      }
    }
  }
  ~Impl() {
    {
      std::lock_guard lock(poster_mutex);
      poster_stop = true;
    }
    poster_wake.notify_all();
    if (poster.joinable()) poster.join();
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

// Before any collective, every rank says who it is and checks the others: two processes given one
// rank, or ranks started with different world sizes, are named here, where Gloo would only time
// out. A rank that finds a problem posts it, so the others stop with its words.
void ProcessGroup::introduce(Impl& g) {
  const std::string rank = std::to_string(g.rank);
  const auto stop = [&](const std::string& why) {
    try {
      g.store->set("error", std::vector<uint8_t>(why.begin(), why.end()));
      // Rank 0 serves the store (without torchrun's agent): it stays a moment, so that the others,
      // polling every 20 ms, read why instead of finding the store gone.
      if (g.rank == 0 && !g.env.agent_store) std::this_thread::sleep_for(std::chrono::seconds(2));
    } catch (const std::exception&) {
    }
    throw Error(why);
  };
  try {
    if (g.store->add("claim/" + rank, 1) > 1)
      stop("rank " + rank + " of " + std::to_string(g.size) + ": another process already joined as rank " + rank +
           " (two processes given RANK=" + rank + "?); every rank of a job needs a number of its own");
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    const std::string hello = Json{{"world_size", g.size}, {"host", host}, {"pid", ::getpid()}}.dump();
    g.store->set("hello/" + rank, std::vector<uint8_t>(hello.begin(), hello.end()));
    // Each rank's hello as it comes (one started with another world size may wait for a rank
    // that never comes), until all are here, a rank posts an error, or the time is up.
    std::vector<bool> seen(static_cast<size_t>(g.size), false);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(g.env.timeout_s);
    for (int left = g.size; left > 0;) {
      for (int r = 0; r < g.size; ++r) {
        const std::string key = "hello/" + std::to_string(r);
        if (seen[static_cast<size_t>(r)] || !g.store->check({key})) continue;
        const std::vector<uint8_t> got = g.store->get(key);
        const Json other = Json::parse(std::string(got.begin(), got.end()));
        if (other.value("world_size", -1) != g.size)
          stop("rank " + std::to_string(r) + " (" + other.value("host", std::string("?")) + ", pid " +
               std::to_string(other.value("pid", 0)) + ") was started with WORLD_SIZE=" +
               std::to_string(other.value("world_size", -1)) + ", rank " + rank + " with " + std::to_string(g.size) +
               ": every rank of a job must be given the same world size");
        seen[static_cast<size_t>(r)] = true, --left;
      }
      if (left == 0) break;
      if (g.store->check({"error"})) {
        const std::vector<uint8_t> why = g.store->get("error");
        throw Error(std::string(why.begin(), why.end()));
      }
      if (std::chrono::steady_clock::now() > deadline) {
        std::string missing;
        for (int r = 0; r < g.size; ++r)
          if (!seen[static_cast<size_t>(r)]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        throw Error("rank " + rank + " of " + std::to_string(g.size) + ": rank(s) " + missing + " never joined the job in " +
                    std::to_string(static_cast<int64_t>(g.env.timeout_s)) + " s (ORRERY_DIST_TIMEOUT)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    g.fail("the rendezvous", e);
  }
}

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
    const bool taken = std::string(e.what()).find("ddress already in use") != std::string::npos;
    impl->fail("the rendezvous at " + env.master_addr + ":" + std::to_string(env.master_port) +
                   (taken ? " (the port is taken: another job is using it, or a second process was given RANK=0)"
                    : env.launcher == "slurm" ? " (under Slurm, start every rank with srun)"
                                              : ""),
               e);
  }
  introduce(*impl);
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
    impl_->group->fail("all-reduce", e, true);
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
    impl_->fail("all-reduce", e, true);
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
    impl_->fail("broadcast", e, true);
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
  } catch (const std::exception& e) {
    impl_->fail("gathering the ranks' values through the store", e);
  }
  if (impl_->rank == 0)
    for (int r = 0; r < impl_->size; ++r) {
      std::vector<uint8_t> got;
      try {
        got = impl_->store->get(key + std::to_string(r));
      } catch (const std::exception& e) {
        // The first gather comes before any step: the rank that never sent is the one to look at.
        impl_->fail("waiting for rank " + std::to_string(r) + ", which has not sent its value (it hangs, or failed "
                    "before it: see its output); gathering the ranks' values through the store", e);
      }
      out.emplace_back(got.begin(), got.end());
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
    impl_->fail("gather", e, true);
  }
  return output.empty() ? std::vector<at::Tensor>{} : output.front();
}

void ProcessGroup::barrier() {
  try {
    impl_->backend->barrier()->wait();
  } catch (const std::exception& e) {
    impl_->fail("barrier", e, true);
  }
}

void ProcessGroup::note_progress(int64_t step) {
  impl_->step.store(step);
  if (!impl_->poster.joinable()) impl_->poster = std::thread([g = impl_.get()] { g->post_progress(); });
}

}  // namespace orrery
