// The data pipeline in the host: batches prefetched by worker threads (the same batches for
// any number of workers), and weighted mixtures of sources.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <atomic>
#include <thread>

#include "orrery/host/augment.h"
#include "orrery/host/batch_queue.h"
#include "orrery/host/data_mixture.h"
#include "orrery/error.h"
#include "orrery/host/registry.h"

using namespace orrery;

namespace {

std::unique_ptr<DataSource> synthetic(uint64_t seed = 0, int variates = 1) {
  return make_data_source(Registry::global(), {"synthetic", {{"variates", variates}}}, DataContext{seed});
}

bool same(const Batch& a, const Batch& b) {
  return a.values.equal(b.values) && a.observed.equal(b.observed) && a.series_ids.equal(b.series_ids);
}

// A source that fails on one batch seed and counts its calls.
struct Faulty final : DataSource {
  uint64_t bad;
  mutable std::atomic<int> calls{0};
  explicit Faulty(uint64_t b) : bad(b) {}
  Batch sample(const SampleRequest& r) const override {
    ++calls;
    if (r.seed == bad) throw Error("bad batch");
    Batch out;
    out.values = at::full({r.batch, 1, r.length}, static_cast<double>(r.seed % 1000), at::kFloat);
    out.observed = at::ones({r.batch, 1, r.length}, at::kBool);
    out.series_ids = at::zeros({r.batch, 1}, at::kLong);
    return out;
  }
};

}  // namespace

TEST_CASE("the batch queue hands out the same batches whatever the number of workers") {
  auto src = synthetic();
  std::vector<Batch> reference;
  {
    BatchQueue q(*src, {8, 128, 42, 0, 4});
    for (int i = 0; i < 12; ++i) reference.push_back(q.next());
  }
  for (int workers : {1, 3}) {
    for (int depth : {1, 5}) {
      INFO(workers << " workers, depth " << depth);
      BatchQueue q(*src, {8, 128, 42, workers, depth});
      for (int i = 0; i < 12; ++i) CHECK(same(q.next(), reference[static_cast<size_t>(i)]));
      CHECK(q.stats().batches == 12);
    }
  }
  // A queue that starts at batch 5 (a resumed run) hands out batch 5 onwards.
  BatchQueueConfig later{8, 128, 42, 2, 3};
  later.first = 5;
  BatchQueue resumed(*src, later);
  for (int i = 5; i < 12; ++i) CHECK(same(resumed.next(), reference[static_cast<size_t>(i)]));
  // Another seed, other batches; the batch size and length are as asked.
  BatchQueue other(*src, {8, 128, 43, 2, 4});
  const Batch b = other.next();
  CHECK_FALSE(same(b, reference[0]));
  CHECK(b.values.sizes() == at::IntArrayRef({8, 1, 128}));
}

