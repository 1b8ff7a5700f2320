// Shared Muon-family maths; see orthogonalise.h for the formulas and their sources.
#include "orrery/orthogonalise.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "orrery/error.h"

namespace orrery {
namespace {

struct Quintic {
  double a, b, c;  // X <- a*X + b*X^3 + c*X^5 in the singular values
};

void require_matrix(const at::Tensor& G, const char* who) {
  if (G.dim() != 2)
    throw Error(std::string(who) + " needs a 2-D tensor, got " + std::to_string(G.dim()) + "-D");
}

// One odd quintic step on a wide (rows <= cols) X: A = X X^T is the small Gram matrix, then
// X <- a*X + (b*A + c*A^2) X. addmm fuses the scalings into the matmuls.
at::Tensor quintic_step_wide(const at::Tensor& X, const Quintic& q) {
  at::Tensor A = at::mm(X, X.t());
  at::Tensor B = at::addmm(A, A, A, /*beta=*/q.b, /*alpha=*/q.c);
  return at::addmm(X, B, X, /*beta=*/q.a, /*alpha=*/1.0);
}

// The same step on a tall (rows > cols) X without transposing it: A = X^T X is the small Gram
// matrix and X <- a*X + X (b*A + c*A^2) (nanochat's form; identical in exact arithmetic).
at::Tensor quintic_step_tall(const at::Tensor& X, const Quintic& q) {
  at::Tensor A = at::mm(X.t(), X);
  at::Tensor B = at::addmm(A, A, A, /*beta=*/q.b, /*alpha=*/q.c);
  return at::addmm(X, X, B, /*beta=*/q.a, /*alpha=*/1.0);
}

// Polar Express coefficients for 5 iterations (Amsel et al. 2025, arXiv 2505.16932): optimal_composition(
// l=1e-3, num_iters=5, safety_factor_eps=2e-2, cushion=0.02) from NoahAmsel/PolarExpress, the
// list shared by modded-nanogpt, nanochat and microsoft/dion.
constexpr std::array<Quintic, 5> kPolarExpress{{
    {8.156554524902461, -22.48329292557795, 15.878769915207462},
    {4.042929935166739, -2.808917465908714, 0.5000178451051316},
    {3.8916678022926607, -2.772484153217685, 0.5060648178503393},
    {3.285753657755655, -2.3681294933425376, 0.46449024233003106},
    {2.3465413258596377, -1.7097828382687081, 0.42323551169305323},
}};

// Keller Jordan's tuple, chosen to maximise the slope at zero rather than to converge.
constexpr Quintic kNewtonSchulz5{3.4445, -4.7750, 2.0315};

}  // namespace

at::Tensor newton_schulz5(const at::Tensor& G, int steps, at::ScalarType dtype) {
  require_matrix(G, "newton_schulz5");
  // Work on the wide orientation so that A = X X^T is the smaller Gram matrix.
  const bool tall = G.size(0) > G.size(1);
  at::Tensor X = G.to(dtype);
  if (tall) X = X.t();
  // ||X||_F >= sigma_max, so this puts every singular value in [0, 1], where the quintic is
  // designed to act; 1e-7 keeps a zero gradient at zero instead of NaN.
  X = X / (X.norm() + 1e-7);
  for (int i = 0; i < steps; ++i) X = quintic_step_wide(X, kNewtonSchulz5);
  if (tall) X = X.t();
  return X.contiguous().to(G.scalar_type());
}

at::Tensor polar_express(const at::Tensor& G, at::ScalarType dtype) {
  require_matrix(G, "polar_express");
  at::Tensor X = G.to(dtype);
  // The coefficients were generated with a safety factor of 1.02: every polynomial but the last
  // is designed for singular values up to 1.02, so dividing by 1.02 * ||X||_F (>= 1.02 sigma_max)
  // leaves that headroom for bf16 rounding in the iteration, as microsoft/dion and
  // modded-nanogpt do. 1e-6 keeps a zero matrix at zero.
  X = X / (X.norm() * 1.02 + 1e-6);
  const bool tall = G.size(0) > G.size(1);
  for (const Quintic& q : kPolarExpress) X = tall ? quintic_step_tall(X, q) : quintic_step_wide(X, q);
  return X.to(G.scalar_type());
}

Orthogonaliser parse_orthogonaliser(const std::string& name) {
  if (name == "polar_express") return Orthogonaliser::polar_express;
  if (name == "newton_schulz") return Orthogonaliser::newton_schulz;
  throw Error("unknown orthogonaliser '" + name + "' (available: polar_express, newton_schulz)");
}

at::Tensor orthogonalise(const at::Tensor& G, Orthogonaliser which, at::ScalarType dtype) {
  if (G.dim() < 2)
    throw Error("orthogonalise needs a tensor of at least 2 dimensions, got " +
                std::to_string(G.dim()) + "-D");
  // Conv filters (out, in, kh, kw) act as (out, in*kh*kw) matrices (KellerJordan/Muon).
  const at::Tensor M = G.dim() == 2 ? G : G.reshape({G.size(0), -1});
  at::Tensor O = which == Orthogonaliser::polar_express ? polar_express(M, dtype)
                                                        : newton_schulz5(M, 5, dtype);
  return O.reshape(G.sizes());
}

at::ScalarType orthogonalise_dtype(const std::string& choice, const at::Device& device) {
  if (choice == "float32") return at::kFloat;
  if (choice == "bfloat16") return at::kBFloat16;
  if (choice == "auto") return device.is_cuda() ? at::kBFloat16 : at::kFloat;
  throw Error("unknown orthogonaliser dtype '" + choice + "' (available: auto, float32, bfloat16)");
}

ShapeScale parse_shape_scale(const std::string& name) {
  if (name == "keller") return ShapeScale::keller;
  if (name == "spectral") return ShapeScale::spectral;
  if (name == "rms") return ShapeScale::rms_match;
  if (name == "none") return ShapeScale::none;
  throw Error("unknown update scale '" + name + "' (available: keller, spectral, rms, none)");
}

double shape_scale(ShapeScale s, int64_t rows, int64_t cols) {
  const double r = static_cast<double>(rows), c = static_cast<double>(cols);
  switch (s) {
    case ShapeScale::keller: return std::sqrt(std::max(1.0, r / c));
    case ShapeScale::spectral: return std::sqrt(r / c);
    case ShapeScale::rms_match: return 0.2 * std::sqrt(std::max(r, c));
    case ShapeScale::none: return 1.0;
  }
  return 1.0;
}

void normuon_normalise_(at::Tensor& O, at::Tensor& v, double beta2, double eps, int64_t dim) {
  require_matrix(O, "normuon_normalise_");
  const at::Tensor n0 = O.norm();
  // Running mean square of each row (or column): no bias correction, as the official code.
  v.lerp_(O.square().mean(dim, /*keepdim=*/true), 1.0 - beta2);
  O.div_(v.sqrt().add_(eps));
  // "keep the update norm the same as pre-normalization": only the direction changes.
  O.mul_(n0 / (O.norm() + eps));
}

void cautious_weight_decay_(at::Tensor& p, const at::Tensor& update, double decay) {
  if (decay == 0) return;
  const at::Tensor mask = (update * p).ge(0);
  p.sub_(p * mask, decay);
}

void require_matrix_param(const Param& p, const std::string& optimizer) {
  if (p.tensor.dim() >= 2) return;
  throw Error(optimizer + ": parameter '" + p.info.name + "' has " + std::to_string(p.tensor.dim()) +
              " dimension(s); " + optimizer +
              " orthogonalises matrices only: route vectors to adamw");
}

std::vector<MuonMatrix> muon_matrices(const Json& options, const std::vector<Param>& params,
                                      const Parametrisation& param, const std::string& optimizer) {
  const ShapeScale scale = parse_shape_scale(options["adjust_lr"].get<std::string>());
  const std::string dtype = options["ortho_dtype"];
  std::vector<MuonMatrix> out;
  for (const auto& p : params) {
    require_matrix_param(p, optimizer);
    const int64_t rows = p.tensor.size(0), cols = p.tensor.numel() / rows;
    out.push_back({p.info.name, p.tensor, rows, cols, param.lr_multiplier(p.info, OptimizerFamily::muon_like),
                   shape_scale(scale, rows, cols), orthogonalise_dtype(dtype, p.tensor.device())});
  }
  return out;
}

OptionSchema& orthogonaliser_options(OptionSchema& schema, const std::string& orthogonaliser,
                                     const std::string& adjust_lr) {
  // The default first among the choices, as `orrery plugins` lists them.
  auto with_default_first = [](std::vector<std::string> all, const std::string& def) {
    std::stable_partition(all.begin(), all.end(), [&](const std::string& c) { return c == def; });
    return all;
  };
  return schema
      .string("orthogonaliser", orthogonaliser, "Keller's NS5 quintic (newton_schulz) or Polar Express",
              with_default_first({"newton_schulz", "polar_express"}, orthogonaliser))
      .string("adjust_lr", adjust_lr,
              "update scale by shape: keller max(1, out/in)^0.5, spectral sqrt(out/in), rms "
              "0.2*sqrt(max), none 1",
              with_default_first({"keller", "spectral", "rms", "none"}, adjust_lr))
      .string("ortho_dtype", "auto", "dtype of the orthogonaliser (auto: bfloat16 on CUDA)",
              {"auto", "float32", "bfloat16"});
}

}  // namespace orrery
