#include "orrery/host/zero.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "orrery/error.h"
#include "orrery/host/process_group.h"

namespace orrery {

std::vector<int> assign_shards(const std::vector<Param>& params, int world) {
  std::vector<size_t> order(params.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return params[a].tensor.numel() > params[b].tensor.numel(); });
  std::vector<int64_t> load(static_cast<size_t>(world), 0);
  std::vector<int> owner(params.size(), 0);
  for (size_t k : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    owner[k] = static_cast<int>(least);
    load[static_cast<size_t>(least)] += params[k].tensor.numel();
  }
  return owner;
}

ShardedOptimizer::ShardedOptimizer(const Registry& registry, const std::vector<OptimizerGroup>& groups,
                                   std::vector<Param>& params, const Parametrisation& param, ProcessGroup& world)
    : world_(world), owned_by_(static_cast<size_t>(world.size())) {
  const std::vector<int> owner = assign_shards(params, world.size());
  std::map<const void*, int> owner_of;  // by the parameter's storage: Param copies share it
  for (size_t k = 0; k < params.size(); ++k) {
    owner_of[params[k].tensor.unsafeGetTensorImpl()] = owner[k];
    owned_by_[static_cast<size_t>(owner[k])].push_back(params[k].tensor.detach());
  }
  const int rank = world.rank();
  share_ = std::make_unique<RoutedOptimizer>(registry, groups, params, param, [&](const Param& p) {
    return owner_of.at(p.tensor.unsafeGetTensorImpl()) == rank;
  });
}

void ShardedOptimizer::step(const StepScalars& s) {
  share_->step(s);
  at::NoGradGuard no_grad;
  for (int r = 0; r < world_.size(); ++r)
    if (!owned_by_[static_cast<size_t>(r)].empty()) world_.broadcast(owned_by_[static_cast<size_t>(r)], r);
}

NamedTensors ShardedOptimizer::gather_state() const {
  at::NoGradGuard no_grad;
  // This rank's share as one string of bytes, and an index of it: name, dtype, shape, place.
  Json index = Json::array();
  std::vector<at::Tensor> parts;
  int64_t size = 0;
  for (const auto& [name, t] : share_->state_tensors()) {
    const at::Tensor bytes = t.detach().cpu().contiguous().view(-1).view(at::kByte);
    index.push_back({{"name", name}, {"dtype", static_cast<int>(t.scalar_type())}, {"shape", t.sizes().vec()},
                     {"offset", size}, {"bytes", bytes.numel()}});
    parts.push_back(bytes);
    size += bytes.numel();
    const int64_t pad = (8 - size % 8) % 8;  // the next tensor's bytes aligned for any dtype
    if (pad) parts.push_back(at::zeros({pad}, at::kByte)), size += pad;
  }
  const std::vector<std::string> indexes = world_.gather_text(index.dump());
  // One size for the gather: the largest share's, the others padded.
  at::Tensor sizes = at::zeros({world_.size()}, at::kDouble);
  sizes[world_.rank()] = static_cast<double>(size);
  world_.all_reduce_sum({sizes});
  const auto largest = static_cast<int64_t>(sizes.max().item<double>());
  if (largest == 0) return {};
  at::Tensor flat = at::zeros({largest}, at::kByte);
  if (size > 0) flat.narrow(0, 0, size).copy_(at::cat(parts));
  const std::vector<at::Tensor> all = world_.gather(flat);
  NamedTensors out;
  for (size_t r = 0; r < all.size(); ++r)
    for (const auto& e : Json::parse(indexes[r])) {
      const auto dtype = static_cast<at::ScalarType>(e["dtype"].get<int>());
      out.emplace_back(e["name"].get<std::string>(), all[r]
                                                         .narrow(0, e["offset"].get<int64_t>(), e["bytes"].get<int64_t>())
                                                         .view(dtype)
                                                         .view(e["shape"].get<std::vector<int64_t>>())
                                                         .clone());
    }
  return out;
}

}  // namespace orrery
