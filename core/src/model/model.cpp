#include "orrery/host/model.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>

#include "orrery/options.h"
#include "orrery/error.h"
#include "orrery/host/box_cox.h"
#include "orrery/host/covariate_lags.h"
#include "orrery/host/graphed_call.h"
#include "orrery/ops.h"
#include "orrery/host/patching.h"
#include "orrery/host/registry.h"
#include "orrery/host/series.h"
#include "prepared.h"

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
  s.scaler_window = j.value("scaler_window", s.scaler_window);  // absent in specs saved before it
  s.covariate_lags = j.value("covariate_lags", s.covariate_lags);
  s.seed = j.value("seed", s.seed);
  s.device = j.value("device", s.device);
  return s;
}

Json ModelSpec::to_json() const {
  Json j = {{"arch", arch.to_json()}, {"head", head.to_json()}, {"param", param.to_json()},
            {"patch_size", patch_size}, {"seed", seed}, {"device", device}};
  if (scaler_window) j["scaler_window"] = scaler_window;  // only when set: Toto 2.0's specs stay as they were
  if (covariate_lags) j["covariate_lags"] = covariate_lags;
  return j;
}

namespace {
// The device a spec names, refused with a message naming the option (LibTorch's own lists every
// backend it knows, or says it "is not linked with support", without saying which option).
at::Device parse_device(const std::string& name) {
  std::optional<at::Device> device;
  try {
    device = at::Device(name);
  } catch (const c10::Error&) {
  }
  if (!device)
    throw Error("device must be \"cpu\", \"cuda\" (\"cuda:N\" for one GPU) or \"mps\", got " + quote_input(name));
  if ((device->is_cuda() && !at::hasCUDA()) || (device->is_mps() && !at::hasMPS()))
    throw Error("device " + quote_input(name) + ": this LibTorch cannot use it (built without it, or no such GPU "
                "or driver here); use device \"cpu\"");
  return *device;
}
}  // namespace

void pin_changed_defaults(ModelSpec& spec, const Registry& registry, SavedBefore saved) {
  auto pin = [&](PluginSpec& p, PluginKind kind) {
    if (!p.options.is_object()) return;  // refused with its message when the plugin is made
    for (const OptionSpec& o : registry.find(kind, p.name).schema.specs())
      if (o.default_was && !p.options.contains(o.name))
        p.options[o.name] = saved == SavedBefore::maybe ? *o.default_was : o.default_value;
  };
  pin(spec.arch, PluginKind::architecture);
  pin(spec.head, PluginKind::head);
  pin(spec.param, PluginKind::parametrisation);
}

Model::Model(const ModelSpec& spec, const Registry& registry)
    : spec_(spec), device_(parse_device(spec.device)) {
  if (spec.patch_size < 1) throw Error("patch_size must be at least 1, got " + std::to_string(spec.patch_size));
  if (spec.scaler_window < 0)
    throw Error("scaler_window must be 0 (the whole history) or a number of patches, got " +
                std::to_string(spec.scaler_window));
  if (spec.covariate_lags < 0)
    throw Error("covariate_lags must be 0 (covariates as given) or the largest lag in steps, got " +
                std::to_string(spec.covariate_lags));
  pin_changed_defaults(spec_, registry, SavedBefore::no);
  param_ = registry.create<PluginKind::parametrisation>(spec_.param.name, spec_.param.options);
  ParamFactory factory(*param_, at::make_generator<at::CPUGeneratorImpl>(spec.seed),
                       at::TensorOptions().dtype(at::kFloat).device(device_));
  ArchitectureContext actx{factory, spec.patch_size};
  arch_ = registry.create<PluginKind::architecture>(spec_.arch.name, spec_.arch.options, actx);
  if (arch_->reads_covariate_match() && spec_.covariate_lags == 0)
    throw Error("architecture plugin '" + spec_.arch.name + "' reads how well each covariate matches its target once "
                "covariates are aligned by lag (option covariate_match), which the host finds only for a model with "
                "covariate_lags = K: give the model covariate_lags, or drop covariate_match");
  head_params_ = factory.params().size();
  HeadContext hctx{factory, arch_->d_model(), spec.patch_size};  // a head names its own scope
  head_ = registry.create<PluginKind::head>(spec_.head.name, spec_.head.options, hctx);
  params_ = std::move(factory.params());
}

