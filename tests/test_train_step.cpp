// The one training step (train_step.h) that orrery.train and `orrery bench train` both run, the
// patch masks it is given, and the run's named seed streams.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cmath>

#include "orrery/data_source.h"
#include "orrery/host/patching.h"
#include "orrery/host/seeds.h"
#include "orrery/host/train_step.h"
#include "orrery/optimizer.h"
#include "support.h"

using orrery::Json;

namespace {

struct Trainee {
  std::unique_ptr<orrery::Model> model = test::tiny_model(3);
  std::unique_ptr<orrery::Optimizer> opt;
  explicit Trainee(const std::string& optimizer = "adamw", Json options = {{"lr", 1e-2}})
      : opt(orrery::Registry::global().create<orrery::PluginKind::optimizer>(optimizer, options, model->params(),
                                                                            model->parametrisation())) {}
  std::vector<at::Tensor> weights() const {
    std::vector<at::Tensor> out;
    for (const auto& p : model->params()) out.push_back(p.tensor.detach().clone());
    return out;
  }
};

std::vector<orrery::Batch> batches(int64_t n, uint64_t seed) {
  auto data = orrery::Registry::global().create<orrery::PluginKind::data>("synthetic", Json::object(),
                                                                          orrery::DataContext{});
  std::vector<orrery::Batch> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(data->sample({4, 128, orrery::mix_seed(seed, static_cast<uint64_t>(i))}));
  return out;
}

double largest_difference(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, (a[i] - b[i]).abs().max().item<double>());
  return d;
}

}  // namespace

TEST_CASE("a step is the micro-batches' mean loss, its backward, one clip and one update") {
  const auto micro = batches(2, 1);
  const std::vector<at::Tensor> no_masks(2);
  const double clip = 0.05;  // tight enough that it clips
  Trainee stepped, by_hand;
  orrery::TrainStep step(*stepped.model, *stepped.opt, {.accumulate = 2, .clip = clip});
  const orrery::StepOutcome out = step.run(micro, no_masks, {});
  CHECK(out.fault == nullptr);
  CHECK(out.series == 8);  // 2 micro-batches x 4 series x 1 variate

  // By hand: each micro-batch carries half the loss (u-muP's scales would see 2 x the batch).
  orrery::ForwardContext ctx;
  ctx.batch_multiplier = 2;
  double loss = 0;
  for (const auto& b : micro) {
    at::Tensor l = by_hand.model->loss(b, {}, ctx) / 2.0;
    l.backward();
    loss += l.item<double>();
  }
  std::vector<at::Tensor> grads;
  for (auto& p : by_hand.model->params()) grads.push_back(p.tensor.grad());
  const double norm = at::stack(at::_foreach_norm(grads, 2)).norm().item<double>();
  REQUIRE(norm > clip);
  at::_foreach_mul_(grads, clip / (norm + 1e-6));
  by_hand.opt->step({});
  CHECK(out.loss == Approx(loss).epsilon(1e-6));
  CHECK(out.grad_norm == Approx(norm).epsilon(1e-5));
  CHECK(largest_difference(stepped.weights(), by_hand.weights()) < 1e-6);
  // The clipped gradients are what the optimizer saw.
  std::vector<at::Tensor> after;
  for (auto& p : stepped.model->params()) after.push_back(p.tensor.grad());
  CHECK(at::stack(at::_foreach_norm(after, 2)).norm().item<double>() == Approx(clip).epsilon(1e-4));
}

TEST_CASE("a step whose loss is not finite writes nothing: weights, optimizer state and gradients") {
  auto micro = batches(1, 2);
  micro[0].values.narrow(2, 64, 4).fill_(NAN);
  Trainee t;
  orrery::TrainStep step(*t.model, *t.opt, {});
  step.run(batches(1, 3), {at::Tensor()}, {});  // a good step first: the state has something to keep
  const auto weights = t.weights();
  std::vector<at::Tensor> state;
  for (const auto& [name, tensor] : t.opt->state_tensors()) state.push_back(tensor.clone());
  const orrery::StepOutcome out = step.run(micro, {at::Tensor()}, {});
  REQUIRE(out.fault != nullptr);
  CHECK(std::string(out.fault) == "loss");
  CHECK(!std::isfinite(out.loss));
  CHECK(largest_difference(t.weights(), weights) == 0);
  size_t i = 0;
  for (const auto& [name, tensor] : t.opt->state_tensors()) CHECK(at::equal(tensor, state[i++]));
  for (const auto& p : t.model->params()) CHECK(!p.tensor.grad().defined());
}

TEST_CASE("without host checks nothing is read: the loss stays on the device and the step is applied") {
  const auto micro = batches(1, 4);
  Trainee checked, unchecked;
  orrery::TrainStep a(*checked.model, *checked.opt, {});
  orrery::TrainStep b(*unchecked.model, *unchecked.opt, {.host_checks = false});
  const orrery::StepOutcome x = a.run(micro, {at::Tensor()}, {}), y = b.run(micro, {at::Tensor()}, {});
  CHECK(y.loss == 0);  // not read
  CHECK(y.loss_tensor.item<double>() == x.loss);
  CHECK(largest_difference(checked.weights(), unchecked.weights()) == 0);
  // A non-finite step is applied: that is what turning the checks off means.
  auto bad = batches(1, 5);
  bad[0].values.fill_(NAN);
  const orrery::StepOutcome z = b.run(bad, {at::Tensor()}, {});
  CHECK(z.fault == nullptr);
  CHECK(!std::isfinite(z.loss_tensor.item<double>()));
}

