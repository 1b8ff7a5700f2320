#pragma once
// A forecasting model: the host's patch pipeline + an architecture plugin + a head plugin,
// parametrised by a parametrisation plugin. The host knows nothing architecture-specific.
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "orrery/architecture.h"
#include "orrery/batch.h"
#include "orrery/head.h"
#include "orrery/interrupt.h"
#include "orrery/json.h"
#include "orrery/model_spec.h"
#include "orrery/param.h"
#include "orrery/precision.h"

namespace orrery {
class Registry;
struct SafetensorsFile;

// Options whose default changed (OptionSpec::default_was) are written into a spec: a model keeps
// the value in effect (`no`: the spec is new), and a spec read from a file without them was saved
// before the change and meant the old default (`maybe`). So a checkpoint rebuilds as trained.
enum class SavedBefore { no, maybe };
void pin_changed_defaults(ModelSpec& spec, const Registry& registry, SavedBefore saved);

struct ForecastOptions {
  std::vector<double> levels;     // empty = the head's default levels
  // 0 = one pass over the context and every horizon patch (Toto 2.0's default). Otherwise a
  // multiple of the patch size: forecast that many steps, commit their medians as observed
  // data, re-run the scaler, and go on (block decoding). A block at least the horizon is one pass.
  int64_t decode_block_size = 0;
  bool kv_cache = true;  // reuse the keys/values of committed patches between blocks
  bool mean = false;     // also estimate the mean (costs quantiles at 32 more levels)
  // Average the forecast of the series with the negated forecast of the negated series, level
  // q with level 1-q: the forecast becomes odd in its input, as a model trained with sign flips
  // is meant to be. Two forward passes.
  bool sign_average = false;
  // A context ensemble: forecast from the last c steps of the history for each c here (a c
  // beyond the history reads all of it) and average the forecasts level by level. Each is sorted
  // along Q, so the average is too (a quantile average, not the mixture's quantiles; the mean is
  // the mixture's). A hedge between a short history, which follows a level that has moved, and a
  // long one, which shows a stable cycle. A series with a variate unobserved over a context's
  // last c steps reads its whole history for that context. Empty: one forecast from the whole
  // history.
  std::vector<int64_t> contexts = {};
  // Box-Cox (box_cox.h): forecast each target row's transform and map every quantile back, so a
  // series whose swings grow with its level is read as one whose swings are steady. The exponent
  // in [0, 1] for every row (0: log), or NaN: each row's own, chosen over its history by
  // Guerrero's method in blocks of `season` steps. A row with a value <= 0 is forecast as it is.
  // Unset: none. Outside sign_average and contexts, which then act on the transformed rows.
  std::optional<double> box_cox = {};
  // With box_cox: each target row keeps the transform only where it forecast the row's own last
  // `horizon` steps better (the pinball loss over the levels, on their observed steps) than the
  // untransformed forecast did, both from the steps before them; a row whose history is shorter
  // than horizon + one patch is forecast as it is. A guard against a transform that blows a
  // trending series up. Four forecasts instead of one.
  bool box_cox_check = false;
  // With box_cox: the transformed forecast averaged level by level with the untransformed one
  // rather than replacing it (with box_cox_check: where the check, scoring that average, keeps
  // it). The pinball loss is convex in each quantile, so on any window the average errs at most
  // the mean of its two parts: a transform that blows a series up costs it at most half as much.
  // Two forecasts instead of one.
  bool box_cox_average = false;
  // How many of a row's last horizons a check scores (box_cox_check here, a request's
  // combine_check): each is held out in turn and forecast from the steps before it, and the
  // pinball losses are summed over the origins the row is long enough for. One origin judges a
  // long cycle by a single stretch of it; each more costs the check's forecasts once again.
  int64_t check_origins = 1;
  int64_t season = 1;  // the data's season (1: none known), for Guerrero's blocks
  Precision precision = Precision::fp32;  // bf16: the forward under autocast (precision.h)
  // Record the forward of each input shape once and replay it (graphed_call.h: a CUDA graph on
  // a GPU). For fixed shapes, such as serving or a benchmark; block decoding with the KV cache
  // stays eager. The model keeps the newest kMaxForwardGraphs recordings.
  bool graph = false;
  const Interrupt* interrupt = nullptr;  // polled between blocks and batches of series
  // Covariates: the role of every variate, (B, V) int64 VariateRole (undefined: all targets),
  // and the values of known-future rows over the horizon, (B, V, >= horizon) in data units
  // (other rows' entries are never read). A past-only row is hidden from the forecast's start
  // on. The forecasts of covariate rows are NaN: the model forecasts targets.
  at::Tensor roles = {}, future = {};
  // Static covariates: (B, V, S) float, each row's series' values in data units, in
  // static_covariates() order; required, and only allowed, when the model reads some.
  at::Tensor statics = {};
};

struct GenerateOptions {
  double temperature = 1.0;  // divides the logits; 0 = always the most likely value
  int64_t top_k = 0;         // draw among the top_k most likely classes only; 0 = all
  uint64_t seed = 0;         // the draws' generator: the same seed draws the same continuation
  int64_t context = 0;       // the model reads at most the last `context` steps; 0 = all of them
  // Reuse the keys/values of the steps already read (Architecture::new_cache), while the whole
  // sequence fits `context`; beyond it the window moves and each draw reads it afresh.
  bool kv_cache = true;
  const Interrupt* interrupt = nullptr;  // polled between draws
};

// Float64 on the CPU: data units may lie beyond float32's range.
struct Forecast {
  std::vector<double> levels;
  at::Tensor quantiles;  // (Q, B, V, H) in data units, sorted along Q
  at::Tensor median;     // (B, V, H) the 0.5 quantile
  at::Tensor mean;       // (B, V, H) when asked for: the integral of the quantile function over
                         // (0, 1) by the midpoint rule at 32 levels, in data units
};

class Model {
 public:
  Model(const ModelSpec& spec, const Registry& registry);
  ~Model();

