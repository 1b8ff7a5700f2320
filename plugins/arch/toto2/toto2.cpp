// Toto 2.0 (Datadog, 2026), section 2: a patched decoder-only transformer.
//
//   patch tokens (B, V, N, 64) --InputResidualMLP(64 -> 4d -> d)--> x
//   L x [ x = x (+) Attn(RMSNorm(x));  x = x (+) SwiGLU(RMSNorm(x)) ]   (+) = residual rule
//   RMSNorm(x) -> hidden states; the head plugin maps them to the next patch.
//
// Time attention is causal over patches within a series, with partial rotary embeddings on the
// first half of each head's dimensions. Every scale (init, linear multipliers, residual weights,
// attention softmax scale) comes from the parametrisation, so this file holds no SP/u-muP branch.
// Variate layers, xPos, PerDimScale and the published presets arrive with the fidelity issue.
#include <ATen/ATen.h>

#include <cmath>

#include "orrery/error.h"
#include "orrery/ops.h"
#include "orrery/plugin.h"

namespace {
using namespace orrery;

// d_ff = 8d/3 rounded up to a multiple of 8, as in the released configuration.
int64_t default_d_ff(int64_t d) { return (static_cast<int64_t>(4 * d * 2 / 3) + 7) / 8 * 8; }

// Rotary embedding on the first `dims` of each head, interleaved pairs (0,1), (2,3), ...
at::Tensor rotary(const at::Tensor& x, int64_t dims, double base) {
  const int64_t N = x.size(-2);
  auto opts = x.options().dtype(at::kFloat);
  at::Tensor inv_freq = at::pow(base, -at::arange(0, dims, 2, opts) / static_cast<double>(dims));
  at::Tensor angles = at::outer(at::arange(N, opts), inv_freq).repeat_interleave(2, -1);  // (N, dims)
  at::Tensor head = x.narrow(-1, 0, dims), tail = x.narrow(-1, dims, x.size(-1) - dims);
  at::Tensor pairs = head.unflatten(-1, {dims / 2, 2});
  at::Tensor rotated = at::stack({-pairs.select(-1, 1), pairs.select(-1, 0)}, -1).flatten(-2);
  return at::cat({head * angles.cos() + rotated * angles.sin(), tail}, -1);
}

struct Attention {
  Linear in_proj, out_proj;
  int64_t heads, d_head, rope_dims;
  double scale, rope_base;
  Residual residual;

  at::Tensor operator()(const at::Tensor& x, const at::Tensor& mask) const {
    const int64_t S = x.size(0), N = x.size(1);
    auto qkv = in_proj(x).unflatten(-1, {3, heads, d_head}).permute({2, 0, 3, 1, 4});  // 3,S,H,N,dh
    at::Tensor q = qkv[0], k = qkv[1], v = qkv[2];
    if (rope_dims > 0) q = rotary(q, rope_dims, rope_base), k = rotary(k, rope_dims, rope_base);
    at::Tensor o = mask.defined()
        ? at::scaled_dot_product_attention(q, k, v, mask, 0.0, false, scale)
        : at::scaled_dot_product_attention(q, k, v, {}, 0.0, true, scale);
    return out_proj(o.transpose(1, 2).reshape({S, N, heads * d_head}));
  }
};

struct SwiGLU {
  Linear fc1, fc2;
  Residual residual;
  at::Tensor operator()(const at::Tensor& x) const {
    auto parts = fc1(x).chunk(2, -1);  // (gate, a): SiLU on the second half
    return fc2(parts[0] * at::silu(parts[1]));
  }
};

class Toto2 final : public Architecture {
 public:
  Toto2(const Json& o, ArchitectureContext& ctx)
      : d_(o["d_model"].get<int64_t>()), eps_(o["norm_eps"].get<double>()) {
    const int64_t L = o["num_layers"], H = o["num_heads"];
    if (d_ % H != 0)
      throw Error("architecture plugin 'toto2': d_model " + std::to_string(d_) +
                  " is not divisible by num_heads " + std::to_string(H));
    const int64_t dh = d_ / H;
    const int64_t rope_dims = static_cast<int64_t>(dh * o["rope_fraction"].get<double>()) / 2 * 2;
    int64_t d_ff = o["d_ff"];
    if (d_ff == 0) d_ff = default_d_ff(d_);
    ParamFactory& f = ctx.params;
    const Parametrisation& p = f.parametrisation();

    patch_proj_ = ResidualMLP(f, "patch_proj", 2 * ctx.patch_size, 4 * d_, d_, Role::input, Role::hidden);
    for (int i = 0; i < L; ++i) {
      auto scope = f.scope("layers." + std::to_string(i));
      Attention a{Linear(f, "attn.in_proj", d_, 3 * d_, Role::hidden, o["attn_bias"], i),
                  Linear(f, "attn.out_proj", d_, d_, Role::hidden, o["attn_bias"], i),
                  H, dh, rope_dims, p.attention_scale(dh), o["rope_base"],
                  Residual(p, 2 * i, 2 * static_cast<int>(L))};
      SwiGLU m{Linear(f, "mlp.fc1", d_, 2 * d_ff, Role::hidden, o["mlp_bias"], i),
               Linear(f, "mlp.fc2", d_ff, d_, Role::hidden, o["mlp_bias"], i),
               Residual(p, 2 * i + 1, 2 * static_cast<int>(L))};
      attn_.push_back(std::move(a));
      mlp_.push_back(std::move(m));
    }
  }