TEST_CASE("a measured step reports each group's update and weight RMS; a step takes its micro-batches") {
  Trainee t("sgd", {{"lr", 0.1}});
  orrery::TrainStep step(*t.model, *t.opt, {});
  REQUIRE(step.groups().size() == 1);
  const auto before = t.weights();
  const orrery::StepOutcome out = step.run(batches(1, 6), {at::Tensor()}, {}, true);
  const std::string label = step.groups()[0].label;
  double sum = 0, count = 0;
  const auto after = t.weights();
  for (size_t i = 0; i < after.size(); ++i) {
    sum += (after[i] - before[i]).to(at::kDouble).square().sum().item<double>();
    count += static_cast<double>(after[i].numel());
  }
  CHECK(out.update_rms[label].get<double>() == Approx(std::sqrt(sum / count)).epsilon(1e-9));
  CHECK(out.param_rms[label].get<double>() > 0);
  CHECK_THROWS_WITH(step.run(batches(2, 7), {at::Tensor(), at::Tensor()}, {}),
                    Catch::Contains("takes 1 micro-batches and as many masks, got 2 and 2"));
}

TEST_CASE("patch masks: a rank draws its own of the global batch's, and the state resumes the draws") {
  orrery::PatchMasker::Options o{true, 16, 4, 0.5};
  const std::vector<int64_t> variates = {1, 3, 2, 1};  // accumulate 2 x world 2, j * world + rank
  orrery::PatchMasker one(o, 7), rank1(o, 7);
  const auto all = one.draw(5, variates, 1, 0, at::kCPU);  // one process: 4 micro-batches
  const auto mine = rank1.draw(5, variates, 2, 1, at::kCPU);
  REQUIRE(all.size() == 4);
  REQUIRE(mine.size() == 2);
  CHECK(at::equal(mine[0], all[1]));
  CHECK(at::equal(mine[1], all[3]));
  CHECK(mine[1].sizes() == at::IntArrayRef({5, 1, 16}));
  orrery::PatchMasker later(o, 99);
  later.set_state(one.state());
  CHECK(at::equal(later.draw(5, {2}, 1, 0, at::kCPU)[0], one.draw(5, {2}, 1, 0, at::kCPU)[0]));
  CHECK(!orrery::PatchMasker({false, 16, 4, 0.5}, 7).draw(5, {1, 1}, 1, 0, at::kCPU)[1].defined());
  CHECK_THROWS_WITH(later.set_state("xyz"), Catch::Contains("not hex"));
}

TEST_CASE("a run's seed streams are named: each depends on the run seed and its own name only") {
  const orrery::RunSeeds s = orrery::RunSeeds::of(7);
  CHECK(s.data == orrery::stream_seed(7, "data"));
  CHECK(s.masking == orrery::stream_seed(7, "masking"));
  const std::vector<uint64_t> all = {s.data, s.validation, s.batches, s.validation_batches, s.masking};
  for (size_t i = 0; i < all.size(); ++i)
    for (size_t j = i + 1; j < all.size(); ++j) CHECK(all[i] != all[j]);
  CHECK(orrery::RunSeeds::of(8).data != s.data);
}

TEST_CASE("early_weight weighs each target patch's first steps, as a weighted mean") {
  orrery::Batch b = batches(1, 7)[0];
  b.observed = at::ones_like(b.observed);  // every target counts: the counts below are exact
  const auto model = test::tiny_model(3);
  const int64_t P = model->patch_size(), h = P / 4;
  const auto loss = [&](int64_t steps, double weight) {
    orrery::ForwardContext ctx;
    ctx.step_weights = {steps, weight};
    return model->loss(b, {}, ctx).item<double>();
  };
  const double uniform = loss(0, 1);
  // The defaults, and a weighting that weighs nothing differently, are the plain loss exactly.
  CHECK(loss(0, 5) == uniform);
  CHECK(loss(h, 1) == uniform);
  CHECK(loss(P, 3) == Approx(uniform).epsilon(1e-6));  // every step alike: the same mean
  // Weight 0 leaves the mean over the later steps; with the plain mean it gives the early steps'.
  const double late = loss(h, 0);
  const double early = (P * uniform - (P - h) * late) / h;
  CHECK(early != Approx(late).epsilon(1e-3));  // the two parts differ, so the weights show
  for (double w : {0.25, 4.0, 16.0})
    CHECK(loss(h, w) == Approx((w * h * early + (P - h) * late) / (w * h + (P - h))).epsilon(1e-5));
  CHECK_THROWS_WITH(loss(P + 1, 2), Catch::Contains("early_steps") && Catch::Contains("patch size"));
}
