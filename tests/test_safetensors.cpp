#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>

#include "orrery/error.h"
#include "orrery/safetensors.h"
#include "support.h"

TEST_CASE("safetensors round-trips names, dtypes, shapes, values and metadata") {
  auto dir = test::temp_dir("st");
  orrery::NamedTensors in = {{"a.weight", at::randn({3, 4})},
                             {"b", at::arange(6, at::kLong).view({2, 3})},
                             {"c", at::randn({5}).to(at::kBFloat16)},
                             {"scalar", at::tensor(2.5, at::kDouble)}};
  orrery::save_safetensors(dir + "/x.safetensors", in, {{"k", "v"}});
  auto out = orrery::load_safetensors(dir + "/x.safetensors");
  REQUIRE(out.tensors.size() == 4);
  for (const auto& [name, t] : in) {
    INFO(name);
    const at::Tensor* r = out.find(name);
    REQUIRE(r);
    CHECK(r->scalar_type() == t.scalar_type());
    CHECK(at::equal(*r, t));
  }
  CHECK(out.metadata.at("k") == "v");
  // The layout Python's safetensors expects: u64 header length, then JSON, 8-byte aligned data.
  std::ifstream f(dir + "/x.safetensors", std::ios::binary);
  uint64_t n = 0;
  f.read(reinterpret_cast<char*>(&n), 8);
  std::string header(n, '\0');
  f.read(header.data(), n);
  CHECK(n % 8 == 0);
  auto j = orrery::Json::parse(header);
  CHECK(j["a.weight"]["dtype"] == "F32");
  CHECK(j["a.weight"]["data_offsets"] == orrery::Json::array({0, 48}));
  CHECK(j["c"]["dtype"] == "BF16");
}

TEST_CASE("damaged safetensors files are refused with the file's name") {
  auto dir = test::temp_dir("st-bad");
  std::ofstream(dir + "/short.safetensors") << "abc";
  CHECK_THROWS_WITH(orrery::load_safetensors(dir + "/short.safetensors"),
                    Catch::Contains("short.safetensors: not a valid safetensors file"));
  orrery::save_safetensors(dir + "/ok.safetensors", {{"w", at::ones({64})}});
  std::filesystem::resize_file(dir + "/ok.safetensors", std::filesystem::file_size(dir + "/ok.safetensors") - 4);
  CHECK_THROWS_WITH(orrery::load_safetensors(dir + "/ok.safetensors"), Catch::Contains("tensor 'w'"));
}

TEST_CASE("model weights saved and loaded reproduce the forecasts; mismatches are named") {
  auto dir = test::temp_dir("st-model");
  auto a = test::tiny_model(1), b = test::tiny_model(2);
  at::Tensor x = at::randn({1, 1, 96}) * 5 + 50;
  at::Tensor obs = at::ones({1, 1, 96}, at::kBool), ids = at::zeros({1, 1}, at::kLong);
  a->save_weights(dir + "/m.safetensors");
  CHECK(!at::equal(a->forecast(x, obs, ids, 8).quantiles, b->forecast(x, obs, ids, 8).quantiles));
  b->load_weights(dir + "/m.safetensors");
  CHECK(at::equal(a->forecast(x, obs, ids, 8).quantiles, b->forecast(x, obs, ids, 8).quantiles));

  orrery::ModelSpec wider = test::tiny_spec();
  wider.arch.options["d_model"] = 64;
  orrery::Model c(wider, orrery::Registry::global());
  at::Tensor before = c.params()[0].tensor.clone();
  CHECK_THROWS_WITH(c.load_weights(dir + "/m.safetensors"),
                    Catch::Contains("m.safetensors does not match this model") && Catch::Contains("has shape"));
  CHECK(at::equal(c.params()[0].tensor, before));  // nothing half-loaded
}
