#include "orrery/host/data_mixture.h"

#include <ATen/ATen.h>

#include <cmath>
#include <random>

#include "orrery/options.h"
#include "orrery/error.h"
#include "orrery/host/augment.h"
#include "orrery/host/registry.h"

namespace orrery {

const OptionSchema& mixture_schema() {
  static const OptionSchema s =
      OptionSchema{}
          .list("sources", "the sources: a list of plugin choices, each with a weight, e.g. {\"synthetic\", weight = 57.5}")
          .integer("min_context", 0,
                   "shortest observed context of a sample, in steps; 0 = always the full length. Below the batch "
                   "length, each sample keeps its last L steps observed, L log-uniform in [min_context, length]",
                   0)
          .table("augment",
                 "augmentations, each a probability per sample: sign_flip, time_reversal, mixup (TSMixup), "
                 "level_shift, missing; e.g. {sign_flip = 0.5, mixup = 0.1}. Default none");
  return s;
}

namespace {

struct Part {
  std::string label;  // "data source 2 of the mixture ('observability')"
  std::unique_ptr<DataSource> source;
  double weight = 1;
};

class Mixture final : public DataSource {
 public:
  Mixture(std::vector<Part> parts, int64_t min_context, Augmentations augment)
      : parts_(std::move(parts)), min_context_(min_context), augment_(augment) {
    const Part* named = nullptr;  // the first source with static covariates: the others must agree
    for (const auto& p : parts_) {
      weights_.push_back(p.weight);
      const std::vector<std::string> names = p.source->static_covariates();
      if (names.empty()) continue;
      if (named && names != statics_)
        throw Error(p.label + " names static covariates (" + join_names(names) + "), " + named->label + " (" +
                    join_names(statics_) + "): the sources of a mixture must name the same ones, in the same order");
      if (!named) named = &p, statics_ = names;
    }
  }

  std::vector<std::string> static_covariates() const override { return statics_; }

