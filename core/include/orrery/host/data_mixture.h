#pragma once
// Data sources as a run asks for them: one plugin, or a weighted mixture of plugins built by
// the host. A mixture is a plugin choice named "mixture":
//   {"mixture", sources = {{"synthetic", weight = 57.5}, {"observability", weight = 42.5}},
//    min_context = 128}
// Each sample of a batch comes from one source, drawn by weight with the batch's seed; a
// source's samples are drawn in one call. Sources with fewer variates than the widest are
// padded with unobserved variates of their own series id. With min_context below the batch
// length, each sample keeps only its last L steps observed, L log-uniform in
// [min_context, length], so a model trains on every context length it will forecast from.
// augment = {sign_flip = p, ...} transforms samples first (orrery/host/augment.h).
// A mixture holds series: a source of text is refused (one text source takes many files).
#include <memory>
#include <string>

#include "orrery/data_source.h"
#include "orrery/model_spec.h"
#include "orrery/options.h"

namespace orrery {
class Registry;

// The mixture's own options (sources, min_context), for its checks and the docs.
const OptionSchema& mixture_schema();

// The source `spec` names: a plugin from `registry`, or a mixture of them. Errors name the
// source at fault ("data source 2 of the mixture ('observability'): ...").
std::unique_ptr<DataSource> make_data_source(const Registry& registry, const PluginSpec& spec,
                                             const DataContext& context);

// True when `source` reads its values as text (token ids): its decode_text does not refuse.
// The host learns no more of tokens than that.
bool holds_text(const DataSource& source);

}  // namespace orrery
