#include "held_out.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "orrery/data_source.h"
#include "orrery/host/batch_queue.h"
#include "orrery/host/data_mixture.h"
#include "orrery/host/backtest.h"
#include "orrery/host/events.h"
#include "orrery/host/metrics_bus.h"
#include "orrery/host/model.h"
#include "orrery/utf8.h"

namespace orrery {

namespace {

// One series as a JSON list, null where unobserved (or not finite).
Json series_json(const at::Tensor& values, const at::Tensor& observed) {
  const at::Tensor v = values.to(at::kCPU, at::kDouble).contiguous();
  const at::Tensor m = observed.to(at::kCPU).contiguous();
  const auto va = v.accessor<double, 1>();
  const auto ma = m.accessor<bool, 1>();
  Json out = Json::array();
  for (int64_t t = 0; t < va.size(0); ++t) out.push_back(ma[t] && std::isfinite(va[t]) ? Json(va[t]) : Json(nullptr));
  return out;
}

// A series' covariate rows as the dashboard draws them under its forecast: each row's role and
// its history; a known-future row also its horizon values, which the forecast read. Rows with no
// observation in the shown history (a group's padding) are left out.
Json covariate_rows(const at::Tensor& values, const at::Tensor& observed, const at::Tensor& roles, int64_t cut,
                    int64_t shown, int64_t horizon) {
  Json rows = Json::array();
  const at::Tensor role = roles.to(at::kCPU, at::kLong).contiguous();
  const at::Tensor seen = observed.narrow(-1, cut - shown, shown).any(-1).cpu();
  for (int64_t v = 0; v < role.size(0); ++v) {
    const int64_t kind = role[v].item<int64_t>();
    if (kind == static_cast<int64_t>(VariateRole::target) || !seen[v].item<bool>()) continue;
    const bool known = kind == static_cast<int64_t>(VariateRole::future);
    Json row = {{"role", known ? "known-future" : "past-only"},
                {"history", series_json(values[v].narrow(0, cut - shown, shown), observed[v].narrow(0, cut - shown, shown))}};
    if (known) row["future"] = series_json(values[v].narrow(0, cut, horizon), observed[v].narrow(0, cut, horizon));
    rows.push_back(std::move(row));
  }
  return rows;
}

// The forecast snapshot event: the first `series` rows of `b` (variate 0) forecast over their
// last `horizon` steps from the steps before.
Json forecast_event(Model& model, const Batch& b, int64_t series, int64_t horizon, int64_t step, Precision precision) {
  at::NoGradGuard no_grad;
  const int64_t cut = b.values.size(2) - horizon;
  // Rows whose every variate has an observation before the cut (the others have nothing to
  // forecast from), and whose known-future covariates are known over the whole horizon.
  at::Tensor ok = b.observed.narrow(2, 0, cut).any(-1).all(-1);
  if (b.roles.defined())
    ok = ok & (b.observed.narrow(2, cut, horizon).all(-1) | (b.roles != static_cast<int64_t>(VariateRole::future))).all(-1);
  const at::Tensor usable = ok.nonzero().flatten().cpu();
  const int64_t n = std::min<int64_t>(series, usable.size(0));
  if (n == 0) return nullptr;
  const at::Tensor rows = usable.narrow(0, 0, n).to(b.values.device());
  const at::Tensor values = b.values.index_select(0, rows), observed = b.observed.index_select(0, rows);
  ForecastOptions options;
  options.precision = precision;
  if (b.roles.defined()) {  // covariates: known-future rows bring their values over the horizon
    options.roles = b.roles.index_select(0, rows);
    options.future = values.narrow(2, cut, horizon).to(at::kDouble);
  }
  if (b.statics.defined()) options.statics = b.statics.index_select(0, rows);
  const Forecast f = model.forecast(values.narrow(2, 0, cut), observed.narrow(2, 0, cut),
                                    b.series_ids.index_select(0, rows), horizon, options);
  const at::Tensor q = f.quantiles.select(2, 0).cpu();  // (Q, n, H)
  const int64_t shown = std::min(cut, 4 * horizon);
  Json list = Json::array();
  for (int64_t i = 0; i < n; ++i) {
    const at::Tensor v = values[i][0], m = observed[i][0];
    Json entry = {{"name", "val/" + std::to_string(usable[i].item<int64_t>())},
                  {"history", series_json(v.narrow(0, cut - shown, shown), m.narrow(0, cut - shown, shown))},
                  {"target", series_json(v.narrow(0, cut, horizon), m.narrow(0, cut, horizon))},
                  {"quantiles", quantile_rows(q.select(1, i))}};
    if (options.roles.defined()) entry["covariates"] = covariate_rows(values[i], observed[i], options.roles[i], cut, shown, horizon);
    if (options.statics.defined()) {  // the dashboard names them with the series
      const std::vector<std::string> names = model.static_covariates();
      const at::Tensor own = options.statics[i][0].to(at::kCPU, at::kDouble);
      Json statics = Json::object();
      for (size_t k = 0; k < names.size(); ++k) statics[names[k]] = own[static_cast<int64_t>(k)].item<double>();
      entry["statics"] = statics;
    }
    list.push_back(std::move(entry));
  }
  return make_event(EventKind::forecast, {{"step", step}, {"levels", f.levels}, {"horizon", horizon}, {"series", list}});
}

}  // namespace

HeldOut::HeldOut(Model& model, DataSource* validation, const TrainConfig& cfg, uint64_t seed, MetricsBus& bus,
                 TrainState& state)
    : model_(model), cfg_(cfg), bus_(bus), st_(state) {
  validate_ = validation && cfg.val_batches > 0;
  // A model over classes (token ids) has no quantile forecast to snapshot.
  snapshots_ = validation && cfg.forecast_series > 0 && !model.predicts_raw_values();
  val_every_ = cfg.val_every > 0 ? cfg.val_every : 4 * cfg.log_every;
  forecast_every_ = cfg.forecast_every > 0 ? cfg.forecast_every : val_every_;
  const int64_t P = model.patch_size();
  horizon_ = std::max(P, cfg.context_length / 4 / P * P);
  if (validate_ || snapshots_)
    for (int64_t i = 0; i < (validate_ ? cfg.val_batches : 1); ++i)
      batches_.push_back(to_device(
          validation->sample({cfg.batch_size, cfg.context_length, mix_seed(seed, static_cast<uint64_t>(i))}),
          model.device()));
  if (validate_ && batches_.front().units.defined()) unit_ = validation->describe().value("unit", "unit");
  // Samples need a model that draws its data's own values and a source that reads them as text.
  if (validate_ && cfg.sample_tokens > 0 && model.predicts_raw_values() && holds_text(*validation))
    text_ = validation;
}

void HeldOut::publish_sample(int64_t done, const std::function<double()>& elapsed) {
  constexpr int64_t kPromptSteps = 16;
  const Batch& b = batches_.front();
  const at::Tensor row = b.values.select(0, 0).select(0, 0).to(at::kCPU);  // the first held-out row
  const at::Tensor seen = b.observed.select(0, 0).select(0, 0).to(at::kCPU);
  const at::Tensor prompt = row.masked_select(seen).narrow(0, 0, std::min<int64_t>(kPromptSteps, seen.sum().item<int64_t>()));
  if (prompt.numel() == 0) return;
  GenerateOptions o;
  o.temperature = 0.8, o.top_k = 40, o.seed = mix_seed(cfg_.seed, static_cast<uint64_t>(done));
  const at::Tensor drawn = model_.generate(prompt.view({1, 1, -1}), cfg_.sample_tokens, o).flatten();
  // Decoded as one text, so a character whose bytes two tokens share stays whole.
  const std::string all = text_->decode_text(at::cat({prompt, drawn}));
  const TextSplit cut = split_continuation(all, text_->decode_text(prompt).size());
  bus_.publish(make_event(EventKind::sample, {{"step", done},
                                              {"prompt", all.substr(0, cut.split)},
                                              {"text", all.substr(cut.split, cut.end - cut.split)},
                                              {"elapsed_s", elapsed()}}));
}

double HeldOut::after(int64_t done, bool at_end, const std::function<double()>& elapsed) {
  const double t0 = elapsed();
  if (validate_ && (at_end ? st_.last_val != done : done % val_every_ == 0)) {
    // The mean loss, and for data with units the loss over what the scored steps stand for, in
    // bits (a categorical head's nats / ln 2), from one forward pass per batch.
    double sum = 0, loss = 0, units = 0;
    {
      at::NoGradGuard no_grad;
      ForwardContext ctx;
      ctx.precision = cfg_.precision;
      for (const auto& b : batches_) {
        if (unit_.empty()) {
          sum += model_.loss(b, {}, ctx).item<double>();
          continue;
        }
        const Model::UnitLoss u = model_.loss_over_units(b, ctx);
        sum += u.mean, loss += u.loss, units += u.units;
      }
    }
    st_.last_val = done;
    st_.val_loss = sum / static_cast<double>(batches_.size());
    Json fields = {{"step", done}, {"loss", st_.val_loss}};
    if (!unit_.empty()) {
      st_.val_bits_per_unit = units > 0 ? loss / units / std::log(2.0) : std::numeric_limits<double>::quiet_NaN();
      fields["bits_per_unit"] = st_.val_bits_per_unit;
      fields["unit"] = unit_;
    }
    fields["elapsed_s"] = elapsed();
    bus_.publish(make_event(EventKind::val, fields));
    // A sample is a view of the run, never a reason to stop it: one that cannot be drawn or read
    // (a model with more classes than the tokenizer has ids) ends the samples with a warning.
    if (text_) {
      try {
        publish_sample(done, elapsed);
      } catch (const std::exception& e) {  // torch's own errors too (out of memory)
        std::fprintf(stderr, "warning: no text samples from step %lld on: %s\n", static_cast<long long>(done),
                     e.what());
        text_ = nullptr;
      }
    }
  }
  if (snapshots_ && (at_end ? st_.last_forecast != done : done % forecast_every_ == 0)) {
    st_.last_forecast = done;
    const Json ev = forecast_event(model_, batches_.front(), cfg_.forecast_series, horizon_, done, cfg_.precision);
    if (!ev.is_null()) bus_.publish(ev);
  }
  return elapsed() - t0;
}

}  // namespace orrery
