#pragma once
// A data-parallel step's gradients averaged over the ranks (DDP's loss averaging: the mean of
// the ranks' mean losses), reduced in buckets while the backward still runs.
//
// Parameters are packed in reverse order (the backward produces the last layers' gradients
// first) into buckets of at most `bucket_bytes` (the first smaller, so the first reduction starts
// early). During the step's last backward a gradient hook copies each parameter's gradient, with
// what the step's earlier micro-batches accumulated, into its slot; a full bucket starts its sum
// at once, buckets always in index order, so every rank issues the same collectives in the same
// order. finish() starts what is left (the slots of parameters no gradient reached, and all of
// them on a rank that skipped its backward), waits, and writes the mean into every gradient.
// Afterwards a parameter has a gradient when it had one on some rank (zero on the ranks where
// none flowed), and none when it had none anywhere, as in one process.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "orrery/host/process_group.h"

namespace orrery {

class GradientSync {
 public:
  // `overlap` false: no hooks, every bucket is reduced in finish() (a graphed step records
  // its backward, which must not launch collectives).
  GradientSync(ProcessGroup& group, std::vector<at::Tensor> params, bool overlap,
               int64_t bucket_bytes = 25 << 20, int64_t first_bucket_bytes = 1 << 20);
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  // The next backward is the step's last: its gradients start their reductions as they arrive.
  void arm();
  void finish();
  int64_t buckets() const { return static_cast<int64_t>(buckets_.size()); }

 private:
  struct Bucket {
    at::Tensor flat;
    std::vector<size_t> members;  // indices into params_
    int64_t waiting = 0;          // members whose gradient has not arrived in this backward
    ProcessGroup::Pending pending;
    bool started = false;
  };
  void arrived(size_t param, const at::Tensor& grad);
  void start_ready();  // starts every bucket, in order, up to the first not yet full
  at::Tensor slot(size_t param) const;

  ProcessGroup& group_;
  std::vector<at::Tensor> params_;
  std::vector<size_t> bucket_of_;
  std::vector<int64_t> offset_;   // of each parameter in its bucket
  std::vector<bool> filled_;
  std::vector<Bucket> buckets_;
  std::vector<unsigned> hooks_;
  size_t next_ = 0;  // the next bucket to start
  bool armed_ = false;
};

}  // namespace orrery
