#include "orrery/host/micro_step_graphs.h"

#include <ATen/ATen.h>

#include "orrery/error.h"
#include "orrery/host/model.h"

namespace orrery {

MicroStepGraphs::MicroStepGraphs(Model& model, const ForwardContext& ctx, int64_t accumulate)
    : model_(model), ctx_(ctx), accumulate_(accumulate) {
  ctx_.host_sync = false;
  ctx_.probe = nullptr;
}

at::Tensor MicroStepGraphs::run(const Batch& b, const at::Tensor& keep) {
  const std::string key = c10::str(b.values.sizes(), b.series_ids.sizes(), keep.defined(), b.roles.defined(),
                                   b.statics.defined());
  auto it = recordings_.find(key);
  if (it == recordings_.end()) it = recordings_.emplace(key, record(b, keep)).first;
  Recording& r = *it->second;
  r.in.values.copy_(b.values), r.in.observed.copy_(b.observed), r.in.series_ids.copy_(b.series_ids);
  if (b.roles.defined()) r.in.roles.copy_(b.roles);
  if (b.statics.defined()) r.in.statics.copy_(b.statics);
  if (keep.defined()) r.keep.copy_(keep);
  r.call->replay();
  return r.loss;
}

void MicroStepGraphs::zero_grads(std::vector<Param>& params) {
  for (auto& p : params)
    if (p.tensor.grad().defined()) p.tensor.mutable_grad().zero_();
}

std::unique_ptr<MicroStepGraphs::Recording> MicroStepGraphs::record(const Batch& b, const at::Tensor& keep) {
  if (recordings_.size() == kMaxShapes)
    throw Error("graph = true records one graph per batch shape, and the batches came in more than " +
                std::to_string(kMaxShapes) + " shapes (now " + c10::str(b.values.sizes()) +
                "): train without graph, or with data of one variate count");
  auto r = std::make_unique<Recording>();
  r->in = Batch{b.values.clone(), b.observed.clone(), b.series_ids.clone(), b.season,
                b.roles.defined() ? b.roles.clone() : at::Tensor()};
  if (b.statics.defined()) r->in.statics = b.statics.clone();
  if (keep.defined()) r->keep = keep.clone();
  r->call = make_graphed_call(model_.device());
  // Recording runs the work (warm-ups): the gradients so far are put back afterwards. Every
  // gradient exists from here on, so the recorded backward adds into it in place.
  std::vector<at::Tensor> before;
  for (auto& p : model_.params()) {
    if (!p.tensor.grad().defined()) p.tensor.mutable_grad() = at::zeros_like(p.tensor);
    before.push_back(p.tensor.grad().clone());
  }
  Recording* rec = r.get();
  rec->call->capture([this, rec] {
    rec->loss = model_.loss(rec->in, rec->keep, ctx_) / static_cast<double>(accumulate_);
    rec->loss.backward();
  });
  for (size_t i = 0; i < before.size(); ++i) model_.params()[i].tensor.mutable_grad().copy_(before[i]);
  return r;
}

}  // namespace orrery
