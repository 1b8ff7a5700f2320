// Fidelity to the released Toto 2.0 code: a small model with random weights, saved by the
// reference package as a Hugging Face folder, and its forecasts of a multivariate batch with
// missing values (tests/data/toto2-reference, written by tests/reference/make_toto2_reference.py).
// Orrery loads the folder and must forecast the same quantiles.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include "orrery/host/load_model.h"
#include "orrery/safetensors.h"
#include "support.h"

namespace {
const std::string kDir = std::string(ORRERY_SOURCE_DIR) + "/tests/data/toto2-reference";

struct Case {
  orrery::SafetensorsFile file = orrery::load_safetensors(kDir + "/case.safetensors");
  at::Tensor get(const std::string& name) const { return *file.find(name); }
  int64_t horizon() const { return std::stoll(file.metadata.at("horizon")); }
};

// Largest error relative to each series' spread of forecasts, so scales 0.01 .. 1e3 count alike.
double relative_error(const at::Tensor& ours, const at::Tensor& theirs) {
  at::Tensor spread = (theirs.amax({0, -1}, true) - theirs.amin({0, -1}, true)).clamp_min(1e-6);
  return ((ours - theirs).abs() / spread).max().item<double>();
}
}  // namespace

TEST_CASE("single-pass forecasts equal the reference implementation's") {
  Case c;
  auto model = orrery::load_model(kDir, orrery::Registry::global());
  auto f = model->forecast(c.get("target"), c.get("target_mask").to(at::kBool), c.get("series_ids"), c.horizon());
  at::Tensor expected = c.get("single_pass");
  REQUIRE(f.quantiles.sizes() == expected.sizes());
  const double err = relative_error(f.quantiles, expected);
  INFO("max error relative to the forecast spread: " << err);
  CHECK(err < 1e-5);  // measured: 8e-7
}

TEST_CASE("block decoding equals the reference decoder") {
  // The released decoder re-centres xPos in every call, and Orrery's default (xpos_centre =
  // "per_call") does the same; "session" keeps one centre, so that the cache equals
  // recomputation, and then differs from the reference a little more with every block.
  Case c;
  auto model = orrery::load_model(kDir, orrery::Registry::global());
  for (int64_t block : {64, 32}) {
    orrery::ForecastOptions o;
    o.decode_block_size = block;
    auto f = model->forecast(c.get("target"), c.get("target_mask").to(at::kBool), c.get("series_ids"), c.horizon(), o);
    const double err = relative_error(f.quantiles, c.get("block_" + std::to_string(block)));
    INFO("decode_block_size " << block << ": max error relative to the forecast spread: " << err);
    CHECK(err < 1e-5);
  }
}