  // Mean head loss of next-patch prediction. `keep` (B, V, N) bool hides masked patches from
  // the input (undefined = keep all). Targets are patch n+1 normalised with patch n's
  // statistics: the same space a forecast is read back in. `ctx` reaches every op (the
  // trainer gives the global batch through it).
  at::Tensor loss(const Batch& batch, const at::Tensor& keep = {}, const ForwardContext& ctx = {});

  // The loss summed over the target steps that stand for some of the source's unit (Batch::units,
  // e.g. a token's bytes; a step of 0 units, such as BOS, is left out), and those units: their
  // ratio is the loss per unit, in bits per byte for a categorical head over text (nats / ln 2).
  // `mean` is loss()'s value on the batch, from the same forward pass.
  struct UnitLoss {
    double loss = 0, units = 0, mean = 0;
  };
  UnitLoss loss_over_units(const Batch& batch, const ForwardContext& ctx = {});

  // Hidden states for a batch (exposed for tests and diagnostics).
  at::Tensor hidden(const Batch& batch, const at::Tensor& keep = {});
  // The head's raw output at every patch of a batch (B, V, N, P, ...): patch n's prediction of
  // patch n + 1, e.g. a categorical head's logits (for tests, diagnostics and sampling).
  at::Tensor head_output(const Batch& batch);

  // RMS of every named activation (linear outputs, residual streams, head) on a batch, in
  // forward order, without recording gradients: what a coordinate check measures.
  std::vector<ActivationRecord> activations(const Batch& batch, bool keep = false,
                                            const std::vector<ActivationRecord>* since = nullptr);

  // Quantile forecasts in data units. values/observed: (B, V, T) with any T (left-padded to a
  // multiple of P); non-finite values count as unobserved, and a series (or variate) with no
  // observation at all is an error. By default one forward pass over the context plus
  // ceil(H/P) masked patches; see ForecastOptions for block decoding.
  Forecast forecast(const at::Tensor& values, const at::Tensor& observed,
                    const at::Tensor& series_ids, int64_t horizon,
                    const ForecastOptions& options = {});
  // The horizons forecast() takes: 1 to 2^20 steps; an error naming the horizon otherwise. For
  // front ends that size covariate rows by the horizon before they call forecast().
  static void check_horizon(int64_t horizon);

  // Continues every row of `values` (B, V, T) by `steps` values drawn one patch at a time from the
  // head's prediction (Head::sample), each read back as observed before the next is drawn: text
  // generation for a model of token ids. Returns the drawn values, (B, V, steps) float32 on the CPU.
  at::Tensor generate(const at::Tensor& values, int64_t steps, const GenerateOptions& options = {});

  // Weights as safetensors, under the parameters' names, with the model spec in the metadata.
  void save_weights(const std::string& path) const;
  // Throws, naming `path` and up to four parameters, when a weight is NaN or infinite (a diverged
  // run's): nothing written may hold one.
  void require_finite_weights(const std::string& path) const;
  // Strict: every parameter must be present with its shape and nothing else may be; errors name
  // the file and the tensors at fault. The model is unchanged when loading fails. A checkpoint
  // folder stands for its model.safetensors.
  void load_weights(const std::string& path);
  // With `new_zeros`, a parameter the file lacks is one an option added at load (variate_roles on
  // a checkpoint trained without it) and keeps its initial values, but only when those are all
  // zero: the model then computes exactly what the file's model did.
  void load_weights(const SafetensorsFile& file, const std::string& label, bool new_zeros = false);
  // The mean of several files' weights (checkpoint averaging: a run's last checkpoints), each
  // file (or folder) checked as load_weights checks it; the model is unchanged when one fails.
  void load_average(const std::vector<std::string>& paths);

