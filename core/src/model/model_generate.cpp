// A model continuing its rows by drawing from its head: text from a language model (docs/language.md).
#include "orrery/host/model.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>

#include "orrery/options.h"
#include "orrery/error.h"
#include "orrery/host/box_cox.h"
#include "orrery/host/covariate_lags.h"
#include "orrery/host/graphed_call.h"
#include "orrery/ops.h"
#include "orrery/host/patching.h"
#include "orrery/host/registry.h"
#include "orrery/host/series.h"
#include "prepared.h"

namespace orrery {

namespace {
// Far more steps than this is no use to anyone reading the draws.
constexpr int64_t kMaxGenerated = 1 << 16;
}  // namespace

at::Tensor Model::generate(const at::Tensor& values_in, int64_t steps, const GenerateOptions& o) {
  const int64_t P = spec_.patch_size;
  if (values_in.dim() != 3 || values_in.size(0) < 1 || values_in.size(1) < 1 || values_in.size(2) < 1)
    throw Error("generate needs values of one non-empty shape (series, variates, steps), got " +
                c10::str(values_in.sizes()));
  if (steps < 1 || steps > kMaxGenerated)
    throw Error("generate draws 1 to " + std::to_string(kMaxGenerated) + " steps, got " + std::to_string(steps));
  if (!(o.temperature >= 0 && std::isfinite(o.temperature)))
    throw Error("generate: temperature must be a finite number >= 0 (0 = the most likely value), got " +
                std::to_string(o.temperature));
  if (o.top_k < 0) throw Error("generate: top_k must be >= 0 (0 = every class), got " + std::to_string(o.top_k));
  if (o.context < 0 || (o.context > 0 && o.context < P))
    throw Error("generate: context must be 0 (all) or at least the patch size " + std::to_string(P) + ", got " +
                std::to_string(o.context));
  if (!values_in.isfinite().all().item<bool>()) throw Error("generate: the values to continue must all be finite");
  at::NoGradGuard no_grad;
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(o.seed);
  const int64_t B = values_in.size(0), V = values_in.size(1), T = values_in.size(2);
  // Left-padded to whole patches with unobserved steps, as forecasts are.
  const int64_t pad = (P - T % P) % P;
  at::Tensor seq = at::cat({at::zeros({B, V, pad}, at::kFloat), values_in.to(at::kCPU, at::kFloat)}, -1);
  at::Tensor seen = at::cat({at::zeros({B, V, pad}, at::kBool), at::ones({B, V, T}, at::kBool)}, -1);
  const at::Tensor ids = at::arange(B, at::kLong).unsqueeze(1).expand({B, V}).contiguous().to(device_);
  std::unique_ptr<DecodeCache> cache = o.kv_cache ? arch_->new_cache((pad + T + steps + P - 1) / P) : nullptr;
  for (int64_t drawn = 0; drawn < steps; drawn += P) {
    if (o.interrupt) o.interrupt->check();
    const int64_t from = o.context > 0 ? std::max<int64_t>(0, (seq.size(-1) - o.context) / P * P) : 0;
    if (from > 0) cache.reset();  // the window moved: the cached positions are no longer the sequence's
    const Prepared p = prepare(seq.narrow(-1, from, seq.size(-1) - from).to(device_),
                               seen.narrow(-1, from, seen.size(-1) - from).to(device_), ids, {}, {});
    const int64_t N = p.in.tokens.size(2);
    at::Tensor h;  // the hidden state of the last patch
    if (cache) {  // read only the patches the cache has not seen, and keep them
      const int64_t done = cache->length, count = N - done;
      const PatchInput part{p.in.tokens.narrow(2, done, count), p.in.series_ids, p.in.patch_valid.narrow(2, done, count),
                            p.in.roles, p.in.statics};
      h = arch_->forward_cached(part, *cache, count, ForwardContext{}).narrow(2, count - 1, 1);
    } else {
      h = arch_->forward(p.in, ForwardContext{}).narrow(2, N - 1, 1);
    }
    const at::Tensor out = head_->forward(h, ForwardContext{});
    at::Tensor next;
    try {
      next = head_->sample(out, o.temperature, o.top_k, gen);  // (B, V, 1, P)
    } catch (const Error& e) {
      throw Error("head plugin '" + spec_.head.name + "': " + e.what());
    }
    next = next.reshape({B, V, P}).to(at::kCPU, at::kFloat);
    seq = at::cat({seq, next}, -1);
    seen = at::cat({seen, at::ones({B, V, P}, at::kBool)}, -1);
  }
  return seq.narrow(-1, pad + T, steps).contiguous();
}

}  // namespace orrery
