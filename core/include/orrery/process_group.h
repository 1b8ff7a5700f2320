#pragma once
// The processes of one data-parallel job, reducing tensors together through c10d (Gloo on the
// CPU). Every collective fails after the group's timeout instead of hanging, naming the rank.
#include <ATen/core/Tensor.h>

#include <chrono>
#include <memory>
#include <vector>

#include "orrery/launch_env.h"

namespace orrery {

class ProcessGroup {
 public:
  // Joins the job `env` describes: rank 0 serves the rendezvous store at master_addr:master_port
  // (unless torchrun's agent serves it), every rank connects, and the Gloo backend is set up.
  static std::unique_ptr<ProcessGroup> join(const LaunchEnv& env, std::chrono::milliseconds timeout);
  ~ProcessGroup();

  int rank() const;
  int size() const;
  // Replaces each tensor by its mean over the ranks, through one flattened bucket.
  void all_reduce_mean(const std::vector<at::Tensor>& tensors);
  void barrier();

 private:
  struct Impl;
  explicit ProcessGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace orrery