TEST_CASE("the batch queue draws at most depth batches ahead and rethrows a worker's error in order") {
  const uint64_t seed = 7;
  Faulty src(mix_seed(seed, 3));  // batch 3 (the fourth) fails
  BatchQueue q(src, {2, 16, seed, 2, 3});
  for (int i = 0; i < 3; ++i) CHECK(q.next().values.size(0) == 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(src.calls.load() <= 3 + 3);  // consumed + depth
  CHECK_THROWS_WITH(q.next(), "bad batch");
  CHECK(q.next().values.size(0) == 2);  // the queue goes on after a failed batch
}

TEST_CASE("a mixture draws each sample from a source by weight, padding variates and contexts") {
  auto& reg = Registry::global();
  const Json spec = {{"sources", Json::array({Json{{"name", "synthetic"}, {"options", {{"weight", 3}, {"variates", 1}}}},
                                              Json{{"name", "synthetic"}, {"options", {{"weight", 1}, {"variates", 3}}}}})}};
  auto mix = make_data_source(reg, {"mixture", spec}, DataContext{});
  const Batch b = mix->sample({400, 64, 1});
  REQUIRE(b.values.sizes() == at::IntArrayRef({400, 3, 64}));
  // One-variate samples carry two padding variates: never observed, each its own series.
  const at::Tensor padded = b.observed.select(1, 1).any(-1).logical_not();
  const double share = padded.to(at::kDouble).mean().item<double>();
  CHECK(share == Approx(0.75).margin(0.07));  // 3 : 1
  const at::Tensor ids = b.series_ids.index({padded});
  CHECK((ids.select(1, 1) != ids.select(1, 0)).all().item<bool>());
  CHECK((ids.select(1, 2) != ids.select(1, 1)).all().item<bool>());
  // Deterministic for a seed, different across seeds.
  CHECK(same(mix->sample({400, 64, 1}), b));
  CHECK_FALSE(same(mix->sample({400, 64, 2}), b));
  // Contexts of every length: the first steps of some samples are unobserved.
  auto varied = make_data_source(reg, {"mixture", {{"sources", Json::array({"synthetic"})}, {"min_context", 16}}}, DataContext{});
  const Batch v = varied->sample({64, 256, 3});
  const at::Tensor first_seen = v.observed.select(1, 0).to(at::kInt).argmax(-1);
  CHECK(first_seen.max().item<int64_t>() > 128);
  CHECK(first_seen.max().item<int64_t>() <= 256 - 16);
  CHECK(varied->describe()["min_context"] == 16);
}

TEST_CASE("mixture errors name the source at fault") {
  auto& reg = Registry::global();
  auto make = [&](Json sources) { return make_data_source(reg, {"mixture", {{"sources", sources}}}, DataContext{}); };
  CHECK_THROWS_WITH(make(Json::array()), Catch::Contains("sources must be a non-empty list"));
  CHECK_THROWS_WITH(make(Json::array({"synthetic", "nonesuch"})),
                    Catch::Contains("data source 2 of the mixture ('nonesuch')") && Catch::Contains("unknown data plugin"));
  CHECK_THROWS_WITH(make(Json::array({Json{{"name", "synthetic"}, {"options", {{"weight", -1}}}}})),
                    Catch::Contains("data source 1 of the mixture: weight must be a positive number"));
  CHECK_THROWS_WITH(make(Json::array({Json{{"name", "synthetic"}, {"options", {{"variats", 2}}}}})),
                    Catch::Contains("data source 1 of the mixture ('synthetic')") && Catch::Contains("variates"));
  CHECK_THROWS_WITH(make_data_source(reg, {"mixture", {{"source", Json::array({"synthetic"})}}}, DataContext{}),
                    Catch::Contains("data mixture") && Catch::Contains("sources"));
}

namespace {
// One synthetic batch of 2 variates, 96 steps, with missing values in about half the samples
// (or none); and its augmentation.
Batch drawn(double missing_prob = 0.5) {
  return make_data_source(Registry::global(), {"synthetic", {{"variates", 2}, {"missing_prob", missing_prob}}},
                          DataContext{})
      ->sample({32, 96, 5});
}
Batch augmented(Batch b, const Json& table, uint64_t seed = 9) {
  b.values = b.values.clone(), b.observed = b.observed.clone();
  augment(b.values, b.observed, Augmentations::parse(table, "test"), seed);
  return b;
}
}  // namespace

TEST_CASE("augmentations: sign flip and time reversal undo themselves; none leaves a batch as drawn") {
  const Batch b = drawn();
  CHECK(same(augmented(b, Json::object()), b));
  CHECK(same(augmented(b, {{"sign_flip", 0}, {"mixup", 0}}), b));
  const Batch flipped = augmented(b, {{"sign_flip", 1}});
  CHECK(at::equal(flipped.values, -b.values));
  CHECK(same(augmented(flipped, {{"sign_flip", 1}}), b));
  CHECK(same(augmented(augmented(b, {{"time_reversal", 1}}), {{"time_reversal", 1}}), b));
  // Fully observed, a reversal is the flip in time.
  const Batch full = drawn(0);
  const Batch reversed = augmented(full, {{"time_reversal", 1}});
  CHECK(at::equal(reversed.values, full.values.flip({2})));
  CHECK(at::equal(reversed.observed, full.observed));
  // A short series keeps its padding in front: reversed within its own span.
  const Batch shorts = make_data_source(Registry::global(), {"synthetic", {{"short_prob", 1}, {"missing_prob", 0}}},
                                        DataContext{})->sample({8, 600, 2});
  const Batch back = augmented(shorts, {{"time_reversal", 1}});
  CHECK(at::equal(back.observed, shorts.observed));
  for (int64_t i = 0; i < 8; ++i) {
    const int64_t L = shorts.observed[i][0].sum().item<int64_t>();
    CHECK(at::equal(back.values[i][0].narrow(0, 600 - L, L), shorts.values[i][0].narrow(0, 600 - L, L).flip({0})));
  }
  // At probability one half, about half the samples are negated; the same seed, the same ones.
  const Batch half = augmented(b, {{"sign_flip", 0.5}});
  int negated = 0;
  for (int64_t i = 0; i < 32; ++i) negated += at::equal(half.values[i], -b.values[i]) && !at::equal(half.values[i], b.values[i]);
  CHECK(negated > 8);
  CHECK(negated < 24);
  CHECK(same(augmented(b, {{"sign_flip", 0.5}}), half));
}

TEST_CASE("augmentations: mixup, level shifts and missing stretches do what they say") {
  const Batch b = drawn();
  auto mean_abs = [&](const at::Tensor& x, const at::Tensor& seen) {
    return (x.abs() * seen).sum().item<double>() / std::max<double>(1, seen.sum().item<double>());
  };
  // Mixup: observed only where the sample and its partners were.
  const Batch mixed = augmented(b, {{"mixup", 1}});
  int changed = 0;
  for (int64_t i = 0; i < 32; ++i) {
    CHECK((mixed.observed[i].logical_and(b.observed[i].logical_not())).sum().item<int64_t>() == 0);
    changed += !at::equal(mixed.values[i], b.values[i]);
  }
  CHECK(changed == 32);
  // Fully observed, a convex mix of series of unit mean absolute value, put back on the
  // sample's own scale, is no larger than the sample on average (the triangle inequality).
  const Batch full = drawn(0);
  const Batch full_mixed = augmented(full, {{"mixup", 1}});
  for (int64_t i = 0; i < 32; ++i)
    CHECK(mean_abs(full_mixed.values[i], full_mixed.observed[i]) <= mean_abs(full.values[i], full.observed[i]) * 1.0001);
  // Level shift: in every variate the change is one step, constant from some time on, on the
  // observed steps.
  const Batch shifted = augmented(b, {{"level_shift", 1}});
  for (int64_t i = 0; i < 32; ++i)
  for (int64_t var = 0; var < 2; ++var) {
    const at::Tensor d = (shifted.values[i][var] - b.values[i][var]).masked_select(b.observed[i][var]);
    const auto v = d.to(at::kDouble);
    const double last = v[-1].item<double>();
    // float32 rounds x + shift to within a few units in the last place of x and of the sum.
    const double ulp = 4e-7 * (b.values[i].abs().max().item<double>() + std::fabs(last));
    bool started = false, step = true;
    for (int64_t k = 0; k < v.size(0); ++k) {
      const double x = v[k].item<double>();
      if (std::fabs(x) > 2 * ulp) started = true;
      if (started) step = step && std::fabs(x - last) <= 2 * ulp;
    }
    INFO("sample " << i << ", shift " << last);
    CHECK(step);
  }
  // Missing: one stretch of at most 15% + 1 of the steps goes unobserved in every variate.
  const Batch holed = augmented(b, {{"missing", 1}});
  for (int64_t i = 0; i < 32; ++i) {
    const int64_t lost = (b.observed[i].logical_and(holed.observed[i].logical_not())).sum().item<int64_t>();
    CHECK(lost <= 2 * (1 + 96 * 15 / 100));
    CHECK((holed.observed[i].logical_and(b.observed[i].logical_not())).sum().item<int64_t>() == 0);
  }
}

TEST_CASE("a mixture's augment option: applied before the contexts are cut, described, checked") {
  auto& reg = Registry::global();
  const Json sources = Json::array({Json{{"name", "synthetic"}, {"options", {{"missing_prob", 0}}}}});
  auto plain = make_data_source(reg, {"mixture", {{"sources", sources}, {"min_context", 16}}}, DataContext{});
  auto none = make_data_source(reg, {"mixture", {{"sources", sources}, {"min_context", 16}, {"augment", Json::object()}}},
                               DataContext{});
  auto flip = make_data_source(reg, {"mixture", {{"sources", sources}, {"min_context", 16}, {"augment", {{"time_reversal", 1}}}}},
                               DataContext{});
  const Batch p = plain->sample({16, 128, 4});
  CHECK(same(none->sample({16, 128, 4}), p));  // no augmentation: the batch drawn before augment existed
  const Batch r = flip->sample({16, 128, 4});
  CHECK(at::equal(r.observed, p.observed));  // the same contexts, cut after the reversal: every sample ends observed
  CHECK(r.observed.select(2, 127).all().item<bool>());
  CHECK(flip->describe()["augment"]["time_reversal"] == 1);
  CHECK_FALSE(plain->describe().contains("augment"));
  CHECK_THROWS_WITH(make_data_source(reg, {"mixture", {{"sources", sources}, {"augment", {{"mix_up", 0.1}}}}}, DataContext{}),
                    "data mixture option 'augment': unknown augmentation 'mix_up'; the augmentations are sign_flip, "
                    "time_reversal, mixup, level_shift and missing");
  CHECK_THROWS_WITH(make_data_source(reg, {"mixture", {{"sources", sources}, {"augment", {{"mixup", 2}}}}}, DataContext{}),
                    "data mixture option 'augment': mixup is a probability from 0 to 1, got 2");
}
