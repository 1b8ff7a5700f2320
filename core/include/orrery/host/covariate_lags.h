#pragma once
// Covariates aligned to their series' target by lag, before a model reads them.
//
// A covariate that drives its target k steps later (a price this week, sales next week) is of
// most use to a patch model when it is moved on so that the target's next patch sits beside the
// covariate's values that made it: reading it is then copying. What k is, the model would have
// to find by comparing the rows' histories, which it learns poorly (docs/covariates.md, the
// injection test); the host finds it here instead, in context, from the data the model is given.
//
// How far a row moves depends on what is known of it. A known-future row is moved the whole k
// steps (its horizon values are given) and then led by a patch (Model::prepare). A past-only row
// is not led: its patch n already informs the target's patch n + 1, so a lag of one patch needs no
// move, and a lag of k >= P moves it k - P steps on. That move is causal (step t reads the row's
// step t - (k - P)), and it makes the row's first k - P steps after the forecast's start known
// from its history. A past-only lag below one patch cannot be aligned without reading steps not
// yet observed; such a row stays as given.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>

namespace orrery {

// How many steps each covariate row moves (B, V) int64. For each covariate row of a series with a
// target row (role 0), the lag k in [0, max_lag] at which the row's values best correlate with
// those of its series' first target (the largest |Pearson correlation| of levels, over the steps
// `seen` in both; the smallest k on a tie; 0 where fewer than 8 steps pair up); a known-future row
// (role 2) moves k steps, a past-only row (role 1) max(k - patch_size, 0). Every other row: 0.
// Only steps the model is shown enter, so a forecast's horizon, whose targets are unseen, never does.
at::Tensor covariate_lags(const at::Tensor& values, const at::Tensor& seen, const at::Tensor& roles,
                          const at::Tensor& series_ids, int64_t max_lag, int64_t patch_size);

// How well each covariate row matches its series' first target so far (B, V, N), as the model
// reads it: at patch n (of `patch_size` steps), the Pearson correlation, signed, of the target's
// steps up to the end of patch n with a known-future row's steps at the same times, or a past-only
// row's one patch earlier (its patch n informs the target's patch n + 1), over the steps seen in
// both; 0 while fewer than 8 steps pair up, and for targets and rows of a series without one.
// Causal: patch n reads no step after it, so a model may be shown it at every patch, as it
// forecasts. Called on the rows already moved by their lags, it says how far the lag found
// explains the target: near +-1 for a covariate the target follows, near 0 for one it does not.
at::Tensor covariate_match(const at::Tensor& values, const at::Tensor& seen, const at::Tensor& roles,
                           const at::Tensor& series_ids, int64_t patch_size);

// Each row moved on by its lag (B, V): step t takes the row's step t - lag, the first lag steps
// unobserved (value 0).
std::pair<at::Tensor, at::Tensor> delay_rows(const at::Tensor& values, const at::Tensor& observed, const at::Tensor& lags);

// A (B, V, T) step mask moved with its rows, so that a step hidden from the model (a forecast's
// horizon, a masked training patch) stays hidden wherever its value goes; the first lag steps,
// which hold no value, are kept.
at::Tensor delay_mask(const at::Tensor& kept, const at::Tensor& lags);

}  // namespace orrery
