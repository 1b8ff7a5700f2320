// @NAME@: a data source plugin, series drawn on demand. Sample i of a batch (seeded by the
// request, so a batch is the same whichever thread draws it):
//
//   period ~ uniform over `periods`,  phase ~ U(0, 2 pi),  level ~ U(-1, 1)
//   y_t    = level + sin(2 pi t / period + phase) + noise * e_t,   e_t ~ N(0, 1)
//
// A source of real series would read files here instead (see the csv plugin); describe() says
// what the source holds, for a run's config.json.
#include <ATen/ATen.h>

#include <cmath>

#include "orrery/plugin.h"

namespace {
using namespace orrery;

class Waves final : public DataSource {
 public:
  Waves(const Json& o, const DataContext& ctx)
      : noise_(o["noise"]), periods_(o["periods"].get<std::vector<double>>()), seed_(mix_seed(o["seed"], ctx.seed)) {
    if (periods_.empty()) throw Error("data plugin '@NAME@': option 'periods' must not be empty");
  }

  Batch sample(const SampleRequest& r) const override {
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(mix_seed(seed_, r.seed));
    const at::Tensor t = at::arange(r.length, at::kFloat).unsqueeze(0);  // (1, T)
    const at::Tensor pick = at::randint(static_cast<int64_t>(periods_.size()), {r.batch, 1}, gen);
    const at::Tensor period = at::tensor(periods_, at::kFloat).index_select(0, pick.view(-1)).view({r.batch, 1});
    const at::Tensor phase = at::rand({r.batch, 1}, gen) * (2 * M_PI);
    const at::Tensor level = at::rand({r.batch, 1}, gen) * 2 - 1;
    const at::Tensor y = level + at::sin(2 * M_PI * t / period + phase) + noise_ * at::randn({r.batch, r.length}, gen);
    Batch b;
    b.values = y.unsqueeze(1);                                   // (B, 1, T): one variate a series
    b.observed = at::ones_like(b.values, at::kBool);             // every step observed
    b.series_ids = at::arange(r.batch, at::kLong).unsqueeze(1);  // each sample its own series
    return b;
  }

  Json describe() const override { return {{"periods", periods_}, {"noise", noise_}}; }

 private:
  double noise_;
  std::vector<double> periods_;
  uint64_t seed_;
};

OptionSchema schema() {
  return OptionSchema{}
      .number("noise", 0.1, "standard deviation of the noise", 0.0)
      .number_list("periods", {12, 24}, "periods the waves are drawn from, in steps")
      .integer("seed", 0, "the source's own seed, mixed with the run's", 0);
}

std::unique_ptr<DataSource> make(const Json& o, const DataContext& ctx) { return std::make_unique<Waves>(o, ctx); }

}  // namespace

ORRERY_PLUGIN(data, "@NAME@", "0.1.0", "@NAME@: noisy sine waves of a few periods (a scaffold)", schema, make)
