#pragma once
#include <ATen/core/Tensor.h>

namespace orrery {
// What a variate is to its series. Targets are what the loss scores and forecasts are for;
// covariates only inform them: a past-only covariate is known up to the forecast's start (a
// price observed so far), a known-future one through the horizon too (a calendar, a planned
// promotion). Stored as int64 in Batch::roles.
enum class VariateRole : int64_t { target = 0, past = 1, future = 2 };
constexpr int64_t kVariateRoles = 3;

// What a data source yields and the model consumes.
struct Batch {
  at::Tensor values;      // (B, V, T) float32, arbitrary data units
  at::Tensor observed;    // (B, V, T) bool, true = observed
  at::Tensor series_ids;  // (B, V) int64: variates with equal ids belong to one series
  int64_t season = 1;     // natural seasonality of the data (1 = none known)
  at::Tensor roles = {};  // (B, V) int64 VariateRole; undefined: every variate a target
  // (B, V, T) float32: how much of the source's unit each step stands for (DataSource::describe's
  // "unit": a token's bytes for text, 0 for BOS); undefined when the source has no unit. The
  // validation loss is then also reported per unit (Model::loss_over_units).
  at::Tensor units = {};
  // (B, V, S) float32: each row's series' static covariates (one value per series: a store's
  // size, a product's price band), in data units and in the order the model names them
  // (Architecture::static_covariates); rows of one series carry the same values. Undefined: none.
  at::Tensor statics = {};
};
}  // namespace orrery