StepFlops Model::step_flops(int64_t batch, int64_t variates, int64_t context) const {
  const int64_t N = context / spec_.patch_size;
  std::optional<StepFlops> f = arch_->step_flops(batch, variates, N);
  if (!f) throw Error("architecture plugin '" + spec_.arch.name + "' does not count its FLOPs (Architecture::step_flops)");
  double head = 0;
  for (size_t i = head_params_; i < params_.size(); ++i)
    if (params_[i].tensor.dim() == 2) head += static_cast<double>(params_[i].tensor.numel());
  f->matmul += 6 * head * static_cast<double>(batch * variates * (N - 1));
  return *f;
}

Model::~Model() = default;

namespace {
// Known-future rows lead by one patch: their steps t + P in place of t, the last patch
// unobserved. Patch n then carries the covariate over the steps that patch n forecasts.
std::pair<at::Tensor, at::Tensor> lead_known_future(const at::Tensor& values, const at::Tensor& observed,
                                                    const at::Tensor& roles, int64_t P) {
  if (!roles.defined()) return {values, observed};
  const at::Tensor lead = rows_of_role(roles, VariateRole::future).to(values.device());
  const int64_t T = values.size(-1);
  auto shifted = [&](const at::Tensor& x) {
    return at::cat({x.narrow(-1, P, T - P), at::zeros_like(x.narrow(-1, 0, P))}, -1);
  };
  return {at::where(lead, shifted(values), values), at::where(lead, shifted(observed), observed)};
}
}  // namespace

// Static covariates go in as asinh of their data values: a store's 40 or 4,000 square metres, a
// price of 0.5 or 500, land in a range a linear map can use without statistics of the data set
// (which a forecast of a new series would not have). Every row needs the model's exact set.
at::Tensor Model::static_input(const at::Tensor& statics, const at::Tensor& values) const {
  const std::vector<std::string> names = arch_->static_covariates();
  const auto S = static_cast<int64_t>(names.size());
  if (!statics.defined() || statics.numel() == 0) {
    if (S == 0) return {};
    throw Error("this model reads static covariates (" + join_names(names) + ": architecture plugin '" + spec_.arch.name +
                "', option static_covariates), so every series needs their values: a data source's "
                "static_covariates, or a forecast's static_covariates = {name = value, ...}");
  }
  if (S == 0)
    throw Error("architecture plugin '" + spec_.arch.name + "', as this model was built, reads no static covariates "
                "(option static_covariates), but " + std::to_string(statics.size(-1)) + " were given");
  const int64_t B = values.size(0), V = values.size(1);
  if (statics.dim() != 3 || statics.size(0) != B || statics.size(1) != V || statics.size(2) != S)
    throw Error("static covariates must be of shape (series, variates, static covariates) = (" + std::to_string(B) +
                ", " + std::to_string(V) + ", " + std::to_string(S) + ": " + join_names(names) + "), got " +
                c10::str(statics.sizes()));
  const at::Tensor x = statics.to(values.device(), at::kFloat);
  if (!x.isfinite().all().item<bool>())
    throw Error("static covariates must be finite float32 numbers (" + join_names(names) + "): a series' static "
                "value is known, or the model cannot use it; rescale one beyond +-3.4e38");
  return at::asinh(x);
}

