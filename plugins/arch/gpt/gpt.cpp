// nanochat's GPT (Karpathy, 2025-26; nanochat/gpt.py), a decoder over token ids:
//
//   ids --wte--> norm --> x;  x0 = x
//   L x [ x = lambda_i x + mu_i x0                        per-layer residual and x0 scalars
//         x = x (+) Attn(norm(x), ve_i(ids))              rotary, QK norm, causal, a window per layer
//         x = x (+) MLP(norm(x)) ]                        ReLU^2, 4 d wide
//   norm(x) -> hidden states; the head (categorical) unembeds, soft-caps and scores them.
//
// norm is RMSNorm without weights. Value embeddings (ResFormer) sit on alternating layers, the
// last always among them: the layer's values gain a token embedding of their own through an
// input gate 2 sigmoid(W x[:32]), 1 at init. The window pattern (e.g. "SSSL") is tiled over the
// layers, S seeing the last sequence_len / 2 positions, L all of them, the last layer always L.
// Generation keeps each layer's keys and values (forward_cached), so a drawn token costs one
// position's work, as nanochat's engine does.
//
// Each row (series, variate) of a batch is one sequence, one token per patch (patch_size 1),
// read from the host's unscaled input, which the categorical head asks for. As in every
// architecture here, inits, multipliers, residual weights and the softmax scale come from the
// parametrisation, so SP, muP and u-muP apply unchanged; nanochat's own recipe is SP with its
// optimizer groups.
#include <ATen/ATen.h>

#include <cmath>
#include <algorithm>
#include <limits>

#include "orrery/class_ids.h"
#include "orrery/error.h"
#include "orrery/ops.h"
#include "orrery/plugin.h"

namespace {
using namespace orrery;

// nanochat's value-embedding layers: alternating, the last one always included.
bool has_value_embedding(int64_t layer, int64_t layers) { return layer % 2 == (layers - 1) % 2; }

// Rotary embedding as nanochat applies it: the head's two halves are the pair's two coordinates.
at::Tensor rotary(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  at::Tensor x1 = x.narrow(-1, 0, half), x2 = x.narrow(-1, half, half);
  return at::cat({x1 * cos + x2 * sin, x2 * cos - x1 * sin}, -1);
}

// Keys and values of one layer at every committed position, (S, kv_heads, capacity, d_head),
// after rotary and QK norm: all a later position's query reads of it.
struct LayerCache {
  at::Tensor k, v;
};

struct GptCache final : DecodeCache {
  std::vector<LayerCache> layers;
  int64_t capacity = 0;
};

// Where one call's tokens sit: after `cached` committed positions, the first `commit` of them
// joining the cache afterwards. No cache: a whole sequence from position 0.
struct Positions {
  LayerCache* cache = nullptr;
  int64_t cached = 0, commit = 0, capacity = 0;
};

struct Attention {
  Linear c_q, c_k, c_v, c_proj, ve_gate;  // ve_gate undefined on layers without value embeddings
  at::Tensor value_embedding;             // (vocab, kv_heads * d_head), or undefined
  double ve_multiplier = 1, scale = 1, eps = 0;
  int64_t heads = 1, kv_heads = 1, d_head = 1, gate_channels = 0, window = 0;  // window: keys back
  Residual residual;

