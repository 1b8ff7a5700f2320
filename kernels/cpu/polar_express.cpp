// CPU reference of batched Polar Express (see polar_express.h): row-major matrices, products
// accumulated in double, one matrix of the batch at a time.
#include "orrery/kernels/polar_express.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace orrery::kernels {
namespace {

using Matrix = std::vector<float>;  // row-major, its shape carried by the caller

// C (m x n) = A (m x k) B (k x n). The i-k-j order streams rows of B and C; the double
// accumulator row keeps the reference more accurate than the float32 it is compared against.
Matrix matmul(const Matrix& A, const Matrix& B, int64_t m, int64_t k, int64_t n) {
  Matrix C(static_cast<size_t>(m * n));
  std::vector<double> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int64_t l = 0; l < k; ++l) {
      const double a = A[i * k + l];
      const float* b = &B[l * n];
      for (int64_t j = 0; j < n; ++j) row[j] += a * b[j];
    }
    for (int64_t j = 0; j < n; ++j) C[i * n + j] = static_cast<float>(row[j]);
  }
  return C;
}

Matrix transpose(const Matrix& X, int64_t rows, int64_t cols) {
  Matrix T(X.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) T[j * rows + i] = X[i * cols + j];
  return T;
}

// x <- alpha * x + beta * y, element-wise: addmm's beta*input + alpha*product.
void combine(Matrix& x, float alpha, const Matrix& y, float beta) {
  for (size_t i = 0; i < x.size(); ++i) x[i] = alpha * x[i] + beta * y[i];
}

// One matrix: orthogonalise.cpp's polar_express with dtype float32.
void orthogonalise_one(const float* in, float* out, int64_t rows, int64_t cols) {
  const int64_t count = rows * cols;
  Matrix X(in, in + count);
  double sumsq = 0;
  for (float x : X) sumsq += static_cast<double>(x) * x;
  // X / (||X|| * 1.02 + 1e-6), each operation in float as ATen's float tensors do.
  const float denom = static_cast<float>(std::sqrt(sumsq)) * 1.02f + 1e-6f;
  for (float& x : X) x /= denom;

  const bool tall = rows > cols;
  const int64_t s = tall ? cols : rows;  // side of the small Gram matrix
  for (const auto& [a, b, c] : polar_express_coefficients()) {
    const Matrix Xt = transpose(X, rows, cols);
    const Matrix A = tall ? matmul(Xt, X, cols, rows, cols) : matmul(X, Xt, rows, cols, rows);
    Matrix B = matmul(A, A, s, s, s);
    combine(B, static_cast<float>(c), A, static_cast<float>(b));  // b*A + c*A^2
    Matrix Y = tall ? matmul(X, B, rows, cols, cols) : matmul(B, X, rows, rows, cols);
    combine(Y, 1.0f, X, static_cast<float>(a));  // a*X + (b*A + c*A^2) X, or X (...) when tall
    X = std::move(Y);
  }
  std::copy(X.begin(), X.end(), out);
}

}  // namespace

const std::array<std::array<double, 3>, 5>& polar_express_coefficients() {
  static const std::array<std::array<double, 3>, 5> tuples{{
      {8.156554524902461, -22.48329292557795, 15.878769915207462},
      {4.042929935166739, -2.808917465908714, 0.5000178451051316},
      {3.8916678022926607, -2.772484153217685, 0.5060648178503393},
      {3.285753657755655, -2.3681294933425376, 0.46449024233003106},
      {2.3465413258596377, -1.7097828382687081, 0.42323551169305323},
  }};
  return tuples;
}

void polar_express_cpu(const float* in, float* out, int64_t batch, int64_t rows, int64_t cols) {
  const int64_t count = rows * cols;
  for (int64_t i = 0; i < batch; ++i) orthogonalise_one(in + i * count, out + i * count, rows, cols);
}

}  // namespace orrery::kernels