Model::Prepared Model::prepare(const at::Tensor& values_in, const at::Tensor& observed_in,
                               const at::Tensor& series_ids, const at::Tensor& keep, const at::Tensor& roles,
                               const at::Tensor& statics, const Prepared* first_block) const {
  const int64_t P = spec_.patch_size;
  if (roles.defined() && !arch_->reads_roles() && (roles != static_cast<int64_t>(VariateRole::target)).any().item<bool>())
    throw Error("architecture plugin '" + spec_.arch.name + "', as this model was built, does not read variate roles, so "
                "it cannot tell covariates from targets (see its options in orrery plugins)");
  at::Tensor kept = keep.defined() ? expand_patch_mask(keep, P) : at::Tensor();
  at::Tensor keep_patches = keep;
  // Covariate rows moved by their lags (found on what the model is shown), past-only rows with
  // their masks, then known-future rows led by a patch.
  Prepared p;
  at::Tensor delayed_values = values_in, delayed_observed = observed_in;
  if (spec_.covariate_lags > 0 && roles.defined()) {
    const at::Tensor shown = keep.defined() ? observed_in & kept : observed_in;
    p.lags = first_block ? first_block->lags : covariate_lags(values_in, shown, roles, series_ids, spec_.covariate_lags, P);
    std::tie(delayed_values, delayed_observed) = delay_rows(values_in, observed_in, p.lags);
    // A past-only row's mask moves with it: what is not yet known stays hidden, and its last
    // steps, moved past a forecast's start, are shown there. A known-future row is never hidden
    // in a forecast; in training its masked patches stay whole patches (moving them too cost the
    // injection test 1.7% to 3.9% on three arms, docs/covariates.md).
    if (keep.defined()) {
      const at::Tensor past = rows_of_role(roles, VariateRole::past).squeeze(-1).to(p.lags.device());
      kept = delay_mask(kept, at::where(past, p.lags, at::zeros_like(p.lags)));
      keep_patches = kept.unflatten(-1, {values_in.size(-1) / P, P}).all(-1);
    }
    if (arch_->reads_covariate_match()) {
      if (first_block) {  // the history's matches, the last carried on over the patches added since
        const at::Tensor& m = first_block->in.covariate_match;
        const int64_t more = values_in.size(-1) / P - m.size(-1);
        p.in.covariate_match = more > 0 ? at::cat({m, m.narrow(-1, m.size(-1) - 1, 1).expand({-1, -1, more})}, -1) : m;
      } else {
        p.in.covariate_match = covariate_match(delayed_values, keep.defined() ? delayed_observed & kept : delayed_observed,
                                               roles, series_ids, P);
      }
    }
  }
  const auto [values, observed] = lead_known_future(delayed_values, delayed_observed, roles, P);
  at::Tensor seen = observed;
  if (keep.defined()) seen = observed & kept;
  if (head_->predicts_raw_values()) {  // class ids: no scaler, no asinh; unobserved steps read 0
    p.in.tokens = patch_tokens(at::where(seen, values, at::zeros({}, values.options())).to(at::kFloat), seen, P);
  } else {
    ScaledValues s = causal_patch_scale(values, seen, P, 1e-6, spec_.scaler_window);
    p.in.tokens = patch_tokens(at::asinh(s.z), seen, P);
    p.loc = s.loc;
    p.scale = s.scale;
    p.count = s.count;
  }
  p.in.series_ids = series_ids;
  // A patch with no observation at all (and not hidden by masking) carries no information.
  at::Tensor any_obs = observed.unflatten(-1, {values.size(-1) / P, P}).any(-1);
  p.in.patch_valid = keep.defined() ? (any_obs | keep_patches.logical_not()) : any_obs;
  p.in.roles = roles;
  p.in.statics = static_input(statics, values);
  return p;
}

at::Tensor Model::hidden(const Batch& b, const at::Tensor& keep) {
  return arch_->forward(prepare(b.values, b.observed, b.series_ids, keep, b.roles, b.statics).in, ForwardContext{});
}


at::Tensor Model::head_output(const Batch& b) {
  return head_->forward(hidden(b), ForwardContext{});
}

std::vector<ActivationRecord> Model::activations(const Batch& b, bool keep,
                                                 const std::vector<ActivationRecord>* since) {
  at::NoGradGuard no_grad;
  ActivationProbe probe(keep, since);
  ForwardContext ctx;
  ctx.probe = &probe;
  loss(b, {}, ctx);
  return probe.records();
}

// The head's output for patches 0 .. N-2, the targets they predict (patches 1 .. N-1) and the
// weight of each target step: what loss() scores.
struct Model::Scored {
  at::Tensor out, target, weight;
};

