// Toto 2.0 (Datadog, 2026), section 2: a patched decoder-only transformer.
//
//   patch tokens (B, V, N, 64) --InputResidualMLP(64 -> 4d -> d)--> x
//   L x [ x = x (+) Attn(RMSNorm(x));  x = x (+) SwiGLU(RMSNorm(x)) ]   (+) = residual rule
//   RMSNorm(x) -> hidden states; the head plugin maps them to the next patch.
//
// Two kinds of layer share one block. Time layers attend causally over the patches of one
// variate, with partial rotary embeddings (xPos) on the first half of each head. Variate layers
// attend fully across the variates at the same patch, only between equal series ids. Patches
// with no observation get group id -1 and are seen only by their own kind.
//
// An extension beyond the paper (`variate_attention = "joint"`): variate layers that attend across
// the variates and along time at once, causally, with the time layers' rotary positions. A
// target's patch then reads a covariate's earlier patches directly (a lagged effect) instead of
// only through the covariate row's own time layers; the cost is (V N)^2 per series group. Every scale (init,
// linear multipliers, gradient scales, residual weights, attention softmax scale) comes from the
// parametrisation through the shared ops, so this file holds no branch on which one is active.
#include <ATen/ATen.h>

#include <cmath>

#include "orrery/batch.h"
#include "orrery/error.h"
#include "orrery/ops.h"
#include "orrery/plugin.h"
#include "shape.h"

namespace {
using namespace orrery;

// Rotary embedding on the first `dims` of each head, interleaved pairs (0,1), (2,3), ..., at
// patch positions `pos` (T). With xPos (`xpos_sign` +1 for queries, -1 for keys) pair i is also
// scaled by zeta_i^(+-(pos - centre)/256). The centre cancels in q.k when queries and keys share
// it (a single pass); cached keys keep the centre of the call that made them. The angles' cosines
// and sines, the xPos scale folded in, depend only on the positions: one table per call serves
// every time layer.
struct RotaryTable {
  at::Tensor cos, sin;  // (T, dims) float32
};

RotaryTable rotary_table(const at::Tensor& pos, int64_t dims, double base, double xpos_sign, double centre) {
  at::Tensor pair = at::arange(0, dims, 2, pos.options());  // 2i
  at::Tensor theta = at::reciprocal(at::pow(base, pair / double(dims)));
  at::Tensor angles = at::outer(pos, theta).repeat_interleave(2, -1);  // (T, dims)
  RotaryTable t{angles.cos(), angles.sin()};
  if (xpos_sign != 0) {
    at::Tensor zeta = (pair + 0.4 * dims) / (1.4 * dims);  // (dims/2)
    at::Tensor power = (pos - centre) / 256.0;                 // (T)
    at::Tensor s = at::pow(zeta.unsqueeze(0), (xpos_sign * power).unsqueeze(1)).repeat_interleave(2, -1);
    t.cos = t.cos * s, t.sin = t.sin * s;
  }
  return t;
}

at::Tensor rotary(const at::Tensor& x, const RotaryTable& t) {
  const int64_t dims = t.cos.size(-1);
  at::Tensor head = x.narrow(-1, 0, dims), tail = x.narrow(-1, dims, x.size(-1) - dims);
  at::Tensor pairs = head.unflatten(-1, {dims / 2, 2});
  at::Tensor rotated = at::stack({-pairs.select(-1, 1), pairs.select(-1, 0)}, -1).flatten(-2);
  at::Tensor out = head * t.cos.to(x.scalar_type()) + rotated * t.sin.to(x.scalar_type());
  return at::cat({out, tail}, -1);
}

// Keys and values of one layer for every committed patch: a time layer's (S, H, max_patches,
// d_head) by row; a joint variate layer's (B, H, max_patches V, d_head), patch-major (the V rows
// of patch 0, then of patch 1, ...), so the committed tokens are always a prefix.
struct LayerCache {
  at::Tensor k, v;
};

struct Toto2Cache final : DecodeCache {
  std::vector<LayerCache> layers;  // by layer index (variate layers across one patch: empty)
  at::Tensor group;                // (S, max_patches) group ids of the committed patches
  double centre = 0;               // xPos centre of the session, fixed by its first call
  int64_t capacity = 0;
};

// Where the tokens of one call sit along time.
struct TimePositions {
  RotaryTable queries, keys;  // undefined without rotary dimensions
  LayerCache* cache = nullptr;
  int64_t cached = 0;   // committed tokens before this call
  int64_t commit = 0;   // tokens of this call that join the cache
};

struct Attention {
  Linear in_proj, out_proj;
  Gain per_dim;  // PerDimScale p (d_head), undefined when off: q <- q * softplus(p)/ln 2
  int64_t heads = 1, d_head = 1;
  double scale = 1, eps = 1e-4;
  bool qk_norm = false;
  Residual residual;