  // A model rebuilt from a file written by save_weights (its spec is in the metadata), on
  // `device`, with `arch_options` added to its architecture's (parameters they add must start at
  // zero: load_weights' new_zeros). Throws when the file was not written by Orrery.
  static std::unique_ptr<Model> from_file(const std::string& path, const Registry& registry,
                                          const std::string& device = "cpu",
                                          const Json& arch_options = Json::object());

  // Model FLOPs of a training step on `batch` series of `variates` variates and `context` steps
  // (StepFlops' convention, architecture.h): the architecture's own count, plus the head's
  // matrices on every patch but the last (loss() predicts patch n+1 from n). Throws naming the
  // architecture plugin when it does not count its FLOPs.
  StepFlops step_flops(int64_t batch, int64_t variates, int64_t context) const;

  std::vector<Param>& params() { return params_; }
  const std::vector<Param>& params() const { return params_; }
  const Parametrisation& parametrisation() const { return *param_; }
  int64_t num_parameters() const { return count_parameters(params_); }
  // Whether the head predicts the data's own values (class ids) rather than quantiles of them.
  bool predicts_raw_values() const { return head_->predicts_raw_values(); }
  // Whether the architecture reads variate roles, so that covariates can be given to it.
  bool reads_roles() const { return arch_->reads_roles(); }
  // The static covariates the model reads, by name and in order (empty: none).
  std::vector<std::string> static_covariates() const { return arch_->static_covariates(); }
  int64_t patch_size() const { return spec_.patch_size; }
  // The fewest steps of one series that give loss() anything to score: a target patch and two
  // observations before it (its anchor statistics). A source of shorter series trains on nothing.
  int64_t min_training_length() const { return spec_.patch_size + 2; }
  const ModelSpec& spec() const { return spec_; }
  at::Device device() const { return device_; }
  Json describe() const;

 private:
  struct Prepared;
  struct Scored;
  struct ForwardGraph;
  Scored scored(const Batch& batch, const at::Tensor& keep, const ForwardContext& ctx);
  static constexpr size_t kMaxForwardGraphs = 8;
  // The head's output for patches [from, from + n) of `in`, through the recording of its shape.
  at::Tensor graphed_head_output(const PatchInput& in, int64_t from, int64_t n, const ForwardContext& ctx);
  // forecast() of a batch small enough for one pass, with checked arguments.
  Forecast forecast_rows(const at::Tensor& values, const at::Tensor& observed,
                         const at::Tensor& series_ids, int64_t horizon,
                         const std::vector<double>& levels, const ForecastOptions& options);
  // Throws, naming the file and the tensors at fault, unless `file` holds exactly the parameters.
  void check_weights(const SafetensorsFile& file, const std::string& path, bool new_zeros = false) const;
  // forecast() with sign_average, with contexts and with box_cox: checked levels, sorted.
  Forecast sign_averaged_forecast(const at::Tensor& values, const at::Tensor& observed,
                                  const at::Tensor& series_ids, int64_t horizon,
                                  const std::vector<double>& levels, const ForecastOptions& options);
  Forecast context_ensemble(const at::Tensor& values, const at::Tensor& observed, const at::Tensor& series_ids,
                            int64_t horizon, const std::vector<double>& levels, const ForecastOptions& options);
  Forecast box_cox_forecast(const at::Tensor& values, const at::Tensor& observed, const at::Tensor& series_ids,
                            int64_t horizon, const std::vector<double>& levels, const ForecastOptions& options);
  // box_cox with box_cox_check or box_cox_average (box_cox_guard.cpp).
  Forecast guarded_box_cox_forecast(const at::Tensor& values, const at::Tensor& observed, const at::Tensor& series_ids,
                                    int64_t horizon, const std::vector<double>& levels, const ForecastOptions& options);
  // With covariate_lags, the covariate rows' lags and matches are found from what the model is
  // shown, unless `first_block` gives them: a forecast keeps those of its history for every block
  // (each later patch's match the history's last).
  Prepared prepare(const at::Tensor& values, const at::Tensor& observed, const at::Tensor& series_ids,
                   const at::Tensor& keep, const at::Tensor& roles = {}, const at::Tensor& statics = {},
                   const Prepared* first_block = nullptr) const;
  // PatchInput::statics from the given static covariates (data units), checked against the model's.
  at::Tensor static_input(const at::Tensor& statics, const at::Tensor& values) const;

  ModelSpec spec_;
  at::Device device_;
  std::unique_ptr<Parametrisation> param_;
  std::vector<Param> params_;
  size_t head_params_ = 0;  // the first of the head's parameters in params_ (made after the architecture's)
  std::unique_ptr<Architecture> arch_;
  std::unique_ptr<Head> head_;
  std::map<std::string, std::unique_ptr<ForwardGraph>> forward_graphs_;  // by shape and precision
};

}  // namespace orrery
