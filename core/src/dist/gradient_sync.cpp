#include "orrery/host/gradient_sync.h"

#include <ATen/ATen.h>

#include "orrery/error.h"

namespace orrery {

GradientSync::GradientSync(ProcessGroup& group, std::vector<at::Tensor> params, bool overlap, int64_t bucket_bytes,
                           int64_t first_bucket_bytes)
    : group_(group) {
  for (auto& p : params)  // a frozen parameter has no gradient to share
    if (p.requires_grad()) params_.push_back(std::move(p));
  bucket_of_.resize(params_.size()), offset_.resize(params_.size()), filled_.assign(params_.size(), false);
  // Reverse order; a bucket holds one dtype on one device.
  std::vector<std::vector<size_t>> members;
  int64_t bytes = 0;
  for (size_t k = params_.size(); k-- > 0;) {
    const at::Tensor& p = params_[k];
    const int64_t cap = members.size() == 1 ? first_bucket_bytes : bucket_bytes;
    const bool fits = !members.empty() && bytes + static_cast<int64_t>(p.nbytes()) <= cap &&
                      params_[members.back().front()].dtype() == p.dtype() &&
                      params_[members.back().front()].device() == p.device();
    if (!fits) members.emplace_back(), bytes = 0;
    members.back().push_back(k);
    bytes += static_cast<int64_t>(p.nbytes());
  }
  for (auto& m : members) {
    Bucket b;
    int64_t numel = 0;
    for (size_t k : m) {
      bucket_of_[k] = buckets_.size();
      offset_[k] = numel;
      numel += params_[k].numel();
    }
    b.flat = at::zeros({numel}, params_[m.front()].options().requires_grad(false));
    b.members = std::move(m);
    buckets_.push_back(std::move(b));
  }
  if (overlap)
    for (size_t k = 0; k < params_.size(); ++k)
      hooks_.push_back(params_[k].register_hook([this, k](const at::Tensor& g) { arrived(k, g); }));
}

GradientSync::~GradientSync() {
  for (size_t k = 0; k < hooks_.size(); ++k) params_[k].remove_hook(hooks_[k]);
}

at::Tensor GradientSync::slot(size_t k) const {
  return buckets_[bucket_of_[k]].flat.narrow(0, offset_[k], params_[k].numel()).view(params_[k].sizes());
}

void GradientSync::arm() {
  armed_ = true;
  for (auto& b : buckets_) b.waiting = static_cast<int64_t>(b.members.size());
}

// Runs inside the backward, before the gradient is accumulated into .grad: the slot gets the
// accumulated value the parameter will hold.
void GradientSync::arrived(size_t k, const at::Tensor& grad) {
  if (!armed_) return;
  at::Tensor s = slot(k);
  const at::Tensor& before = params_[k].grad();
  if (filled_[k]) {
    s.add_(grad);
    return;
  }
  if (before.defined()) at::add_out(s, before, grad);
  else s.copy_(grad);
  filled_[k] = true;
  if (--buckets_[bucket_of_[k]].waiting == 0) start_ready();
}

void GradientSync::start_ready() {
  while (next_ < buckets_.size() && buckets_[next_].waiting == 0) {
    Bucket& b = buckets_[next_++];
    b.pending = group_.start_sum(b.flat);
    b.started = true;
  }
}

void GradientSync::finish() {
  for (size_t k = 0; k < params_.size(); ++k) {
    if (filled_[k] || buckets_[bucket_of_[k]].started) continue;
    const at::Tensor& g = params_[k].grad();
    if (g.defined()) slot(k).copy_(g);
    else slot(k).zero_();
  }
  for (auto& b : buckets_) b.waiting = 0;
  start_ready();
  armed_ = false;
  // Which parameters had a gradient on some rank: the others keep none, as in one process (an
  // optimizer leaves a parameter without a gradient alone, decay and momentum included).
  at::Tensor had = at::zeros({static_cast<int64_t>(params_.size())}, at::kFloat);
  auto h = had.accessor<float, 1>();
  for (size_t k = 0; k < params_.size(); ++k) h[static_cast<int64_t>(k)] = filled_[k] || params_[k].grad().defined();
  for (auto& b : buckets_) {
    b.pending.wait();
    b.started = false;
    b.flat.div_(group_.size());
  }
  group_.all_reduce_sum({had});
  next_ = 0;
  std::fill(filled_.begin(), filled_.end(), false);
  for (size_t k = 0; k < params_.size(); ++k) {
    at::Tensor& g = params_[k].mutable_grad();
    if (h[static_cast<int64_t>(k)] == 0) g.reset();
    else if (g.defined()) g.copy_(slot(k));
    else g = slot(k).clone();
  }
}

}  // namespace orrery
