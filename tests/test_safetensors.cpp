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

TEST_CASE("the mean of several files' weights: each checked first, a checkpoint folder read through its file") {
  auto dir = test::temp_dir("st-average");
  auto a = test::tiny_model(1), b = test::tiny_model(2), c = test::tiny_model(3), avg = test::tiny_model(4);
  a->save_weights(dir + "/a.safetensors");
  b->save_weights(dir + "/b.safetensors");
  std::filesystem::create_directories(dir + "/step-000000010");
  c->save_weights(dir + "/step-000000010/model.safetensors");
  avg->load_average({dir + "/a.safetensors", dir + "/b.safetensors", dir + "/step-000000010"});
  for (size_t i = 0; i < avg->params().size(); ++i) {
    INFO(avg->params()[i].info.name);
    const at::Tensor mean = (a->params()[i].tensor.to(at::kDouble) + b->params()[i].tensor.to(at::kDouble) +
                             c->params()[i].tensor.to(at::kDouble)) / 3;
    CHECK(at::equal(avg->params()[i].tensor, mean.to(avg->params()[i].tensor.scalar_type())));
  }
  // One file that does not fit: an error naming it, and the model as it was.
  orrery::ModelSpec wider = test::tiny_spec();
  wider.arch.options["d_model"] = 64;
  orrery::Model(wider, orrery::Registry::global()).save_weights(dir + "/wide.safetensors");
  const at::Tensor before = avg->params()[0].tensor.clone();
  CHECK_THROWS_WITH(avg->load_average({dir + "/a.safetensors", dir + "/wide.safetensors"}),
                    Catch::Contains("wide.safetensors does not match this model"));
  CHECK(at::equal(avg->params()[0].tensor, before));
  CHECK_THROWS_WITH(avg->load_average({}), Catch::Contains("needs at least one file"));
}

namespace {
// A file with a hand-written header: the header's JSON, then `data` bytes.
void write_raw(const std::string& path, const orrery::Json& header, size_t data) {
  const std::string text = header.dump();
  const uint64_t n = text.size();
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(&n), 8);
  f << text << std::string(data, '\0');
}
}  // namespace

TEST_CASE("a safetensors header is checked against the format, naming the tensor at fault") {
  auto dir = test::temp_dir("st-header");
  using orrery::Json;
  auto load = [&](const Json& header, size_t data) {
    write_raw(dir + "/h.safetensors", header, data);
    orrery::load_safetensors(dir + "/h.safetensors");
  };
  const Json w = {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {0, 8}}};
  CHECK_NOTHROW(load({{"w", w}}, 8));
  CHECK_THROWS_WITH(load({{"w", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {nullptr, 8}}}}}, 8),
                    Catch::Contains("h.safetensors: not a valid safetensors file: tensor 'w' has data_offsets "
                                    "that are not two byte offsets"));
  CHECK_THROWS_WITH(load({{"w", {{"dtype", "F32"}, {"shape", "2"}, {"data_offsets", {0, 8}}}}}, 8),
                    Catch::Contains("tensor 'w' has a shape that is not a list"));
  CHECK_THROWS_WITH(load({{"w", {{"dtype", "F32"}, {"shape", {-2}}, {"data_offsets", {0, 8}}}}}, 8),
                    Catch::Contains("tensor 'w' has a shape that is not a list of sizes"));
  CHECK_THROWS_WITH(load({{"w", {{"dtype", "F32"}, {"shape", {3}}, {"data_offsets", {0, 8}}}}}, 8),
                    Catch::Contains("tensor 'w' has data_offsets [0,8] (8 bytes) but its dtype and shape [3] need 12"));
  CHECK_THROWS_WITH(load({{"w", w}, {"v", w}}, 8), Catch::Contains("overlap"));
  CHECK_THROWS_WITH(load({{"w", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {8, 16}}}}}, 16),
                    Catch::Contains("bytes 0 to 8 of the data belong to no tensor"));
  CHECK_THROWS_WITH(load({{"w", w}}, 12), Catch::Contains("4 bytes after the last tensor"));
  CHECK_THROWS_WITH(load({{"w", w}}, 4), Catch::Contains("(truncated?)"));
  CHECK_THROWS_WITH(load({{"w", {{"dtype", "F33"}, {"shape", {2}}, {"data_offsets", {0, 8}}}}}, 8),
                    Catch::Contains("unsupported dtype \"F33\""));
  CHECK_THROWS_WITH(load({{"__metadata__", {{"k", 1}}}, {"w", w}}, 8), Catch::Contains("__metadata__ entry 'k' is not a string"));
  CHECK_THROWS_WITH(orrery::load_safetensors(dir), Catch::Contains("is a folder"));
}

TEST_CASE("weights relabelled to an integer dtype, or holding NaN, are refused by the model") {
  auto dir = test::temp_dir("st-weights");
  auto model = test::tiny_model(1);
  const std::string path = dir + "/m.safetensors";
  model->save_weights(path);
  auto file = orrery::load_safetensors(path);
  std::map<std::string, std::string> meta = file.metadata;

  // The same bytes of the first tensor, labelled I32 (a relabelled header).
  auto relabelled = file.tensors;
  relabelled[0].second = relabelled[0].second.view(at::kInt);
  orrery::save_safetensors(dir + "/i32.safetensors", relabelled, meta);
  CHECK_THROWS_WITH(orrery::Model::from_file(dir + "/i32.safetensors", orrery::Registry::global()),
                    Catch::Contains("'" + relabelled[0].first + "' is stored as Int, the model's parameter is floating point"));

  auto poisoned = file.tensors;
  poisoned[1].second = poisoned[1].second.clone();
  poisoned[1].second.view(-1)[0] = std::nan("");
  orrery::save_safetensors(dir + "/nan.safetensors", poisoned, meta);
  CHECK_THROWS_WITH(orrery::Model::from_file(dir + "/nan.safetensors", orrery::Registry::global()),
                    Catch::Contains("'" + poisoned[1].first + "' holds 1 non-finite value (NaN or infinity)"));
}
