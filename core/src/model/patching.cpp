#include "orrery/host/patching.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <mutex>

#include "orrery/error.h"

namespace orrery {

ScaledValues causal_patch_scale(const at::Tensor& values, const at::Tensor& observed,
                                int64_t patch_size, double min_scale) {
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