  int64_t d_model() const override { return d_; }

  at::Tensor forward(const PatchInput& in) override {
    const int64_t B = in.tokens.size(0), V = in.tokens.size(1), N = in.tokens.size(2);
    at::Tensor x = patch_proj_(in.tokens).reshape({B * V, N, d_});
    at::Tensor mask = time_mask(in.patch_valid.reshape({B * V, N}));
    for (size_t i = 0; i < attn_.size(); ++i) {
      x = attn_[i].residual(attn_[i](rms_norm(x, eps_), mask), x);
      x = mlp_[i].residual(mlp_[i](rms_norm(x, eps_)), x);
    }
    return rms_norm(x, eps_).reshape({B, V, N, d_});
  }

 private:
  // Causal over patches; patches with no observation are hidden from every other query (each
  // still sees itself, so no row is empty). Undefined when all patches are valid: the fast path.
  static at::Tensor time_mask(const at::Tensor& valid) {
    if (valid.all().item<bool>()) return {};
    const int64_t N = valid.size(1);
    at::Tensor causal = at::ones({N, N}, valid.options()).tril();
    at::Tensor self = at::eye(N, valid.options());
    return (causal & (valid.unsqueeze(1) | self)).unsqueeze(1);  // (S, 1, N, N)
  }

  int64_t d_;
  double eps_;
  ResidualMLP patch_proj_;
  std::vector<Attention> attn_;
  std::vector<SwiGLU> mlp_;
};

OptionSchema schema() {
  return OptionSchema{}
      .integer("d_model", 256, "model width", 8, 65536)
      .integer("num_layers", 4, "transformer layers", 1, 1024)
      .integer("num_heads", 4, "attention heads (d_model / num_heads = head dimension)", 1, 1024)
      .integer("d_ff", 0, "SwiGLU hidden width; 0 = 8*d_model/3 rounded up to a multiple of 8", 0)
      .number("norm_eps", 1e-4, "RMSNorm epsilon", 0.0)
      .boolean("attn_bias", true, "biases on the attention projections")
      .boolean("mlp_bias", false, "biases on the SwiGLU projections")
      .number("rope_fraction", 0.5, "fraction of each head's dimensions that are rotated", 0.0, 1.0)
      .number("rope_base", 10000.0, "rotary frequency base", 1.0);
}

std::unique_ptr<Architecture> make(const Json& o, ArchitectureContext& ctx) {
  return std::make_unique<Toto2>(o, ctx);
}

}  // namespace

ORRERY_PLUGIN(architecture, "toto2", "0.1.0",
              "Toto 2.0 patched transformer: residual-MLP patch embedding, causal time attention "
              "with partial RoPE, SwiGLU, RMSNorm",
              schema, make)