  Batch sample(const SampleRequest& r) const override {
    std::mt19937_64 rng(mix_seed(r.seed, 0));
    std::discrete_distribution<size_t> pick(weights_.begin(), weights_.end());
    std::vector<size_t> from(static_cast<size_t>(r.batch));
    std::vector<int64_t> count(parts_.size(), 0);
    for (auto& f : from) ++count[f = pick(rng)];

    // Each source draws its samples in one call, under a seed of its own.
    std::vector<Batch> drawn(parts_.size());
    int64_t V = 1;
    bool with_roles = false;  // a source drew covariates: every sample gets roles, targets by default
    int64_t statics = 0;      // a source drew static covariates: every sample gets them, 0 by default
    for (size_t i = 0; i < parts_.size(); ++i) {
      if (count[i] == 0) continue;
      try {
        drawn[i] = parts_[i].source->sample({count[i], r.length, mix_seed(r.seed, i + 1)});
      } catch (const std::exception& e) {
        throw Error(parts_[i].label + ": " + e.what());
      }
      const Batch& b = drawn[i];
      if (b.values.dim() != 3 || b.values.size(0) != count[i] || b.values.size(2) != r.length ||
          b.observed.sizes() != b.values.sizes() || b.series_ids.dim() != 2 ||
          b.series_ids.size(0) != count[i] || b.series_ids.size(1) != b.values.size(1))
        throw Error(parts_[i].label + " returned a batch of shape " + c10::str(b.values.sizes()) + " for " +
                    std::to_string(count[i]) + " samples of " + std::to_string(r.length) + " steps");
      if (b.roles.defined() && b.roles.sizes() != b.series_ids.sizes())
        throw Error(parts_[i].label + " returned variate roles of shape " + c10::str(b.roles.sizes()) + " for series ids of " +
                    c10::str(b.series_ids.sizes()));
      if (b.statics.defined()) {
        if (b.statics.dim() != 3 || b.statics.size(0) != count[i] || b.statics.size(1) != b.values.size(1))
          throw Error(parts_[i].label + " returned static covariates of shape " + c10::str(b.statics.sizes()) +
                      " for values of " + c10::str(b.values.sizes()));
        if (statics > 0 && b.statics.size(2) != statics)
          throw Error(parts_[i].label + " gives " + std::to_string(b.statics.size(2)) + " static covariates, another "
                      "source of the mixture " + std::to_string(statics) + ": the sources must name the same ones");
        statics = b.statics.size(2);
      }
      V = std::max(V, b.values.size(1));
      with_roles = with_roles || b.roles.defined();
    }

    Batch out;
    out.values = at::zeros({r.batch, V, r.length}, at::kFloat);
    out.observed = at::zeros({r.batch, V, r.length}, at::kBool);
    out.series_ids = at::empty({r.batch, V}, at::kLong);
    if (with_roles) out.roles = at::zeros({r.batch, V}, at::kLong);
    // A sample from a source without static covariates gets zeros, which add nothing to it.
    if (statics > 0) out.statics = at::zeros({r.batch, V, statics}, at::kFloat);
    std::vector<int64_t> next(parts_.size(), 0);
    std::uniform_real_distribution<double> unit(0, 1);
    for (int64_t b = 0; b < r.batch; ++b) {
      const size_t i = from[static_cast<size_t>(b)];
      const Batch& src = drawn[i];
      const int64_t k = next[i]++, v = src.values.size(1);
      out.values[b].narrow(0, 0, v).copy_(src.values[k]);
      out.observed[b].narrow(0, 0, v).copy_(src.observed[k]);
      out.series_ids[b].narrow(0, 0, v).copy_(src.series_ids[k]);
      if (src.roles.defined()) out.roles[b].narrow(0, 0, v).copy_(src.roles[k]);
      if (src.statics.defined()) out.statics[b].narrow(0, 0, v).copy_(src.statics[k]);
      if (v < V) {  // padding variates: unobserved, each its own series
        const int64_t top = src.series_ids[k].max().item<int64_t>();
        out.series_ids[b].narrow(0, v, V - v).copy_(at::arange(top + 1, top + 1 + V - v, at::kLong));
      }
    }
    // Augmented as drawn, before the contexts are cut: the cut keeps the last steps, which a
    // reversal after it would have moved to the front.
    // Samples with covariates are left as drawn: a reversal or a mixup would break how their
    // targets follow their covariates in time.
    // So are samples with static covariates: a flip or a reversal would break how their targets
    // follow the static values.
    if (!with_roles && statics == 0) {
      augment(out.values, out.observed, augment_, mix_seed(r.seed, 0x61756721));
    } else if (augment_.any()) {
      at::Tensor plain = with_roles ? (out.roles == 0).all(1) : at::ones({r.batch}, at::kBool);
      if (statics > 0) plain = plain & (out.statics == 0).all(2).all(1);
      plain = plain.nonzero().flatten();
      at::Tensor values = out.values.index_select(0, plain), observed = out.observed.index_select(0, plain);
      augment(values, observed, augment_, mix_seed(r.seed, 0x61756721));
      out.values.index_copy_(0, plain, values), out.observed.index_copy_(0, plain, observed);
    }
    for (int64_t b = 0; b < r.batch; ++b) {
      if (min_context_ > 0 && min_context_ < r.length) {
        const double lo = std::log(static_cast<double>(min_context_)), hi = std::log(static_cast<double>(r.length));
        const auto keep = static_cast<int64_t>(std::ceil(std::exp(lo + (hi - lo) * unit(rng))));
        if (keep < r.length) {
          out.observed[b].narrow(1, 0, r.length - keep).fill_(false);
          out.values[b].narrow(1, 0, r.length - keep).zero_();
        }
      }
    }
    int64_t season = 0;
    for (size_t i = 0; i < parts_.size(); ++i)
      if (count[i] > 0) season = season == 0 || season == drawn[i].season ? drawn[i].season : 1;
    out.season = std::max<int64_t>(season, 1);
    return out;
  }

