#pragma once
// The processes of one data-parallel job, reducing tensors together through c10d: Gloo for CPU
// tensors, NCCL for GPU ones in CUDA builds. On Gloo a collective fails after the group's
// timeout instead of hanging, naming the rank, and a peer that dies fails it at once (NCCL's
// own watchdog ends the process instead; not yet run on a GPU). Every rank must call the same
// collectives in the same order: that is the whole contract.
#include <ATen/core/Tensor.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "orrery/host/launch_env.h"

namespace orrery {

class ProcessGroup {
 public:
  // Joins the job `env` describes: the rank takes its local GPU if it has one, rank 0 serves the
  // rendezvous store at master_addr:master_port (unless torchrun's agent serves it), every rank
  // connects, and the backends are set up. Collectives and the rendezvous wait at most
  // env.timeout_s.
  static std::unique_ptr<ProcessGroup> join(const LaunchEnv& env);
  ~ProcessGroup();

  int rank() const;
  int size() const;
  const LaunchEnv& env() const;

  // A sum over the ranks in flight, in place in `flat`; wait() completes it (or throws).
  class Pending {
   public:
    Pending();
    ~Pending();
    Pending(Pending&&) noexcept;
    Pending& operator=(Pending&&) noexcept;
    void wait();

   private:
    friend class ProcessGroup;
    struct Impl;
    std::unique_ptr<Impl> impl_;
  };
  // Starts summing one contiguous tensor over the ranks; the caller keeps it alive until wait().
  Pending start_sum(const at::Tensor& flat);

  // Replaces each tensor by its sum (or mean) over the ranks, through one flattened bucket.
  void all_reduce_sum(const std::vector<at::Tensor>& tensors);
  void all_reduce_mean(const std::vector<at::Tensor>& tensors);
  // Replaces each tensor by rank `root`'s, through one flattened bucket.
  void broadcast(const std::vector<at::Tensor>& tensors, int root = 0);
  // Rank 0's `text` on every rank (through the rendezvous store; the others' `text` is ignored).
  // Every rank must call it the same number of times: the n-th call on each rank pairs up.
  std::string share(const std::string& text);
  // Every rank's `text` on rank 0, in rank order (empty elsewhere), through the store; paired
  // up like share().
  std::vector<std::string> gather_text(const std::string& text);
  // Every rank's `mine` on rank 0, in rank order (empty elsewhere). The tensors must have one
  // size and dtype on every rank.
  std::vector<at::Tensor> gather(const at::Tensor& mine);
  void barrier();
  // The step (counted from 1) this rank is starting: a thread posts it to the rendezvous store
  // once a second when it changed, so that a collective that times out can say which rank fell
  // behind.
  void note_progress(int64_t step);

 private:
  struct Impl;
  // The rendezvous' checks before any collective (process_group.cpp).
  static void introduce(Impl& group);
  explicit ProcessGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace orrery
