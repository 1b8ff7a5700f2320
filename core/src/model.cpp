#include "orrery/model.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "orrery/error.h"
#include "orrery/patching.h"
#include "orrery/registry.h"

namespace orrery {

Json PluginSpec::to_json() const { return {{"name", name}, {"options", options}}; }

ModelSpec ModelSpec::from_json(const Json& j) {
  auto plugin = [&](const char* key) {
    if (!j.contains(key) || !j[key].contains("name") || !j[key]["name"].is_string())
      throw Error(std::string("model spec lacks ") + key + ".name");
    return PluginSpec{j[key]["name"], j[key].value("options", Json::object())};
  };
  ModelSpec s;
  s.arch = plugin("arch"), s.head = plugin("head"), s.param = plugin("param");
  s.patch_size = j.value("patch_size", s.patch_size);
  s.seed = j.value("seed", s.seed);
  s.device = j.value("device", s.device);
  return s;
}

Json ModelSpec::to_json() const {
  return {{"arch", arch.to_json()}, {"head", head.to_json()}, {"param", param.to_json()},
          {"patch_size", patch_size}, {"seed", seed}, {"device", device}};
}

struct Model::Prepared {
  PatchInput in;
  at::Tensor loc, scale, count;  // (B, V, N)
};

Model::Model(const ModelSpec& spec, const Registry& registry)
    : spec_(spec), device_(at::Device(spec.device)) {
  if (spec.patch_size < 1) throw Error("patch_size must be positive");
  param_ = registry.create<PluginKind::parametrisation>(spec.param.name, spec.param.options);
  ParamFactory factory(*param_, at::make_generator<at::CPUGeneratorImpl>(spec.seed),
                       at::TensorOptions().dtype(at::kFloat).device(device_));
  ArchitectureContext actx{factory, spec.patch_size};
  arch_ = registry.create<PluginKind::architecture>(spec.arch.name, spec.arch.options, actx);
  {
    auto scope = factory.scope("head");
    HeadContext hctx{factory, arch_->d_model(), spec.patch_size};
    head_ = registry.create<PluginKind::head>(spec.head.name, spec.head.options, hctx);
  }
  params_ = std::move(factory.params());
}

Model::~Model() = default;

Model::Prepared Model::prepare(const at::Tensor& values, const at::Tensor& observed,
                               const at::Tensor& series_ids, const at::Tensor& keep) const {
  const int64_t P = spec_.patch_size;
  at::Tensor seen = observed;
  if (keep.defined()) seen = observed & expand_patch_mask(keep, P);
  ScaledValues s = causal_patch_scale(values, seen, P);
  Prepared p;
  p.in.tokens = patch_tokens(at::asinh(s.z), seen, P);
  p.in.series_ids = series_ids;
  // A patch with no observation at all (and not hidden by masking) carries no information.
  at::Tensor any_obs = observed.unflatten(-1, {values.size(-1) / P, P}).any(-1);
  p.in.patch_valid = keep.defined() ? (any_obs | keep.logical_not()) : any_obs;
  p.loc = s.loc;
  p.scale = s.scale;
  p.count = s.count;
  return p;
}

at::Tensor Model::hidden(const Batch& b, const at::Tensor& keep) {
  return arch_->forward(prepare(b.values, b.observed, b.series_ids, keep).in);
}

at::Tensor Model::loss(const Batch& b, const at::Tensor& keep) {
  const int64_t P = spec_.patch_size;
  Prepared p = prepare(b.values, b.observed, b.series_ids, keep);
  const int64_t N = p.loc.size(-1);
  if (N < 2) throw Error("training needs at least two patches of context");
  at::Tensor h = arch_->forward(p.in).slice(2, 0, N - 1);
  at::Tensor out = head_->forward(h);

  // Target: patch n+1 in the space of patch n's statistics, as a forecast reads it back.
  at::Tensor next = b.values.unflatten(-1, {N, P}).slice(2, 1, N);
  at::Tensor next_obs = b.observed.unflatten(-1, {N, P}).slice(2, 1, N);
  at::Tensor loc = p.loc.slice(2, 0, N - 1).unsqueeze(-1);
  at::Tensor scale = p.scale.slice(2, 0, N - 1).unsqueeze(-1);
  at::Tensor target = at::asinh((next - loc) / scale);
  target = at::where(next_obs, target, at::zeros({}, target.options()));
  // Score only targets whose anchor statistics exist: with fewer than two kept observations so
  // far (e.g. a masked span at the start) loc/scale are placeholders and the target is noise.
  at::Tensor anchored = (p.count.slice(2, 0, N - 1) >= 2).unsqueeze(-1);
  return head_->loss(out, target.detach(), (next_obs & anchored).to(at::kFloat));
}

namespace {

// As the reference: the last context patch counts as observed, because training never leaves
// the end of the context unobserved. Its missing steps first take the last observed value
// before them (or the series' first observed value when none precedes), so no flag marks a
// placeholder zero as data. Series with no observation at all are left as they are.
std::pair<at::Tensor, at::Tensor> observe_last_patch(const at::Tensor& values,
                                                     const at::Tensor& observed, int64_t P) {
  const int64_t T = values.size(-1), tail = std::min(P, T);
  at::Tensor t = at::arange(T, values.options().dtype(at::kLong)).expand_as(values);
  at::Tensor last = std::get<0>(at::where(observed, t, -1).cummax(-1));
  at::Tensor first = observed.to(at::kInt).argmax(-1, /*keepdim=*/true);
  at::Tensor filled = at::where(last >= 0, values.gather(-1, last.clamp_min(0)), values.gather(-1, first));
  at::Tensor in_tail = (t >= T - tail) & observed.any(-1, /*keepdim=*/true);
  return {at::where(in_tail & observed.logical_not(), filled, values), observed | in_tail};
}

}  // namespace

Forecast Model::forecast(const at::Tensor& values_in, const at::Tensor& observed_in,
                         const at::Tensor& series_ids, int64_t horizon,
                         std::vector<double> levels) {
  if (horizon < 1) throw Error("forecast horizon must be at least 1, got " + std::to_string(horizon));
  if (levels.empty()) levels = head_->default_levels();
  std::sort(levels.begin(), levels.end());
  const int64_t P = spec_.patch_size;
  const int64_t B = values_in.size(0), V = values_in.size(1), T = values_in.size(2);
  const int64_t K = (horizon + P - 1) / P;
  const int64_t pad = (P - T % P) % P;
  const int64_t n_ctx = (T + pad) / P;

  c10::InferenceMode guard;
  auto fopts = at::TensorOptions().dtype(at::kFloat).device(device_);
  at::Tensor values = values_in.to(fopts);
  at::Tensor observed = observed_in.to(device_).to(at::kBool) & values.isfinite();
  values = at::where(observed, values, at::zeros({}, fopts));
  std::tie(values, observed) = observe_last_patch(values, observed, P);
  auto zeros_v = [&](int64_t n) { return at::zeros({B, V, n}, fopts); };
  auto unobs = [&](int64_t n) { return at::zeros({B, V, n}, fopts.dtype(at::kBool)); };
  values = at::cat({zeros_v(pad), values, zeros_v(K * P)}, -1);
  observed = at::cat({unobs(pad), observed, unobs(K * P)}, -1);

  // Horizon patches are masked, as in training, not missing: they keep their place in attention.
  // Left padding stays "missing" and is hidden.
  auto bopts = fopts.dtype(at::kBool);
  at::Tensor keep = at::cat({at::ones({B, V, n_ctx}, bopts), at::zeros({B, V, K}, bopts)}, -1);
  Prepared p = prepare(values, observed, series_ids.to(device_), keep);
  at::Tensor h = arch_->forward(p.in).slice(2, n_ctx - 1, n_ctx - 1 + K);
  at::Tensor q = head_->quantiles(head_->forward(h), levels);  // (Q, B, V, K, P)
  // Outputs at context position n_ctx-1 and the masked patches after it are read back with the
  // statistics at those positions, which masked patches carry over from the last observation.
  at::Tensor loc = p.loc.slice(2, n_ctx - 1, n_ctx - 1 + K).unsqueeze(-1);
  at::Tensor scale = p.scale.slice(2, n_ctx - 1, n_ctx - 1 + K).unsqueeze(-1);
  at::Tensor real = at::sinh(q.clamp(-80.0, 80.0)) * scale + loc;  // sinh(80) stays finite
  real = real.flatten(-2).slice(-1, 0, horizon);
  return {levels, std::get<0>(real.sort(0)).cpu()};
}

Json Model::describe() const {
  Json j = spec_.to_json();
  j["parameters"] = num_parameters();
  j["d_model"] = arch_->d_model();
  return j;
}

}  // namespace orrery
