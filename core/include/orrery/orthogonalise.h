#pragma once
// Matrix maths shared by the Muon-family optimizer plugins (muon, normuon, dion2): the
// approximate orthogonalisers (Newton-Schulz quintic, Polar Express), the shape-dependent
// update scales, NorMuon's per-row normalisation and cautious weight decay. Formulas and
// constants follow KellerJordan/Muon, Polar Express (arXiv 2505.16932), NorMuon
// (zichongli5/NorMuon, arXiv 2510.05491), cautious weight decay (arXiv 2510.12402) and
// microsoft/dion, as each declaration below says.
// A weight is W in R^{fan_out x fan_in} (PyTorch (out, in)), so rows = fan_out.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "orrery/options.h"
#include "orrery/param.h"
#include "orrery/parametrisation.h"

namespace orrery {

// X ~ U S' V^T with S' roughly in [0.5, 1.5]: Keller Jordan's quintic (3.4445, -4.7750, 2.0315)
// iterated `steps` times on G/(||G||_F + 1e-7). G is 2-D. The iteration runs in `dtype`
// (bf16 on GPUs, float32 by default); the result has G's dtype and shape.
at::Tensor newton_schulz5(const at::Tensor& G, int steps = 5,
                          at::ScalarType dtype = at::ScalarType::Float);

// X ~ U V^T with singular values close to 1: the 5 Polar Express steps (Amsel et al.; the tuples
// of modded-nanogpt, nanochat and microsoft/dion). G is 2-D; result in G's dtype and shape.
at::Tensor polar_express(const at::Tensor& G, at::ScalarType dtype = at::ScalarType::Float);

enum class Orthogonaliser { polar_express, newton_schulz };
// "polar_express" or "newton_schulz"; anything else throws orrery::Error.
Orthogonaliser parse_orthogonaliser(const std::string& name);

// Either orthogonaliser on a >= 2-D tensor: more than 2 dimensions (conv filters) are flattened
// to (size(0), -1) and the result is reshaped back.
at::Tensor orthogonalise(const at::Tensor& G, Orthogonaliser which,
                         at::ScalarType dtype = at::ScalarType::Float);

// The dtype the orthogonaliser runs in for a tensor on `device`: "float32", "bfloat16", or
// "auto" = bfloat16 on CUDA (what every reference implementation does) and float32 elsewhere
// (bf16 matmuls on CPU are slow and buy nothing).
at::ScalarType orthogonalise_dtype(const std::string& choice, const at::Device& device);

// How the orthogonalised update is scaled by the matrix shape; each implementation names its source.
enum class ShapeScale {
  keller,     // max(1, rows/cols)^0.5            (KellerJordan/Muon, nanochat)
  spectral,   // sqrt(rows/cols)                   (microsoft/dion "spectral_norm", arXiv 2310.17813)
  rms_match,  // 0.2 * sqrt(max(rows, cols))       (Moonlight: update RMS ~ 0.2 like AdamW)
  none,       // 1
};
// "keller", "spectral", "rms" or "none"; anything else throws orrery::Error.
ShapeScale parse_shape_scale(const std::string& name);
double shape_scale(ShapeScale s, int64_t rows, int64_t cols);

// The options every Muon-family plugin shares, appended to `schema` with the plugin's defaults:
// orthogonaliser ("newton_schulz" | "polar_express"), adjust_lr (a ShapeScale name) and
// ortho_dtype (see orthogonalise_dtype).
OptionSchema& orthogonaliser_options(OptionSchema& schema, const std::string& orthogonaliser,
                                     const std::string& adjust_lr);

// NorMuon's neuron-wise normalisation of an orthogonalised update O (2-D), in place; official
// zichongli5/NorMuon form:
//   n0 = ||O||_F;  v = lerp(v, mean(O*O, dim, keepdim), 1 - beta2);  O /= sqrt(v) + eps;
//   O *= n0 / (||O||_F + eps)
// so every row (dim = -1, v of shape (rows, 1)) gets the same running RMS while the update
// keeps Muon's Frobenius norm. dim = -2 normalises columns instead (v of shape (1, cols)), which
// nanochat uses for wide matrices, whose rows are already orthonormal.
void normuon_normalise_(at::Tensor& O, at::Tensor& v, double beta2, double eps, int64_t dim = -1);

// Cautious weight decay, in place: p -= decay * p * mask with mask = (update * p >= 0).
// Convention: `update` is the direction that will be SUBTRACTED (p -= lr * update), so the mask
// keeps decay where the update also pulls p towards zero (or is zero), as nanochat and
// modded-nanogpt do; where the update pushes p away from zero the weight is left alone.
// `decay` is the whole factor, e.g. lr * weight_decay.
void cautious_weight_decay_(at::Tensor& p, const at::Tensor& update, double decay);

// Muon-family optimizers update matrices only. Throws orrery::Error naming the parameter and
// `optimizer` when `p` has fewer than 2 dimensions (biases and gains belong to AdamW).
void require_matrix_param(const Param& p, const std::string& optimizer);

// What every Muon-family plugin reads alike for each matrix it updates, from the options of
// orthogonaliser_options and the parametrisation: the constructor prologue muon, normuon and
// dion2 share. Each plugin's slot extends it with its own state.
struct MuonMatrix {
  std::string name;
  at::Tensor param;
  int64_t rows = 0, cols = 0;  // the (size(0), -1) matrix a >2-D tensor acts as
  double lr_mult = 1;          // the parametrisation's Muon-family learning-rate multiplier
  double scale = 1;            // the shape scale (adjust_lr)
  at::ScalarType dtype = at::ScalarType::Float;  // what the orthogonaliser runs in (ortho_dtype)
};

// Every parameter as a MuonMatrix; throws orrery::Error naming `optimizer` and the parameter when
// one is not a matrix (require_matrix_param).
std::vector<MuonMatrix> muon_matrices(const Json& options, const std::vector<Param>& params,
                                      const Parametrisation& param, const std::string& optimizer);

}  // namespace orrery