  // x: (S, T, d). Time layers pass `time` (causal, rotary, maybe cached); variate layers do not.
  // An undefined mask on a time layer takes the fused causal path.
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& mask, const TimePositions* time,
                        const ForwardContext& ctx) const {
    const int64_t S = x.size(0), T = x.size(1);
    auto qkv = in_proj(x, ctx).unflatten(-1, {3, heads, d_head}).permute({2, 0, 3, 1, 4});  // 3,S,H,T,dh
    at::Tensor q = qkv[0], k = qkv[1], v = qkv[2];
    if (qk_norm) q = rms_norm(q, eps), k = rms_norm(k, eps);
    if (per_dim.weight.defined())
      q = q * (at::softplus(per_dim.applied_to(q, ctx)) / std::log(2.0)).to(q.scalar_type());
    if (time && time->queries.cos.defined()) {  // positions exist only along time
      q = rotary(q, time->queries);
      k = rotary(k, time->keys);
    }
    if (time && time->cache) {
      LayerCache& c = *time->cache;
      if (!c.k.defined()) throw Error("architecture plugin 'toto2': decode cache not allocated");
      at::Tensor k_new = k, v_new = v;
      if (time->cached > 0) {
        k = at::cat({c.k.narrow(2, 0, time->cached), k}, 2);
        v = at::cat({c.v.narrow(2, 0, time->cached), v}, 2);
      }
      if (time->commit > 0) {
        c.k.narrow(2, time->cached, time->commit).copy_(k_new.narrow(2, 0, time->commit));
        c.v.narrow(2, time->cached, time->commit).copy_(v_new.narrow(2, 0, time->commit));
      }
    }
    at::Tensor o = mask.defined()
        ? at::scaled_dot_product_attention(q, k, v, mask, 0.0, false, scale)
        : at::scaled_dot_product_attention(q, k, v, {}, 0.0, time != nullptr, scale);
    return out_proj(o.transpose(1, 2).reshape({S, T, heads * d_head}), ctx);
  }
};

struct SwiGLU {
  Linear fc1, fc2;
  Residual residual;
  at::Tensor operator()(const at::Tensor& x, const ForwardContext& ctx) const {
    auto parts = fc1(x, ctx).chunk(2, -1);  // (gate, a): SiLU on the second half
    return fc2(parts[0] * at::silu(parts[1]), ctx);
  }
};

struct Layer {
  bool variate = false;
  bool joint = false;  // a variate layer that also attends to earlier patches (variate_attention)
  Attention attn;
  SwiGLU ffn;
};

