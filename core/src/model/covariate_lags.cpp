#include "orrery/host/covariate_lags.h"

#include <ATen/ATen.h>

#include "orrery/batch.h"

namespace orrery {
namespace {

// x moved k steps on along the last dimension: step t holds step t - k, the first k `fill`.
at::Tensor delayed(const at::Tensor& x, int64_t k, const at::Scalar& fill) {
  if (k == 0) return x;
  const int64_t T = x.size(-1);
  if (k >= T) return at::full_like(x, fill);
  return at::cat({at::full_like(x.narrow(-1, 0, k), fill), x.narrow(-1, 0, T - k)}, -1);
}

constexpr int64_t kFewestPairs = 8;  // fewer paired steps than this say nothing about a lag

// Each row's role, whether its series has a target, and that series' first target row.
struct Reference {
  at::Tensor roles;        // (B, V) int64 VariateRole
  at::Tensor with_target;  // (B, V) bool: a row of a series with a target
  at::Tensor first;        // (B, V) int64: the row of its series' first target
  at::Tensor is(VariateRole role) const { return (roles == static_cast<int64_t>(role)) & with_target; }
};
Reference reference_rows(const at::Tensor& roles, const at::Tensor& series_ids, int64_t V, const at::Device& device) {
  const at::Tensor r = roles.to(device), ids = series_ids.to(device);
  const at::Tensor is_target = r == static_cast<int64_t>(VariateRole::target);
  const at::Tensor same = (ids.unsqueeze(2) == ids.unsqueeze(1)) & is_target.unsqueeze(1);  // (B, V, V)
  const at::Tensor first = (same.to(at::kLong) * at::arange(V, 0, -1, ids.options().dtype(at::kLong))).argmax(-1);
  return {r, same.any(-1), first};
}

// x's rows' first-target rows, (B, V, T).
at::Tensor target_of(const at::Tensor& x, const at::Tensor& first) {
  return x.gather(1, first.unsqueeze(-1).expand(x.sizes()));
}

// The float type of the statistics: double, or float where the device has none (MPS).
at::ScalarType stats_type(const at::Tensor& values) { return values.device().is_mps() ? at::kFloat : at::kDouble; }

// Pearson correlation from sums over n paired steps (of x - x0 and y - y0 for any x0, y0); 0 where
// either side is constant or fewer than kFewestPairs steps pair up.
at::Tensor pearson(const at::Tensor& n, const at::Tensor& sx, const at::Tensor& sy, const at::Tensor& sxx,
                   const at::Tensor& syy, const at::Tensor& sxy) {
  const at::Tensor safe_n = n.clamp_min(1);
  const at::Tensor cov = sxy - sx * sy / safe_n;
  // The spreads' product from their roots: a product of the variances would overflow for series
  // near +-1e150 (the largest a forecast takes) and underflow to 0 for tiny ones.
  const at::Tensor spread = (sxx - sx * sx / safe_n).clamp_min(0).sqrt() * (syy - sy * sy / safe_n).clamp_min(0).sqrt();
  const at::Tensor c = at::where(spread > 0, cov / spread.clamp_min(1e-300), at::zeros_like(cov));
  return at::where(n >= kFewestPairs, c, at::zeros_like(c));
}

}  // namespace

at::Tensor covariate_lags(const at::Tensor& values, const at::Tensor& seen, const at::Tensor& roles,
                          const at::Tensor& series_ids, int64_t max_lag, int64_t patch_size) {
  const int64_t B = values.size(0), V = values.size(1);
  const at::Tensor none = at::zeros({B, V}, values.options().dtype(at::kLong));
  if (!roles.defined() || max_lag <= 0) return none;
  // No shortcut on the host when no row moves: that would read the roles back, which a recorded
  // (CUDA-graphed) training step cannot; rows that do not move get lag 0 below.
  const Reference ref = reference_rows(roles, series_ids, V, values.device());
  const auto dt = stats_type(values);
  const at::Tensor x = values.to(dt), y = target_of(values, ref.first).to(dt), y_seen = target_of(seen, ref.first);
  // |Pearson correlation| of y with x delayed by k, over the steps both are seen, for each k
  // (centred on each pair's means first: levels far from zero lose no digits).
  std::vector<at::Tensor> fit;
  for (int64_t k = 0; k <= max_lag; ++k) {
    const at::Tensor m = (delayed(seen, k, false) & y_seen).to(dt);
    const at::Tensor xk = delayed(x, k, 0), n = m.sum(-1), safe_n = n.clamp_min(1);
    const at::Tensor dx = (xk - ((m * xk).sum(-1) / safe_n).unsqueeze(-1)) * m;
    const at::Tensor dy = (y - ((m * y).sum(-1) / safe_n).unsqueeze(-1)) * m;
    const at::Tensor zero = at::zeros_like(n);
    fit.push_back(pearson(n, zero, zero, (dx * dx).sum(-1), (dy * dy).sum(-1), (dx * dy).sum(-1)).abs());
  }
  const at::Tensor best = at::stack(fit, -1).argmax(-1);  // the first of equal maxima: the smallest lag
  // A past-only row's patch n already informs the target's patch n + 1: a patch of lag is built in.
  const at::Tensor past = (best - patch_size).clamp_min(0);
  return at::where(ref.is(VariateRole::future), best, at::where(ref.is(VariateRole::past), past, none));
}

at::Tensor covariate_match(const at::Tensor& values, const at::Tensor& seen, const at::Tensor& roles,
                           const at::Tensor& series_ids, int64_t patch_size) {
  const int64_t B = values.size(0), V = values.size(1), T = values.size(2), N = T / patch_size;
  if (!roles.defined()) return at::zeros({B, V, N}, values.options().dtype(at::kFloat));
  const Reference ref = reference_rows(roles, series_ids, V, values.device());
  const auto dt = stats_type(values);
  // A past-only row's patch n informs the target's patch n + 1, as a known-future row's led
  // patch does: it is paired with the target one patch later.
  const at::Tensor past = ref.is(VariateRole::past).unsqueeze(-1);
  const at::Tensor x_seen = at::where(past, delayed(seen, patch_size, false), seen);
  const at::Tensor m = x_seen & target_of(seen, ref.first);
  const at::Tensor md = m.to(dt);
  // Each pair's first paired values as its origin (known at that step, so the sums stay causal),
  // then running sums sampled at each patch's last step.
  const at::Tensor start = m.to(at::kLong).argmax(-1, true);
  const at::Tensor x = at::where(past, delayed(values, patch_size, 0), values).to(dt);
  const at::Tensor y = target_of(values, ref.first).to(dt);
  const at::Tensor dx = (x - x.gather(-1, start)) * md, dy = (y - y.gather(-1, start)) * md;
  const auto at_patch_ends = [&](const at::Tensor& v) {
    return v.cumsum(-1).unflatten(-1, {N, patch_size}).select(-1, patch_size - 1);
  };
  const at::Tensor r = pearson(at_patch_ends(md), at_patch_ends(dx), at_patch_ends(dy), at_patch_ends(dx * dx),
                               at_patch_ends(dy * dy), at_patch_ends(dx * dy));
  const at::Tensor matched = (ref.is(VariateRole::future) | ref.is(VariateRole::past)).unsqueeze(-1);
  return at::where(matched, r.clamp(-1, 1), at::zeros_like(r)).to(at::kFloat);
}

namespace {
// The step each step of a row moved by its lag reads, (B, V, T): t - lag (negative: none).
at::Tensor source_steps(int64_t T, const at::Tensor& lags, const at::Device& device) {
  const at::Tensor lag = lags.to(device);
  return at::arange(T, lag.options()).view({1, 1, T}) - lag.unsqueeze(-1);
}
}  // namespace

std::pair<at::Tensor, at::Tensor> delay_rows(const at::Tensor& values, const at::Tensor& observed, const at::Tensor& lags) {
  const at::Tensor from = source_steps(values.size(-1), lags, values.device());
  const at::Tensor inside = from >= 0, at_from = from.clamp_min(0);
  return {at::where(inside, values.gather(-1, at_from), at::zeros({}, values.options())),
          inside & observed.gather(-1, at_from)};
}

at::Tensor delay_mask(const at::Tensor& kept, const at::Tensor& lags) {
  const at::Tensor from = source_steps(kept.size(-1), lags, kept.device());
  return (from < 0) | kept.gather(-1, from.clamp_min(0));
}

}  // namespace orrery