  // x: (S, T, d) normalised, ids (S, T); cos/sin (T, d_head / 2) of the tokens' positions. The
  // query at position i sees keys j with 0 <= i - j <= window, cached ones included.
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& ids, const at::Tensor& cos, const at::Tensor& sin,
                        const Positions& pos, const ForwardContext& ctx) const {
    const int64_t S = x.size(0), T = x.size(1);
    at::Tensor q = c_q(x, ctx).view({S, T, heads, d_head});
    at::Tensor k = c_k(x, ctx).view({S, T, kv_heads, d_head});
    at::Tensor v = c_v(x, ctx).view({S, T, kv_heads, d_head});
    if (value_embedding.defined()) {
      at::Tensor ve = (at::embedding(value_embedding, ids) * ve_multiplier).view({S, T, kv_heads, d_head});
      at::Tensor gate = 2 * at::sigmoid(ve_gate(x.narrow(-1, 0, gate_channels), ctx));  // (S, T, kv_heads)
      v = v + gate.unsqueeze(-1) * ve.to(v.scalar_type());
    }
    const at::Tensor c = cos.unsqueeze(1).to(q.scalar_type()), s = sin.unsqueeze(1).to(q.scalar_type());
    q = rms_norm(rotary(q, c, s), eps).transpose(1, 2);  // (S, H, T, D)
    k = rms_norm(rotary(k, c, s), eps).transpose(1, 2);
    v = v.transpose(1, 2);
    const int64_t past = pos.cached;
    if (pos.cache) {  // the committed keys come first; this call's first `commit` join them
      LayerCache& kv = *pos.cache;
      if (!kv.k.defined()) {  // allocated at the first call, when the rows and dtype are known
        kv.k = at::empty({S, kv_heads, pos.capacity, d_head}, k.options());
        kv.v = at::empty({S, kv_heads, pos.capacity, d_head}, v.options());
      }
      if (pos.commit > 0) {
        kv.k.narrow(2, past, pos.commit).copy_(k.narrow(2, 0, pos.commit));
        kv.v.narrow(2, past, pos.commit).copy_(v.narrow(2, 0, pos.commit));
      }
      if (pos.commit == T) {  // all of them joined: read the cache in place
        k = kv.k.narrow(2, 0, past + T), v = kv.v.narrow(2, 0, past + T);
      } else {
        k = at::cat({kv.k.narrow(2, 0, past), k}, 2);
        v = at::cat({kv.v.narrow(2, 0, past), v}, 2);
      }
    }
    if (kv_heads != heads) {
      k = k.repeat_interleave(heads / kv_heads, 1);
      v = v.repeat_interleave(heads / kv_heads, 1);
    }
    at::Tensor y;
    if (past == 0 && window >= T - 1) {
      y = at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true, scale);
    } else {
      const auto longs = x.options().dtype(at::kLong);
      at::Tensor back = at::arange(past, past + T, longs).unsqueeze(1) - at::arange(past + T, longs).unsqueeze(0);
      y = at::scaled_dot_product_attention(q, k, v, (back >= 0) & (back <= window), 0.0, false, scale);
    }
    return c_proj(y.transpose(1, 2).reshape({S, T, heads * d_head}), ctx);
  }
};

struct Mlp {
  Linear c_fc, c_proj;
  double act_scale = 1;
  Residual residual;
  at::Tensor operator()(const at::Tensor& x, const ForwardContext& ctx) const {
    at::Tensor h = at::relu(c_fc(x, ctx)).square();
    return c_proj(act_scale == 1.0 ? h : h * act_scale, ctx);
  }
};

class Gpt final : public Architecture {
 public:
  Gpt(const Json& o, ArchitectureContext& ctx)
      : vocab_(o["vocab_size"]), d_(o["d_model"]), eps_(o["norm_eps"]), base_(o["rotary_base"]) {
    const int64_t L = o["num_layers"], H = o["num_heads"];
    const int64_t kv = o["num_kv_heads"].get<int64_t>() == 0 ? H : o["num_kv_heads"].get<int64_t>();
    const std::string pattern = o["window_pattern"];
    const int64_t sequence = o["sequence_len"];
    const auto fail = [](const std::string& what) { throw Error("architecture plugin 'gpt': " + what); };
    if (ctx.patch_size != 1)
      fail("it reads one token per position: give the model patch_size = 1, got " + std::to_string(ctx.patch_size));
    if (d_ % H != 0 || (d_ / H) % 2 != 0)
      fail("d_model " + std::to_string(d_) + " must split into num_heads " + std::to_string(H) +
           " heads of an even width (rotary embeddings rotate pairs)");
    if (H % kv != 0) fail("num_heads " + std::to_string(H) + " must be a multiple of num_kv_heads " + std::to_string(kv));
    if (pattern.empty() || pattern.find_first_not_of("SL") != std::string::npos)
      fail("window_pattern must be letters S (half the sequence) and L (all of it), e.g. \"SSSL\", got " +
           quote_input(pattern));
    d_head_ = d_ / H;

    ParamFactory& f = ctx.params;
    f.set_width(d_);
    const bool zero = o["zero_init_projections"];
    const int64_t gate = std::min(o["ve_gate_channels"].get<int64_t>(), d_);
    wte_ = f.make("wte.weight", Role::input, {vocab_, d_}, 1, d_);
    wte_multiplier_ = f.parametrisation().linear_multiplier(f.params().back().info);
    resid_lambdas_ = f.make("resid_lambdas", Role::gain, {L}, 1, 1, -1, ParamFactory::Init::zeros);
    x0_lambdas_ = f.make("x0_lambdas", Role::gain, {L}, 1, 1, -1, ParamFactory::Init::zeros);
    const double act_scale = f.parametrisation().activation_scale("relu2");
    f.set_stack_depth(static_cast<int>(L));
    const int branches = static_cast<int>(2 * L);
    for (int64_t i = 0; i < L; ++i) {
      auto scope = f.scope("layers." + std::to_string(i));
      const int depth = static_cast<int>(i);
      Attention a;
      a.c_q = Linear(f, "attn.c_q", d_, H * d_head_, Role::hidden, false, depth);
      a.c_k = Linear(f, "attn.c_k", d_, kv * d_head_, Role::hidden, false, depth);
      a.c_v = Linear(f, "attn.c_v", d_, kv * d_head_, Role::hidden, false, depth);
      a.c_proj = Linear(f, "attn.c_proj", H * d_head_, d_, Role::hidden, false, depth);
      if (has_value_embedding(i, L) && o["value_embeddings"].get<bool>()) {
        a.value_embedding = f.make("value_embedding.weight", Role::input, {vocab_, kv * d_head_}, 1, kv * d_head_);
        a.ve_multiplier = f.parametrisation().linear_multiplier(f.params().back().info);
        a.ve_gate = Linear(f, "attn.ve_gate", gate, kv, Role::hidden, false, depth);
        zero_(a.ve_gate.weight);  // the gate starts at 2 sigmoid(0) = 1
        a.gate_channels = gate;
      }
      a.heads = H, a.kv_heads = kv, a.d_head = d_head_, a.eps = eps_;
      a.scale = f.parametrisation().attention_scale(d_head_);
      const bool last = i == L - 1;
      a.window = pattern[static_cast<size_t>(i) % pattern.size()] == 'S' && !last ? sequence / 2 : sequence;
      a.residual = Residual(f, "attn.residual", 2 * depth, branches);
      Mlp m{Linear(f, "mlp.c_fc", d_, 4 * d_, Role::hidden, false, depth),
            Linear(f, "mlp.c_proj", 4 * d_, d_, Role::hidden, false, depth), act_scale,
            Residual(f, "mlp.residual", 2 * depth + 1, branches)};
      if (zero) zero_(a.c_proj.weight), zero_(m.c_proj.weight);  // each block starts as the identity
      layers_.push_back({std::move(a), std::move(m)});
    }
    f.set_stack_depth(0);
  }