  // The worst source's: one whose series are all too short would fill its share of every batch
  // with nothing to learn from.
  std::optional<int64_t> longest_series() const override {
    std::optional<int64_t> shortest;
    for (const auto& p : parts_)
      if (const auto n = p.source->longest_series()) shortest = shortest ? std::min(*shortest, *n) : *n;
    return shortest;
  }

  Json describe() const override {
    double total = 0;
    for (double w : weights_) total += w;
    Json sources = Json::array();
    for (const auto& p : parts_) sources.push_back({{"share", p.weight / total}, {"source", p.source->describe()}});
    Json d = {{"sources", sources}, {"min_context", min_context_}};
    if (augment_.any()) d["augment"] = augment_.to_json();
    return d;
  }

 private:
  std::vector<Part> parts_;
  std::vector<double> weights_;
  int64_t min_context_;
  Augmentations augment_;
  std::vector<std::string> statics_;  // the sources' static covariates (those without any get zeros)
};

// One entry of `sources`: "name", or {"name": ..., "options": {..., "weight": w}}.
PluginSpec source_spec(const Json& j, const std::string& label, double& weight) {
  PluginSpec spec;
  if (j.is_string()) {
    spec.name = j.get<std::string>();
  } else if (j.is_object() && j.contains("name") && j["name"].is_string()) {
    spec.name = j["name"].get<std::string>();
    if (j.contains("options")) spec.options = j["options"];
    if (!spec.options.is_object()) throw Error(label + ": its options must be a table of name = value pairs");
  } else {
    throw Error(label + " must be a plugin choice like {\"synthetic\", weight = 1}");
  }
  weight = 1;
  if (spec.options.contains("weight")) {
    const Json& w = spec.options["weight"];
    if (!w.is_number() || !std::isfinite(w.get<double>()) || w.get<double>() <= 0)
      throw Error(label + ": weight must be a positive number, got " + w.dump());
    weight = w.get<double>();
    spec.options.erase("weight");
  }
  return spec;
}

}  // namespace

bool holds_text(const DataSource& source) {
  try {
    source.decode_text(at::zeros({0}, at::kFloat));
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::unique_ptr<DataSource> make_data_source(const Registry& registry, const PluginSpec& spec,
                                             const DataContext& context) {
  if (spec.name != "mixture") return registry.create<PluginKind::data>(spec.name, spec.options, context);
  const Json o = mixture_schema().validate(spec.options, "data mixture");
  const Json& sources = o["sources"];
  if (!sources.is_array() || sources.empty())
    throw Error("data mixture: sources must be a non-empty list of plugin choices, e.g. "
                "sources = {{\"synthetic\", weight = 57.5}, {\"observability\", weight = 42.5}}");
  std::vector<Part> parts;
  for (size_t i = 0; i < sources.size(); ++i) {
    const std::string where = "data source " + std::to_string(i + 1) + " of the mixture";
    Part p;
    PluginSpec s = source_spec(sources[i], where, p.weight);
    p.label = where + " ('" + s.name + "')";
    if (s.name == "mixture") throw Error(p.label + ": a mixture cannot hold a mixture; list its sources instead");
    DataContext c = context;
    c.seed = mix_seed(context.seed, i);
    try {
      p.source = registry.create<PluginKind::data>(s.name, s.options, c);
    } catch (const std::exception& e) {
      throw Error(p.label + ": " + e.what());
    }
    // Token ids are names, not values: a sign flip, a mixup or a cut context would corrupt them,
    // and two tokenizers' ids mean different things. Units (bits per byte) would be lost too.
    if (holds_text(*p.source))
      throw Error(p.label + ": a mixture mixes series and cannot hold text; name every file in one text source "
                            "instead (files = {\"a.txt\", \"b/*.txt\"})");
    parts.push_back(std::move(p));
  }
  return std::make_unique<Mixture>(std::move(parts), o["min_context"].get<int64_t>(),
                                   Augmentations::parse(o["augment"], "data mixture"));
}

}  // namespace orrery
