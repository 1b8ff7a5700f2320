#include "orrery/host/augment.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "orrery/error.h"

namespace orrery {

Augmentations Augmentations::parse(const Json& table, const std::string& owner) {
  Augmentations a;
  if (table.is_null()) return a;
  if (!table.is_object())
    throw Error(owner + " option 'augment' must be a table of name = probability, e.g. {sign_flip = 0.5}");
  const std::pair<const char*, double*> fields[] = {{"sign_flip", &a.sign_flip},     {"time_reversal", &a.time_reversal},
                                                    {"mixup", &a.mixup},             {"level_shift", &a.level_shift},
                                                    {"missing", &a.missing}};
  for (const auto& [key, value] : table.items()) {
    double* into = nullptr;
    for (const auto& [name, field] : fields)
      if (key == name) into = field;
    if (!into)
      throw Error(owner + " option 'augment': unknown augmentation '" + key +
                  "'; the augmentations are sign_flip, time_reversal, mixup, level_shift and missing");
    if (!value.is_number() || !(value.get<double>() >= 0 && value.get<double>() <= 1))
      throw Error(owner + " option 'augment': " + key + " is a probability from 0 to 1, got " + value.dump());
    *into = value.get<double>();
  }
  return a;
}

Json Augmentations::to_json() const {
  return {{"sign_flip", sign_flip}, {"time_reversal", time_reversal}, {"mixup", mixup},
          {"level_shift", level_shift}, {"missing", missing}};
}

namespace {

// Mean absolute value and sd over the observed steps of one sample [V, T].
std::pair<double, double> spread(const float* x, const bool* seen, int64_t n) {
  double sum = 0, abs = 0, sq = 0;
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i)
    if (seen[i]) sum += x[i], abs += std::fabs(x[i]), sq += double(x[i]) * x[i], ++k;
  if (k == 0) return {1, 0};
  const double mean = sum / double(k), var = std::max(0.0, sq / double(k) - mean * mean);
  return {abs / double(k) > 0 ? abs / double(k) : 1, std::sqrt(var)};
}

// The steps from the first observed to the last, over the variates of one sample [V, T]:
// where the sample's series lies (a short series has unobserved padding before it).
std::pair<int64_t, int64_t> observed_span(const bool* seen, int64_t V, int64_t T) {
  int64_t lo = T, hi = -1;
  for (int64_t v = 0; v < V; ++v)
    for (int64_t t = 0; t < T; ++t)
      if (seen[v * T + t]) lo = std::min(lo, t), hi = std::max(hi, t);
  return {lo, hi + 1};
}

}  // namespace

void augment(at::Tensor& values, at::Tensor& observed, const Augmentations& a, uint64_t seed) {
  if (!a.any()) return;
  TORCH_CHECK(values.dim() == 3 && values.scalar_type() == at::kFloat && values.is_contiguous() &&
                  observed.sizes() == values.sizes() && observed.is_contiguous(),
              "augment: values [B, V, T] float and observed of the same shape, contiguous");
  const int64_t B = values.size(0), V = values.size(1), T = values.size(2), n = V * T;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> normal(0, 1);
  // Mixup reads every sample as it was drawn, not as this pass changes it.
  const at::Tensor drawn = a.mixup > 0 ? values.clone() : values, drawn_seen = a.mixup > 0 ? observed.clone() : observed;
  float* x = values.data_ptr<float>();
  bool* seen = observed.data_ptr<bool>();
  const float* x0 = drawn.data_ptr<float>();
  const bool* seen0 = drawn_seen.data_ptr<bool>();
  for (int64_t b = 0; b < B; ++b) {
    float* xb = x + b * n;
    bool* sb = seen + b * n;
    if (B > 1 && unit(rng) < a.mixup) {
      const int parts = unit(rng) < 0.5 ? 2 : 3;
      std::vector<int64_t> who{b};
      while (static_cast<int>(who.size()) < parts)
        who.push_back((b + 1 + static_cast<int64_t>(unit(rng) * double(B - 1))) % B);  // another sample
      std::gamma_distribution<double> dirichlet(1.5, 1);
      std::vector<double> w(who.size());
      double total = 0;
      for (double& v : w) total += v = dirichlet(rng);
      const double own = spread(x0 + b * n, seen0 + b * n, n).first;
      std::vector<double> mixed(static_cast<size_t>(n), 0.0);
      for (size_t j = 0; j < who.size(); ++j) {
        const float* xj = x0 + who[j] * n;
        const bool* sj = seen0 + who[j] * n;
        const double scale = spread(xj, sj, n).first;
        for (int64_t i = 0; i < n; ++i) {
          mixed[static_cast<size_t>(i)] += w[j] / total * xj[i] / scale;
          if (!sj[i]) sb[i] = false;
        }
      }
      for (int64_t i = 0; i < n; ++i) xb[i] = sb[i] ? static_cast<float>(own * mixed[static_cast<size_t>(i)]) : 0.f;
    }
    if (unit(rng) < a.sign_flip)
      for (int64_t i = 0; i < n; ++i) xb[i] = -xb[i];
    // Reversal, shifts and gaps act on the span the series occupies, so padding stays where it
    // was (in front of a short series) and a step or a gap falls inside the series.
    const auto [lo, hi] = observed_span(sb, V, T);
    const int64_t L = std::max<int64_t>(hi - lo, 0);
    if (unit(rng) < a.time_reversal && L > 1)
      for (int64_t v = 0; v < V; ++v)
        std::reverse(xb + v * T + lo, xb + v * T + hi), std::reverse(sb + v * T + lo, sb + v * T + hi);
    if (unit(rng) < a.level_shift && L > 0) {
      const int64_t at_step = lo + static_cast<int64_t>(unit(rng) * double(L));
      const double size = normal(rng) * std::max(spread(xb, sb, n).second, 1e-6);
      for (int64_t v = 0; v < V; ++v)
        for (int64_t t = at_step; t < T; ++t)
          if (sb[v * T + t]) xb[v * T + t] += static_cast<float>(size);
    }
    if (unit(rng) < a.missing && L > 0) {
      const int64_t len = 1 + static_cast<int64_t>(unit(rng) * 0.15 * double(L));
      const int64_t from = lo + static_cast<int64_t>(unit(rng) * double(L));
      for (int64_t v = 0; v < V; ++v)
        for (int64_t t = from; t < std::min(hi, from + len); ++t) sb[v * T + t] = false, xb[v * T + t] = 0;
    }
  }
}

}  // namespace orrery