  int64_t d_model() const override { return d_; }

  at::Tensor forward(const PatchInput& in, const ForwardContext& ctx) override { return run(in, nullptr, 0, ctx); }

  // Generation's KV cache: each layer's keys and values, so a new token costs one position's
  // work instead of the whole sequence's.
  std::unique_ptr<DecodeCache> new_cache(int64_t max_patches) override {
    auto c = std::make_unique<GptCache>();
    c->capacity = max_patches;
    c->layers.resize(layers_.size());
    return c;
  }

  at::Tensor forward_cached(const PatchInput& in, DecodeCache& cache, int64_t commit,
                            const ForwardContext& ctx) override {
    return run(in, &dynamic_cast<GptCache&>(cache), commit, ctx);
  }

  std::optional<StepFlops> step_flops(int64_t batch, int64_t variates, int64_t patches) const override {
    const double tokens = static_cast<double>(batch * variates * patches);
    double matrices = 0, attention = 0;
    for (const auto& [a, m] : layers_) {
      for (const Linear* l : {&a.c_q, &a.c_k, &a.c_v, &a.c_proj, &a.ve_gate, &m.c_fc, &m.c_proj})
        if (l->weight.defined()) matrices += static_cast<double>(l->weight.numel());
      const double keys = static_cast<double>(std::min(patches, a.window + 1));
      attention += 12 * tokens * keys * static_cast<double>(a.heads * a.d_head);
    }
    return StepFlops{6 * matrices * tokens, attention};
  }

 private:
  // One pass over the tokens of `in`; with a cache they follow its committed positions.
  at::Tensor run(const PatchInput& in, GptCache* cache, int64_t commit, const ForwardContext& ctx) {
    const int64_t B = in.tokens.size(0), V = in.tokens.size(1), T = in.tokens.size(2);
    const at::Tensor ids = token_ids(in.tokens.select(-1, 0), ctx.host_sync).reshape({B * V, T});
    Positions pos;
    if (cache) {
      prepare_cache(*cache, B * V, T, commit);
      pos.cached = cache->length, pos.commit = commit, pos.capacity = cache->capacity;
    }
    const auto [cos, sin] = rotary_table(pos.cached, T, ids.device());
    at::Tensor x = rms_norm(at::embedding(wte_, ids) * wte_multiplier_, eps_);
    const at::Tensor x0 = x;
    for (size_t i = 0; i < layers_.size(); ++i) {
      const auto& [attn, mlp] = layers_[i];
      const auto l = static_cast<int64_t>(i);
      pos.cache = cache ? &cache->layers[i] : nullptr;
      x = (1 + resid_lambdas_[l]) * x + (0.1 + x0_lambdas_[l]) * x0;  // nanochat's inits: 1 and 0.1
      x = attn.residual(x, [&](const at::Tensor& h) { return attn(rms_norm(h, eps_), ids, cos, sin, pos, ctx); }, ctx);
      x = mlp.residual(x, [&](const at::Tensor& h) { return mlp(rms_norm(h, eps_), ctx); }, ctx);
    }
    if (cache) cache->length += commit;
    return rms_norm(x, eps_).view({B, V, T, d_});
  }

