// CPU reference of the NorMuon step (see normuon.h), mirroring plugins/optim/normuon and
// orrery::normuon_normalise_ / cautious_weight_decay_ operation by operation in float; norms
// and row means accumulate in double.
#include "orrery/kernels/normuon.h"

#include <cmath>
#include <vector>

#include "common/elementwise.h"
#include "orrery/kernels/polar_express.h"

namespace orrery::kernels {

void normuon_update_cpu(float* p, float* v, const float* O, int64_t rows, int64_t cols,
                        const NormuonStep& s) {
  const float eps = static_cast<float>(s.eps);
  const float w2 = static_cast<float>(1.0 - s.beta2);
  // Row sums of squares give both norms: ||O||^2 = sum_r ss_r, and after dividing row r by
  // d_r = sqrt(v_r) + eps, ||O'||^2 = sum_r ss_r / d_r^2.
  std::vector<float> d(static_cast<size_t>(rows));
  double before = 0, after = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t c = 0; c < cols; ++c) ss += static_cast<double>(O[r * cols + c]) * O[r * cols + c];
    v[r] = detail::lerp(v[r], static_cast<float>(ss / static_cast<double>(cols)), w2);
    d[r] = std::sqrt(v[r]) + eps;
    before += ss;
    after += ss / (static_cast<double>(d[r]) * d[r]);
  }
  // n0 / (||O'|| + eps), in float as the ATen expression on 0-d float tensors.
  const float keep_norm = static_cast<float>(std::sqrt(before)) / (static_cast<float>(std::sqrt(after)) + eps);
  const float scale = static_cast<float>(s.scale), lr = static_cast<float>(s.lr);
  const float decay = static_cast<float>(s.decay), keep = static_cast<float>(1.0 - s.decay);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      const float o = O[i] / d[r] * keep_norm * scale;
      float x = p[i];
      if (s.cautious) {
        // Decay only where the update also pulls the weight towards zero (mask = O * p >= 0).
        if (o * x >= 0) x = x - decay * x;
      } else if (s.decay != 0) {
        x = x * keep;
      }
      p[i] = x - lr * o;
    }
  }
}

void normuon_step_cpu(float* p, const float* g, float* m, float* v, int64_t rows, int64_t cols,
                      const NormuonStep& s) {
  const int64_t count = rows * cols;
  const float w = static_cast<float>(1.0 - s.momentum), beta = static_cast<float>(s.momentum);
  std::vector<float> u(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    m[i] = detail::lerp(m[i], g[i], w);
    u[i] = s.nesterov ? detail::lerp(g[i], m[i], beta) : m[i];
  }
  polar_express_cpu(u.data(), u.data(), 1, rows, cols);
  normuon_update_cpu(p, v, u.data(), rows, cols, s);
}

}  // namespace orrery::kernels