class Toto2 final : public Architecture {
 public:
  Toto2(const Json& o, ArchitectureContext& ctx) : eps_(o["norm_eps"].get<double>()) {
    const toto2::Shape shape = toto2::shape_of(o);
    d_ = shape.d_model;
    const int64_t L = shape.num_layers, H = shape.num_heads, G = shape.layer_group_size,
                  n_v = shape.variate_layers_per_group;
    auto fail = [](const std::string& m) { return Error("architecture plugin 'toto2': " + m); };
    const bool variate_first = o["variate_layer_first"];
    const int64_t dh = d_ / H;
    const int64_t rope_dims = static_cast<int64_t>(dh * o["rope_fraction"].get<double>()) / 2 * 2;
    const int64_t d_ff = shape.d_ff;
    ParamFactory& f = ctx.params;
    const Parametrisation& p = f.parametrisation();
    const int branches = 2 * static_cast<int>(L);
    f.set_width(d_);

    // Parameter names are those of the released model (toto2/model.py), so a Hugging Face
    // checkpoint loads by name.
    patch_proj_ = ResidualMLP(f, "patch_proj", 2 * ctx.patch_size, 4 * d_, d_, Role::input, Role::hidden);
    f.set_stack_depth(static_cast<int>(L));
    for (int i = 0; i < L; ++i) {
      auto scope = f.scope("transformer.layers." + std::to_string(i));
      Layer layer;
      layer.variate = variate_first ? (i % G < n_v) : (i % G >= G - n_v);
      layer.joint = layer.variate && o["variate_attention"].get<std::string>() == "joint";
      Attention& a = layer.attn;
      a.in_proj = Linear(f, "attn.in_proj", d_, 3 * d_, Role::hidden, o["attn_bias"], i);
      a.out_proj = Linear(f, "attn.out_proj", d_, d_, Role::hidden, o["attn_bias"], i);
      if (o["per_dim_scale"]) a.per_dim = Gain(f, "attn._pds.per_dim_scale", dh, i, ParamFactory::Init::zeros);
      a.heads = H, a.d_head = dh;
      a.scale = p.attention_scale(dh), a.qk_norm = o["qk_norm"], a.eps = eps_;
      a.residual = Residual(f, "attn.residual", 2 * i, branches);
      layer.ffn = SwiGLU{Linear(f, "ffn.fc1", d_, 2 * d_ff, Role::hidden, o["mlp_bias"], i),
                         Linear(f, "ffn.fc2", d_ff, d_, Role::hidden, o["mlp_bias"], i),
                         Residual(f, "ffn.residual", 2 * i + 1, branches)};
      has_joint_ = has_joint_ || layer.joint;
      layers_.push_back(std::move(layer));
    }
    f.set_stack_depth(0);
    // Covariates (Toto 1.0's exogenous labels, as a vector added to every patch of a row): what
    // each row is to its series, target, past-only or known-future covariate. Zero at init, so
    // a pretrained model given role embeddings forecasts its targets as before.
    if (o["variate_roles"])
      role_embedding_ = f.make("role_embedding", Role::bias, {kVariateRoles, d_}, 1, d_, -1, ParamFactory::Init::zeros);
    // Static covariates (one value per series: a store's size, a product's price band): a vector
    // per covariate, scaled by its value (asinh of it, from the host) and added to every patch of
    // the series' rows, as the role embedding is. A row is scaled by its own history, so a value
    // that never changes could not enter as a row: it would read as zero. Zero at init, so a
    // pretrained model given static covariates forecasts as before and learns them in fine-tuning.
    static_names_ = string_list(o["static_covariates"]);
    for (size_t i = 0; i < static_names_.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (static_names_[i] == static_names_[j]) throw fail("static_covariates names '" + static_names_[i] + "' twice");
    if (!static_names_.empty())
      static_embedding_ = f.make("static_embedding", Role::bias, {static_cast<int64_t>(static_names_.size()), d_}, 1, d_,
                                 -1, ParamFactory::Init::zeros);
    // How well each covariate row matches its target so far, as the host measures it once the
    // known-future rows are aligned by lag (the model's covariate_lags): its running correlation
    // r as [r, |r|], each times a learned vector added to the row's patches. A covariate that
    // explains the target says so, and by its sign which way; one that does not (noise) says that
    // too, which the patches alone tell the model poorly (docs/covariates.md). Zero at init, as
    // the role embedding.
    if (o["covariate_match"]) {
      if (!role_embedding_.defined()) throw fail("covariate_match reads covariate rows: it needs variate_roles = true");
      match_embedding_ = f.make("match_embedding", Role::bias, {2, d_}, 1, d_, -1, ParamFactory::Init::zeros);
    }
    session_centre_ = o["xpos_centre"].get<std::string>() == "session";
    rope_dims_ = rope_dims, rope_base_ = o["rope_base"], xpos_ = o["use_xpos"];
  }

  int64_t d_model() const override { return d_; }
  bool reads_roles() const override { return role_embedding_.defined(); }
  std::vector<std::string> static_covariates() const override { return static_names_; }
  bool reads_covariate_match() const override { return match_embedding_.defined(); }

  // Every matrix once per patch token; attention at the full S^2: a time layer over the N
  // patches of each variate, a variate layer over the V variates at each patch, a joint one over
  // all V N tokens of a window.
  std::optional<StepFlops> step_flops(int64_t batch, int64_t variates, int64_t patches) const override {
    double matrices = 0, time = 0, across = 0, joint = 0;
    for (const Linear* l : {&patch_proj_.linear1, &patch_proj_.linear2, &patch_proj_.skip_proj})
      matrices += static_cast<double>(l->weight.numel());
    for (const Layer& l : layers_) {
      for (const Linear* m : {&l.attn.in_proj, &l.attn.out_proj, &l.ffn.fc1, &l.ffn.fc2})
        matrices += static_cast<double>(m->weight.numel());
      (l.joint ? joint : l.variate ? across : time) += 1;
    }
    const double B = static_cast<double>(batch), V = static_cast<double>(variates), N = static_cast<double>(patches);
    return StepFlops{6 * matrices * B * V * N, 3 * 4 * static_cast<double>(d_) *
                                                   (time * B * V * N * N + across * B * N * V * V + joint * B * V * N * V * N)};
  }

  at::Tensor forward(const PatchInput& in, const ForwardContext& ctx) override {
    return run(in, nullptr, 0, ctx);
  }

  std::unique_ptr<DecodeCache> new_cache(int64_t max_patches) override {
    auto c = std::make_unique<Toto2Cache>();
    c->capacity = max_patches;
    c->layers.resize(layers_.size());
    return c;
  }

  at::Tensor forward_cached(const PatchInput& in, DecodeCache& cache, int64_t commit,
                            const ForwardContext& ctx) override {
    return run(in, &dynamic_cast<Toto2Cache&>(cache), commit, ctx);
  }

 private:
  // One pass over the patches of `in`; with a cache they follow its committed patches.
  at::Tensor run(const PatchInput& in, Toto2Cache* cache, int64_t commit, const ForwardContext& ctx) {
    const int64_t B = in.tokens.size(0), V = in.tokens.size(1), N = in.tokens.size(2);
    const int64_t cached = cache ? cache->length : 0;
    if (cache) prepare_cache(*cache, B, V, N, commit, in.tokens);
    at::Tensor x = patch_proj_(in.tokens, ctx);  // (B, V, N, d)
    if (role_embedding_.defined()) {  // every row a target unless roles say otherwise
      const at::Tensor roles = in.roles.defined() ? in.roles : at::zeros({B, V}, in.series_ids.options());
      x = x + role_embedding_.index_select(0, roles.flatten()).view({B, V, 1, d_}).to(x.scalar_type());
    }
    if (static_embedding_.defined())  // (B, V, S) x (S, d): the same vector at every patch of a row
      x = x + at::matmul(in.statics.to(x.scalar_type()), static_embedding_.to(x.scalar_type())).unsqueeze(2);
    if (match_embedding_.defined() && in.covariate_match.defined()) {  // (B, V, N, 2) x (2, d); none without covariates
      const at::Tensor r = in.covariate_match.to(x.scalar_type()).unsqueeze(-1);
      x = x + at::matmul(at::cat({r, r.abs()}, -1), match_embedding_.to(x.scalar_type()));
    }
    // Group ids: the series id, or -1 for a patch with no observation.
    at::Tensor gid = at::where(in.patch_valid, in.series_ids.unsqueeze(-1).expand({B, V, N}),
                               at::full({}, -1, in.series_ids.options()));
    at::Tensor time_gid = gid.reshape({B * V, N});
    TimePositions time;
    const at::Tensor pos = at::arange(cached, cached + N, in.tokens.options().dtype(at::kFloat));
    // xPos centre: that of this call's positions, as the released decoder does (its cached keys
    // keep the centre of the call that made them), or one centre per decoding session, which
    // makes the cache exactly equal to recomputation. Without a cache the centre cancels.
    const double centre = cache && session_centre_ ? cache->centre : std::floor((cached + N) / 2.0);
    if (rope_dims_ > 0) {
      time.queries = rotary_table(pos, rope_dims_, rope_base_, xpos_ ? 1.0 : 0.0, centre);
      time.keys = rotary_table(pos, rope_dims_, rope_base_, xpos_ ? -1.0 : 0.0, centre);
    }
    time.cached = cached, time.commit = commit;
    at::Tensor time_mask = cache ? cached_time_mask(time_gid, *cache) : group_mask(time_gid, true, ctx.host_sync);
    at::Tensor variate_mask = group_mask(gid.permute({0, 2, 1}).reshape({B * N, V}), false, ctx.host_sync);
    // Joint variate layers: the window's tokens patch-major, (B, N V), each at its patch's position.
    TimePositions joint = time;
    at::Tensor joint_mask;
    if (has_joint_) {
      if (rope_dims_ > 0) {
        joint.queries = {time.queries.cos.repeat_interleave(V, 0), time.queries.sin.repeat_interleave(V, 0)};
        joint.keys = {time.keys.cos.repeat_interleave(V, 0), time.keys.sin.repeat_interleave(V, 0)};
      }
      joint.cached = cached * V, joint.commit = commit * V;
      joint_mask = joint_time_mask(gid, cache, cached);
    }
    for (size_t i = 0; i < layers_.size(); ++i) {
      const Layer& l = layers_[i];
      if (l.joint) {  // (B, N*V, d): across variates and causally along time
        joint.cache = cache ? &cache->layers[i] : nullptr;
        at::Tensor xj = x.permute({0, 2, 1, 3}).reshape({B, N * V, d_});
        xj = l.attn.residual(xj, [&](const at::Tensor& h) {
          return l.attn(rms_norm(h, eps_), joint_mask, &joint, ctx);
        }, ctx);
        x = xj.reshape({B, N, V, d_}).permute({0, 2, 1, 3});
      } else if (l.variate) {  // (B*N, V, d): across variates at one patch
        at::Tensor xv = x.permute({0, 2, 1, 3}).reshape({B * N, V, d_});
        xv = l.attn.residual(xv, [&](const at::Tensor& h) {
          return l.attn(rms_norm(h, eps_), variate_mask, nullptr, ctx);
        }, ctx);
        x = xv.reshape({B, N, V, d_}).permute({0, 2, 1, 3});
      } else {  // (B*V, N, d): causal along time
        time.cache = cache ? &cache->layers[i] : nullptr;
        at::Tensor xt = x.reshape({B * V, N, d_});
        xt = l.attn.residual(xt, [&](const at::Tensor& h) {
          return l.attn(rms_norm(h, eps_), time_mask, &time, ctx);
        }, ctx);
        x = xt.reshape({B, V, N, d_});
      }
      x = l.ffn.residual(x, [&](const at::Tensor& h) { return l.ffn(rms_norm(h, eps_), ctx); }, ctx);
    }
    if (cache) {
      if (commit > 0) cache->group.narrow(1, cached, commit).copy_(time_gid.narrow(1, 0, commit));
      cache->length += commit;
    }
    return rms_norm(x, eps_);
  }

  // Allocates the cache on its first call (the batch shape is known only then) and checks that
  // later calls fit it.
  void prepare_cache(Toto2Cache& c, int64_t B, int64_t V, int64_t N, int64_t commit, const at::Tensor& like) {
    const int64_t S = B * V;
    if (commit < 0 || commit > N)
      throw Error("architecture plugin 'toto2': cannot commit " + std::to_string(commit) + " of " +
                  std::to_string(N) + " patches");
    if (c.length + commit > c.capacity)
      throw Error("architecture plugin 'toto2': decode cache holds " + std::to_string(c.capacity) +
                  " patches, " + std::to_string(c.length + commit) + " requested");
    if (!c.group.defined()) {
      const int64_t H = layers_.front().attn.heads, dh = layers_.front().attn.d_head;
      for (size_t i = 0; i < layers_.size(); ++i) {
        if (layers_[i].variate && !layers_[i].joint) continue;
        const std::vector<int64_t> shape = layers_[i].joint ? std::vector<int64_t>{B, H, c.capacity * V, dh}
                                                            : std::vector<int64_t>{S, H, c.capacity, dh};
        c.layers[i].k = at::empty(shape, like.options());
        c.layers[i].v = at::empty(shape, like.options());
      }
      c.group = at::empty({S, c.capacity}, like.options().dtype(at::kLong));
      c.centre = std::floor(N / 2.0);  // as a single pass over the first call's patches
    } else if (c.group.size(0) != S) {
      throw Error("architecture plugin 'toto2': decode cache was built for " +
                  std::to_string(c.group.size(0)) + " series, this call has " + std::to_string(S));
    }
  }

  // (S, 1, T, T) bool: query t sees key s iff their group ids agree (and s <= t when causal).
  // Undefined when nothing would be hidden beyond causality: the fused attention path. Finding
  // that out reads the ids on the host, so without `host_sync` the mask is always built.
  static at::Tensor group_mask(const at::Tensor& gid, bool causal, bool host_sync) {
    if (host_sync && (gid == gid.select(1, 0).unsqueeze(1)).all().item<bool>()) return {};
    at::Tensor same = gid.unsqueeze(2) == gid.unsqueeze(1);  // (S, T_q, T_k)
    if (causal) same = same & at::ones({gid.size(1), gid.size(1)}, same.options()).tril();
    return same.unsqueeze(1);
  }

  // The same rule against the cached patches: (S, 1, T, cached + T).
  static at::Tensor cached_time_mask(const at::Tensor& gid, const Toto2Cache& c) {
    const int64_t T = gid.size(1), n = c.length;
    at::Tensor keys = n > 0 ? at::cat({c.group.narrow(1, 0, n), gid}, 1) : gid;
    at::Tensor same = gid.unsqueeze(2) == keys.unsqueeze(1);
    at::Tensor causal = at::ones({T, n + T}, same.options()).tril(n);
    return (same & causal).unsqueeze(1);
  }

  // (B, 1, N V, (cached + N) V) bool for joint layers: token (v, n) sees token (v', n') of this
  // call or the cache iff their group ids agree and n' <= n. Always built: causality along time
  // is not causality along the patch-major token order, so the fused path cannot serve.
  static at::Tensor joint_time_mask(const at::Tensor& gid, const Toto2Cache* c, int64_t cached) {
    const int64_t B = gid.size(0), V = gid.size(1), N = gid.size(2);
    at::Tensor queries = gid.permute({0, 2, 1}).reshape({B, N * V});
    at::Tensor keys = queries;
    if (c && cached > 0) {
      at::Tensor past = c->group.view({B, V, c->capacity}).narrow(2, 0, cached).permute({0, 2, 1}).reshape({B, cached * V});
      keys = at::cat({past, queries}, 1);
    }
    const auto opts = gid.options();
    at::Tensor t_q = at::arange(cached, cached + N, opts).repeat_interleave(V);
    at::Tensor t_k = at::arange(0, cached + N, opts).repeat_interleave(V);
    at::Tensor same = queries.unsqueeze(2) == keys.unsqueeze(1);
    return (same & (t_k.unsqueeze(0) <= t_q.unsqueeze(1))).unsqueeze(1);
  }

  int64_t d_ = 0;
  bool has_joint_ = false;  // some variate layer attends along time too
  bool session_centre_ = false;
  int64_t rope_dims_ = 0;  // rotated dimensions of each head, the same in every time layer
  double rope_base_ = 1e4;
  bool xpos_ = false;
  double eps_;
  ResidualMLP patch_proj_;
  at::Tensor role_embedding_;  // (3, d) by VariateRole; undefined without variate_roles
  std::vector<std::string> static_names_;
  at::Tensor static_embedding_;  // (S, d) by static covariate; undefined without static_covariates
  at::Tensor match_embedding_;   // (2, d) for [r, |r|]; undefined without covariate_match
  std::vector<Layer> layers_;
};

OptionSchema schema() {
  std::vector<std::string> presets = {""};
  for (const auto& p : toto2::kPresets) presets.push_back(p.name);
  return OptionSchema{}
      .string("preset", "", "published size; sets d_model, num_layers, num_heads left at 0", presets)
      .integer("d_model", 0, "model width; 0 = from the preset, else 256", 0, 65536)
      .integer("num_layers", 0, "transformer layers; 0 = from the preset, else 4", 0, 1024)
      .integer("num_heads", 0, "attention heads; 0 = from the preset, else 4", 0, 1024)
      .integer("layer_group_size", 0, "layers per group; 0 = num_layers (one group)", 0)
      .integer("num_variate_layers_per_group", 1, "variate layers in each group", 0)
      .string("variate_attention", "patch",
              "what a variate layer attends to: patch (the variates at the same patch, as Toto 2.0) or joint "
              "(the variates at this and every earlier patch, with the time layers' rotary positions: a lagged "
              "covariate is read directly; decoding caches its keys as time layers do)",
              {"patch", "joint"})
      .boolean("variate_layer_first", false, "variate layers open the group (else close it)")
      .integer("d_ff", 0, "SwiGLU hidden width; 0 = 8*d_model/3 rounded up to a multiple of 8", 0)
      .number("norm_eps", 1e-4, "RMSNorm epsilon", 0.0)
      .boolean("qk_norm", false, "RMS-normalise queries and keys per head (no weights)")
      .boolean("attn_bias", true, "biases on the attention projections")
      .boolean("mlp_bias", false, "biases on the SwiGLU projections")
      .boolean("per_dim_scale", true, "learned per-head-dimension query scale softplus(p)/ln 2")
      .boolean("use_xpos", true, "xPos decay on the rotary dimensions of time layers")
      .string("xpos_centre", "per_call",
              "xPos centre in block decoding: per_call (as the released decoder) or session "
              "(one per forecast: the KV cache then equals recomputation exactly)",
              {"per_call", "session"})
      .number("rope_fraction", 0.5, "fraction of each head's dimensions that are rotated", 0.0, 1.0)
      .number("rope_base", 10000.0, "rotary frequency base", 1.0)
      .boolean("variate_roles", false,
               "covariates: a learned embedding of each row's role (target, past-only or known-future "
               "covariate) added to its patches; the variate layers mix covariates into the targets")
      .boolean("covariate_match", false,
               "with the model's covariate_lags: each covariate row also reads how well it matches its target so "
               "far (its running correlation, causal, known-future rows once aligned by lag), as a learned vector "
               "added to its patches (zero at init; needs variate_roles)")
      .strings("static_covariates", "",
               "static covariates the model reads, by name (a list or comma-separated): one value per series, "
               "each a learned vector scaled by asinh of the value and added to the series' patches (zero at "
               "init: learned in fine-tuning; a categorical one is a 0/1 value per category, named "
               "\"column=category\" as a data source's describe() lists them; docs/covariates.md)");
}

std::unique_ptr<Architecture> make(const Json& o, ArchitectureContext& ctx) {
  return std::make_unique<Toto2>(o, ctx);
}

}  // namespace

ORRERY_PLUGIN(architecture, "toto2", "0.4.0",
              "Toto 2.0 patched transformer: residual-MLP patch embedding, causal time layers "
              "(partial RoPE with xPos, PerDimScale) and variate layers across series ids, "
              "SwiGLU, RMSNorm; presets toto2-4m .. toto2-2.5b",
              schema, make)