  // Later calls must be the first call's rows and fit the capacity the cache was made for.
  static void prepare_cache(const GptCache& c, int64_t rows, int64_t T, int64_t commit) {
    if (commit < 0 || commit > T)
      throw Error("architecture plugin 'gpt': cannot commit " + std::to_string(commit) + " of " + std::to_string(T) +
                  " tokens");
    if (c.length + commit > c.capacity)
      throw Error("architecture plugin 'gpt': the decode cache holds " + std::to_string(c.capacity) +
                  " positions; " + std::to_string(c.length) + " are used and " + std::to_string(commit) + " more asked");
    if (!c.layers.empty() && c.layers.front().k.defined() && c.layers.front().k.size(0) != rows)
      throw Error("architecture plugin 'gpt': the decode cache was made for " +
                  std::to_string(c.layers.front().k.size(0)) + " sequences, got " + std::to_string(rows));
  }

  static void zero_(const at::Tensor& w) {
    at::NoGradGuard no_grad;
    w.zero_();
  }

  // The ids the values hold, refused unless every one is a whole number in [0, vocab_size)
  // (checked on the host, so not while a graph records the pass).
  at::Tensor token_ids(const at::Tensor& values, bool check) const {
    if (check && !are_class_ids(values, vocab_))
      throw Error("architecture plugin 'gpt' reads token ids 0 .. " + std::to_string(vocab_ - 1) +
                  " (vocab_size), and the data hold other values: train it on a text source whose tokenizer has "
                  "this vocabulary, with the categorical head");
    return values.to(at::kLong);
  }

  // cos and sin of position t times 1 / base^(2j / d_head) for t in [from, from + T),
  // (T, d_head / 2), in float32.
  std::pair<at::Tensor, at::Tensor> rotary_table(int64_t from, int64_t T, at::Device device) const {
    const auto opts = at::TensorOptions().dtype(at::kFloat).device(device);
    at::Tensor inv = at::pow(base_, at::arange(0, d_head_, 2, opts) / static_cast<double>(d_head_)).reciprocal();
    at::Tensor angles = at::outer(at::arange(from, from + T, opts), inv);
    return {angles.cos(), angles.sin()};
  }

  int64_t vocab_, d_, d_head_ = 1;
  double eps_, base_, wte_multiplier_ = 1;
  at::Tensor wte_, resid_lambdas_, x0_lambdas_;
  std::vector<std::pair<Attention, Mlp>> layers_;
};

OptionSchema schema() {
  return OptionSchema{}
      .integer("vocab_size", 4096, "token ids the model reads: the tokenizer's vocabulary (the text source's)", 2,
               1 << 24)
      .integer("d_model", 128, "width", 2, 65536)
      .integer("num_layers", 4, "transformer blocks", 1, 1024)
      .integer("num_heads", 4, "query heads (d_model / num_heads wide, even)", 1, 1024)
      .integer("num_kv_heads", 0, "key/value heads, a divisor of num_heads (grouped queries); 0 = num_heads", 0, 1024)
      .integer("sequence_len", 256, "the context the windows are measured in (train at most this long): S layers "
               "see the last half of it, L layers all of it", 2, 1 << 24)
      .string("window_pattern", "SSSL", "each layer's window, the pattern tiled over the layers (S half the sequence, "
              "L all of it); the last layer is always L")
      .boolean("value_embeddings", true, "value embeddings with an input gate on alternating layers (the last always)")
      .integer("ve_gate_channels", 32, "leading channels of the input the value-embedding gate reads", 1, 65536)
      .boolean("zero_init_projections", true, "start each block's output projections at zero (each block the "
               "identity), as nanochat does")
      .number("rotary_base", 10000.0, "rotary embedding base", 1.0)
      .number("norm_eps", std::numeric_limits<float>::epsilon(), "RMSNorm epsilon (float32's, as F.rms_norm's default)",
              0.0);
}

std::unique_ptr<Architecture> make(const Json& o, ArchitectureContext& ctx) { return std::make_unique<Gpt>(o, ctx); }

}  // namespace

ORRERY_PLUGIN(architecture, "gpt", "0.1.0",
              "nanochat's GPT over token ids: rotary, QK norm, ReLU^2 MLP, value embeddings, per-layer residual and "
              "x0 scalars, sliding windows by pattern, a KV cache for generation (use with the categorical head and patch_size 1)",
              schema, make)