Model::Scored Model::scored(const Batch& b, const at::Tensor& keep, const ForwardContext& ctx) {
  const int64_t P = spec_.patch_size;
  Prepared p = prepare(b.values, b.observed, b.series_ids, keep, b.roles, b.statics);
  const int64_t N = p.in.tokens.size(2);
  if (N < 2) throw Error("training needs at least two patches of context");
  at::Tensor out;
  {
    AutocastGuard autocast(device_.type(), ctx.precision);
    out = head_->forward(arch_->forward(p.in, ctx).slice(2, 0, N - 1), ctx);
  }
  out = out.to(at::kFloat);  // the loss in float32 whatever the forward ran in

  // Target: patch n+1 in the space of patch n's statistics, as a forecast reads it back (or as
  // the data hold it, for a head over classes).
  at::Tensor next = b.values.unflatten(-1, {N, P}).slice(2, 1, N);
  at::Tensor next_obs = b.observed.unflatten(-1, {N, P}).slice(2, 1, N);
  at::Tensor target, weight = next_obs;
  if (head_->predicts_raw_values()) {
    target = at::where(next_obs, next, at::zeros({}, next.options())).to(at::kFloat);
  } else {
    at::Tensor loc = p.loc.slice(2, 0, N - 1).unsqueeze(-1);
    at::Tensor scale = p.scale.slice(2, 0, N - 1).unsqueeze(-1);
    target = at::asinh((next - loc) / scale).to(at::kFloat);  // float64 statistics
    target = at::where(next_obs, target, at::zeros({}, target.options()));
    // Score only targets whose anchor statistics exist: with fewer than two kept observations so
    // far (e.g. a masked span at the start) loc/scale are placeholders and the target is noise.
    weight = weight & (p.count.slice(2, 0, N - 1) >= 2).unsqueeze(-1);
  }
  if (b.roles.defined()) weight = weight & rows_of_role(b.roles, VariateRole::target).unsqueeze(-1);  // targets only
  weight = weight.to(at::kFloat);
  const StepWeights& w = ctx.step_weights;
  if (!w.uniform()) {
    if (w.early_steps > P)
      throw Error("early_steps " + std::to_string(w.early_steps) + " is more than the patch size " + std::to_string(P));
    at::Tensor profile = at::ones({P}, weight.options());
    profile.narrow(0, 0, w.early_steps).fill_(w.early_weight);
    weight = weight * profile;
  }
  return {out, target.detach(), weight};
}

at::Tensor Model::loss(const Batch& b, const at::Tensor& keep, const ForwardContext& ctx) {
  const Scored s = scored(b, keep, ctx);
  return head_->loss(s.out, s.target, s.weight);
}

Model::UnitLoss Model::loss_over_units(const Batch& b, const ForwardContext& ctx) {
  if (!b.units.defined() || b.units.sizes() != b.values.sizes())
    throw Error("the loss per unit needs the batch's units (Batch::units), of the values' shape " +
                c10::str(b.values.sizes()));
  const int64_t P = spec_.patch_size, N = b.values.size(-1) / P;
  const Scored s = scored(b, {}, ctx);
  const at::Tensor units = b.units.unflatten(-1, {N, P}).slice(2, 1, N).to(at::kFloat);
  const at::Tensor weight = s.weight * (units > 0);  // a step standing for nothing (BOS) is not scored
  const double scored_weight = weight.sum().item<double>();
  return {head_->loss(s.out, s.target, weight).item<double>() * scored_weight, (units * weight).sum().item<double>(),
          head_->loss(s.out, s.target, s.weight).item<double>()};
}


Json Model::describe() const {
  Json j = spec_.to_json();
  j["parameters"] = num_parameters();
  j["d_model"] = arch_->d_model();
  // Layers of the depth-scaled stack, read off the parameters so that no architecture option
  // name is assumed (a sweep across depths groups by it).
  int depth = 0;
  for (const auto& p : params_) depth = std::max(depth, p.info.stack_depth);
  j["depth"] = depth;
  return j;
}

}  // namespace orrery
