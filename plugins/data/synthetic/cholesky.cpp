#include "cholesky.h"

#include <cmath>

namespace orrery::synth {

namespace {
// Dot product of two contiguous rows with four partial sums, so the loop is not one long
// dependency chain (the compiler may not reorder floating-point sums by itself).
double dot(const double* a, const double* b, size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    s0 += a[k] * b[k];
    s1 += a[k + 1] * b[k + 1];
    s2 += a[k + 2] * b[k + 2];
    s3 += a[k + 3] * b[k + 3];
  }
  for (; k < n; ++k) s0 += a[k] * b[k];
  return (s0 + s1) + (s2 + s3);
}
}  // namespace

// Row by row (Cholesky-Banachiewicz): L[i][j] = (A[i][j] - <L[i][:j], L[j][:j]>) / L[j][j];
// both rows are contiguous, and for the sizes used here the matrix stays in cache.
bool cholesky(std::vector<double>& a, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    double* row = &a[i * n];
    for (size_t j = 0; j < i; ++j) {
      const double* other = &a[j * n];
      row[j] = (row[j] - dot(row, other, j)) / other[j];
    }
    const double d = row[i] - dot(row, row, i);
    if (!(d > 0) || !std::isfinite(d)) return false;
    row[i] = std::sqrt(d);
  }
  return true;
}

void lower_times(const std::vector<double>& l, size_t n, const double* z, double* out) {
  for (size_t i = 0; i < n; ++i) out[i] = dot(&l[i * n], z, i + 1);
}

}  // namespace orrery::synth
