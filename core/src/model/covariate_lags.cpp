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

}  // namespace

at::Tensor covariate_lags(const at::Tensor& values, const at::Tensor& seen, const at::Tensor& roles,
                          const at::Tensor& series_ids, int64_t max_lag) {
  const int64_t B = values.size(0), V = values.size(1), T = values.size(2);
  const at::Tensor none = at::zeros({B, V}, values.options().dtype(at::kLong));
  if (!roles.defined() || max_lag <= 0) return none;
  const at::Tensor r = roles.to(values.device());
  // No shortcut on the host when no row moves: that would read the roles back, which a recorded
  // (CUDA-graphed) training step cannot; rows that do not move get lag 0 below.
  const at::Tensor moves = r == static_cast<int64_t>(VariateRole::future);
  // Each row's reference: the first target row of its series.
  const at::Tensor ids = series_ids.to(values.device());
  const at::Tensor is_target = r == static_cast<int64_t>(VariateRole::target);
  const at::Tensor same = (ids.unsqueeze(2) == ids.unsqueeze(1)) & is_target.unsqueeze(1);  // (B, V, V)
  const at::Tensor first = (same.to(at::kLong) * at::arange(V, 0, -1, none.options())).argmax(-1);  // (B, V)
  const auto like_rows = [&](const at::Tensor& x) { return x.gather(1, first.unsqueeze(-1).expand({B, V, T})); };
  const auto dt = values.device().is_mps() ? at::kFloat : at::kDouble;
  const at::Tensor x = values.to(dt), y = like_rows(values).to(dt), y_seen = like_rows(seen);
  // |Pearson correlation| of y with x delayed by k, over the steps both are seen, for each k.
  std::vector<at::Tensor> fit;
  for (int64_t k = 0; k <= max_lag; ++k) {
    const at::Tensor m = (delayed(seen, k, false) & y_seen).to(dt);
    const at::Tensor xk = delayed(x, k, 0), n = m.sum(-1), safe_n = n.clamp_min(1);
    const at::Tensor mx = (m * xk).sum(-1) / safe_n, my = (m * y).sum(-1) / safe_n;
    const at::Tensor dx = (xk - mx.unsqueeze(-1)) * m, dy = (y - my.unsqueeze(-1)) * m;
    const at::Tensor cov = (dx * dy).sum(-1), var = (dx * dx).sum(-1) * (dy * dy).sum(-1);
    const at::Tensor c = at::where(var > 0, cov.abs() / var.clamp_min(1e-300).sqrt(), at::zeros_like(cov));
    fit.push_back(at::where(n >= kFewestPairs, c, at::zeros_like(c)));
  }
  const at::Tensor best = at::stack(fit, -1).argmax(-1);  // the first of equal maxima: the smallest lag
  return at::where(moves & same.any(-1), best, none);
}

std::pair<at::Tensor, at::Tensor> delay_rows(const at::Tensor& values, const at::Tensor& observed, const at::Tensor& lags) {
  const int64_t T = values.size(-1);
  const at::Tensor lag = lags.to(values.device());
  const at::Tensor from = at::arange(T, lag.options()).view({1, 1, T}) - lag.unsqueeze(-1);
  const at::Tensor inside = from >= 0, at_from = from.clamp_min(0);
  return {at::where(inside, values.gather(-1, at_from), at::zeros({}, values.options())),
          inside & observed.gather(-1, at_from)};
}

}  // namespace orrery
