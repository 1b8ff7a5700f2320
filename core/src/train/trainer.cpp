// The training loop: draw a step's batches, run the step, record it, checkpoint. What each of
// those does is elsewhere: train_step.h (the step), train_report.h (progress), fault_watch.h
// (skipped steps and spikes), held_out.h (validation and forecast snapshots), seeds.h (the run's
// random streams), data_parallel_step.h (what the ranks agree on).
#include "orrery/host/trainer.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "fault_watch.h"
#include "held_out.h"
#include "orrery/error.h"
#include "orrery/host/batch_queue.h"
#include "orrery/host/data_parallel_step.h"
#include "orrery/host/events.h"
#include "orrery/host/metrics_bus.h"
#include "orrery/host/model.h"
#include "orrery/host/patching.h"
#include "orrery/host/process_group.h"
#include "orrery/host/seeds.h"
#include "orrery/host/train_step.h"
#include "train_report.h"

namespace orrery {

TrainResult train(Model& model, DataSource& data, Optimizer& opt, const TrainConfig& cfg, MetricsBus& bus,
                  DataSource* validation, const Interrupt* interrupt, const TrainHooks& hooks) {
  const int64_t P = model.patch_size();
  if (cfg.context_length % P != 0 || cfg.context_length < 2 * P)
    throw Error("context_length " + std::to_string(cfg.context_length) + " must be a multiple of the patch size " +
                std::to_string(P) + " and at least two patches");
  if (cfg.early_steps > P)
    throw Error("early_steps " + std::to_string(cfg.early_steps) + " is more than the model's patch size " +
                std::to_string(P) + " (it weighs the first steps of each target patch)");
  if (cfg.early_steps == P && cfg.early_weight == 0)
    throw Error("early_weight 0 on all " + std::to_string(P) + " steps of each target patch leaves nothing to train on");
  ProcessGroup* world = hooks.world;
  const int64_t W = world ? world->size() : 1, rank = world ? world->rank() : 0, A = cfg.accumulate;
  const RunSeeds seeds = RunSeeds::of(cfg.seed);
  // Patch masking teaches a model of values to forecast through missing stretches; a model of
  // class ids (token ids) is trained on whole rows, as a language model is (a hidden id would read 0).
  const bool mask = cfg.cpm && !model.predicts_raw_values();
  // The categorical head checks its targets are class ids on the host, which a recorded graph
  // cannot do; refused by name rather than failing inside the recording.
  if (cfg.graph && model.predicts_raw_values())
    throw Error("graph = true is not supported yet for a model whose head predicts class ids (head plugin '" +
                model.spec().head.name + "'): train it with graph = false");
  PatchMasker masker({mask, cfg.context_length / P, cfg.cpm_max_span, cfg.cpm_max_rate}, seeds.masking);
  TrainState st;  // where the run stands; a resumed run starts from its saved state
  if (hooks.resume) {
    st = *hooks.resume;
    if (st.step > cfg.steps)
      throw Error("the checkpoint is at step " + std::to_string(st.step) + ", past this run's " +
                  std::to_string(cfg.steps) + " steps");
    masker.set_state(st.masking_rng);
  }
  TrainStep step(model, opt,
                 {.accumulate = A, .clip = cfg.clip, .precision = cfg.precision, .graph = cfg.graph,
                  .step_weights = {cfg.early_steps, cfg.early_weight}},
                 world);
  HeldOut held_out(model, validation, cfg, seeds.validation_batches, bus, st);
  // This rank's micro-batches of each step, batch k of the run drawn with mix_seed(batches, k).
  BatchQueue batches(data, {.batch = cfg.batch_size, .length = cfg.context_length, .seed = seeds.batches,
                            .workers = static_cast<int>(cfg.data_workers), .depth = static_cast<int>(cfg.prefetch),
                            .device = model.device(), .first = st.step * A, .every = W, .offset = rank});
  start_together(world, st.step, model.params());  // every rank from rank 0's step and weights

  const auto started = std::chrono::steady_clock::now();
  const double elapsed_before = st.elapsed_s;
  const auto elapsed = [&] {
    return elapsed_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  TrainReport report(cfg, bus, st, step.groups(), elapsed_before);
  FaultWatch faults(cfg, bus, st);
  // Checkpoints through the caller's hook; time-based ones by rank 0's clock at step starts,
  // which every rank agrees on (a sharded optimizer's checkpoint is a collective, zero.h).
  double last_checkpoint = st.elapsed_s;
  int64_t checkpointed = st.step;
  // None while the newest step was skipped: the weights just gave a non-finite loss, and a
  // checkpoint of them would push good ones out of checkpoint_keep.
  const auto checkpoint = [&](double clock) {
    if (!hooks.checkpoint || !cfg.checkpoints() || checkpointed == st.step || st.skipped_in_row > 0) return;
    st.elapsed_s = elapsed();
    st.masking_rng = masker.state();
    bus.publish(make_event(EventKind::checkpoint, {{"step", st.step}}));
    hooks.checkpoint(st);
    checkpointed = st.step, last_checkpoint = clock;
  };

  TrainResult result;
  result.steps = st.step;
  for (int64_t k = st.step; k < cfg.steps; ++k) {
    // Every batch and mask of a step is drawn, a skipped step's too, so batch k stays batch k.
    std::vector<Batch> micro;
    for (int64_t j = 0; j < A; ++j) micro.push_back(batches.next());
    const StepStart start = agree_step_start(world, k, micro, interrupt && interrupt->requested(), elapsed());
    if (start.stop) {
      result.interrupted = true;
      break;
    }
    if (cfg.max_seconds > 0 && start.clock >= cfg.max_seconds) break;
    double progress = static_cast<double>(k) / static_cast<double>(cfg.steps);
    if (cfg.max_seconds > 0) progress = std::max(progress, start.clock / cfg.max_seconds);
    const double lr_factor = cfg.schedule.factor(k, progress, cfg.steps);
    const StepScalars scalars{lr_factor, cfg.weight_decay_schedule.factor(progress), cfg.momentum.value(k, progress)};
    const std::vector<at::Tensor> keep = masker.draw(cfg.batch_size, start.variates, W, rank, model.device());

    const StepOutcome outcome = step.run(micro, keep, scalars, report.due(k + 1));
    st.step = result.steps = k + 1;
    faults.check(outcome, report.lr_text(lr_factor));
    if (!outcome.fault) report.applied(outcome, lr_factor, elapsed(), batches.stats());
    report.pause(held_out.after(st.step, false, elapsed));
    if ((cfg.checkpoint_every > 0 && st.step % cfg.checkpoint_every == 0) ||
        std::binary_search(cfg.checkpoint_at.begin(), cfg.checkpoint_at.end(), st.step) ||
        (cfg.checkpoint_minutes > 0 && start.clock - last_checkpoint >= 60 * cfg.checkpoint_minutes))
      checkpoint(start.clock);
  }
  // Ctrl-C: the run can go on from here. At the end: a resumed script finds the final weights.
  checkpoint(elapsed());
  if (st.step > 0) held_out.after(st.step, true, elapsed);
  result.first_loss = st.first_loss, result.final_loss = st.final_loss;
  if (st.window_n > 0) {  // a run cut by time or Ctrl-C: report the partial window
    result.final_loss = st.window_sum / static_cast<double>(st.window_n);
    if (st.first_window) result.first_loss = result.final_loss;
  }
  result.skipped_steps = st.skipped_steps;
  result.val_loss = st.val_loss;
  result.val_bits_per_unit = st.val_bits_per_unit;
  result.seconds = elapsed();
  bus.publish(make_event(EventKind::end, result.to_json()));
  return result;
}

}  // namespace orrery
