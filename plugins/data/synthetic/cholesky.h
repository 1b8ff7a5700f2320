#pragma once
// A small dense Cholesky for the GP family. Written here rather than called from LAPACK so
// that a sample is bit-identical whatever the thread count (a threaded BLAS may sum in
// another order) and the family stays plain C++. Matrices are at most a few hundred rows.
#include <cstddef>
#include <vector>

namespace orrery::synth {

// Factors the symmetric n x n matrix `a` (row-major, lower triangle read) in place into its
// lower Cholesky factor L (upper triangle left untouched). Returns false when `a` is not
// numerically positive definite.
bool cholesky(std::vector<double>& a, size_t n);

// out = L z for the lower-triangular n x n factor `l`.
void lower_times(const std::vector<double>& l, size_t n, const double* z, double* out);

}  // namespace orrery::synth
