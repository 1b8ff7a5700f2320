#include "orrery/host/patching.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <mutex>

#include "orrery/error.h"

namespace orrery {

namespace {
// The statistics of each patch's last `window` patches, in place of the whole history's `mean`
// and `scale` (both (B, V, N)), from the shifted values `xs` and the mask `m` (B, V, T). Two
// passes over each window's own steps, so a window's small spread is not lost in sums over a
// long history. A window with fewer than two observations, or none of spread, keeps the whole
// history's statistics; a patch with no observation keeps those of the last patch that had one
// (as the whole history's do: unobserved steps move nothing), so a forecast's masked patches
// read the statistics of the last observed one.
void window_statistics(const at::Tensor& xs, const at::Tensor& m, int64_t P, int64_t window, double min_scale,
                       at::Tensor& mean, at::Tensor& scale) {
  const int64_t N = mean.size(-1), span = window * P;
  auto padded = [&](const at::Tensor& t) {  // (B, V, N, window * P): the steps each window covers
    at::Tensor lead = at::zeros_like(t.narrow(-1, 0, 1)).expand({t.size(0), t.size(1), span - P});
    return at::cat({lead, t}, -1).unfold(-1, span, P);
  };
  const at::Tensor xw = padded(xs), mw = padded(m);
  const at::Tensor n = mw.sum(-1);
  const at::Tensor mu = (xw * mw).sum(-1) / n.clamp_min(1);
  const at::Tensor var = ((xw - mu.unsqueeze(-1)).square() * mw).sum(-1) / (n - 1).clamp_min(1);
  const at::Tensor sd = var.sqrt();
  const at::Tensor usable = (n >= 2) & (sd > min_scale);
  at::Tensor w_mean = at::where(usable, mu, mean), w_scale = at::where(usable, sd, scale);
  // Carry the statistics forward over patches with no observation.
  const at::Tensor has = m.unflatten(-1, {N, P}).sum(-1) > 0;
  const at::Tensor index = at::arange(N, has.options().dtype(at::kLong)).expand_as(has);
  const at::Tensor last = std::get<0>(at::cummax(at::where(has, index, at::full({}, -1, index.options())), -1));
  const at::Tensor from = last.clamp_min(0);
  mean = at::where(last >= 0, w_mean.gather(-1, from), mean);
  scale = at::where(last >= 0, w_scale.gather(-1, from), scale);
}
}  // namespace

ScaledValues causal_patch_scale(const at::Tensor& values, const at::Tensor& observed,
                                int64_t patch_size, double min_scale, int64_t window) {
  const int64_t T = values.size(-1);
  if (T % patch_size != 0)
    throw Error("series length " + std::to_string(T) + " is not a multiple of the patch size " +
                std::to_string(patch_size));
  const int64_t N = T / patch_size;
  // float64 where the device has it (MPS does not).
  const auto dt = values.device().is_mps() ? at::kFloat : at::kDouble;
  at::Tensor m = observed.to(dt);
  at::Tensor x = at::where(observed, values.to(dt), at::zeros({}, m.options()));

  // Shift by each series' first observed value: variance is shift-invariant and the running
  // sums no longer cancel catastrophically for series far from zero. Patches before the first
  // observation have n = 0 and get loc = 0, so the (later) reference value never leaks back.
  at::Tensor n_all = m.sum(-1, /*keepdim=*/true);
  at::Tensor first = (m.cumsum(-1) == 0).sum(-1, true).clamp_max(T - 1);
  at::Tensor ref = x.gather(-1, first) * (n_all > 0).to(dt);
  at::Tensor xs = (x - ref) * m;

  auto at_patch_end = [&](const at::Tensor& t) {
    return t.unflatten(-1, {N, patch_size}).select(-1, patch_size - 1);
  };
  at::Tensor n = at_patch_end(m.cumsum(-1));
  at::Tensor s1 = at_patch_end(xs.cumsum(-1));
  at::Tensor s2 = at_patch_end((xs * xs).cumsum(-1));

  at::Tensor mean = s1 / n.clamp_min(1);
  at::Tensor m2 = (s2 - n * mean * mean).clamp_min(0);
  at::Tensor var = m2 / (n - 1).clamp_min(1);  // Bessel correction 1
  at::Tensor scale = var.sqrt().clamp_min(min_scale);
  if (window > 0 && window < N) window_statistics(xs, m, patch_size, window, min_scale, mean, scale);
  at::Tensor loc = at::where(n > 0, mean + ref, at::zeros({}, mean.options()));

  at::Tensor loc_t = loc.repeat_interleave(patch_size, -1);
  at::Tensor scale_t = scale.repeat_interleave(patch_size, -1);
  at::Tensor z = at::where(observed, (x - loc_t) / scale_t, at::zeros({}, x.options()));
  return {z.to(at::kFloat), loc, scale, n.to(at::kFloat)};
}

at::Tensor patch_tokens(const at::Tensor& z, const at::Tensor& observed, int64_t patch_size) {
  const int64_t N = z.size(-1) / patch_size;
  at::Tensor v = z.unflatten(-1, {N, patch_size});
  at::Tensor flags = observed.logical_not().to(z.scalar_type()).unflatten(-1, {N, patch_size});
  return at::cat({v, flags}, -1);
}

at::Tensor contiguous_patch_mask(int64_t batch, int64_t variates, int64_t patches, int64_t c_max,
                                 double p_max, at::Generator& gen) {
  auto opts = at::TensorOptions().dtype(at::kLong);
  at::Tensor span = at::randint(1, c_max + 1, {batch, variates, 1}, gen, opts);
  at::Tensor rate = at::rand({batch, variates, 1}, gen) * p_max;
  // Patch n belongs to unit n / span; each unit is masked with probability `rate`.
  at::Tensor unit = at::floor_divide(at::arange(patches, opts).view({1, 1, patches}), span);
  at::Tensor draw = at::rand({batch, variates, patches}, gen).gather(-1, unit);
  return draw >= rate;
}

PatchMasker::PatchMasker(const Options& options, uint64_t seed)
    : options_(options), gen_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

std::vector<at::Tensor> PatchMasker::draw(int64_t batch, const std::vector<int64_t>& variates, int64_t world,
                                          int64_t rank, const at::Device& device) {
  const auto micro = static_cast<int64_t>(variates.size()) / world;
  std::vector<at::Tensor> keep(static_cast<size_t>(micro));
  if (!options_.on) return keep;
  for (int64_t j = 0; j < micro; ++j)
    for (int64_t q = 0; q < world; ++q) {
      at::Tensor m = contiguous_patch_mask(batch, variates[static_cast<size_t>(j * world + q)], options_.patches,
                                           options_.max_span, options_.max_rate, gen_);
      if (q == rank) keep[static_cast<size_t>(j)] = m.to(device);
    }
  return keep;
}

std::string PatchMasker::state() {
  std::lock_guard<std::mutex> lock(gen_.mutex());
  const at::Tensor t = gen_.get_state().contiguous();
  static const char* digits = "0123456789abcdef";
  std::string out;
  const uint8_t* p = t.data_ptr<uint8_t>();
  for (int64_t i = 0; i < t.numel(); ++i) out += digits[p[i] >> 4], out += digits[p[i] & 15];
  return out;
}

void PatchMasker::set_state(const std::string& hex) {
  auto nibble = [](char c) -> int {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  if (hex.empty() || hex.size() % 2) throw Error("the masking generator's saved state is not hex");
  const at::Tensor t = at::empty({static_cast<int64_t>(hex.size() / 2)}, at::kByte);
  uint8_t* p = t.data_ptr<uint8_t>();
  for (size_t i = 0; i < hex.size() / 2; ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) throw Error("the masking generator's saved state is not hex");
    p[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  std::lock_guard<std::mutex> lock(gen_.mutex());
  try {
    gen_.set_state(t);
  } catch (const std::exception& e) {
    throw Error(std::string("the masking generator's saved state does not fit: ") + e.what());
  }
}

at::Tensor expand_patch_mask(const at::Tensor& patch_mask, int64_t patch_size) {
  return patch_mask.repeat_interleave(patch_size, -1);
}

}  // namespace orrery
