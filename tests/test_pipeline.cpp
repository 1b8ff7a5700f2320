// The data pipeline in the host: batches prefetched by worker threads (the same batches for
// any number of workers), and weighted mixtures of sources.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <atomic>
#include <thread>

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
