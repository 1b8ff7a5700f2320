// Covariates as rows of a series (VariateRole): what a model reads of each kind, what it
// never reads, what the loss scores, and the checks on a forecast's covariate arguments.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "orrery/batch.h"
#include "orrery/data_source.h"
#include "support.h"

namespace {

namespace fs = std::filesystem;
using orrery::Json;
using orrery::VariateRole;

constexpr int64_t P = 32;  // tiny_spec's patch size

// tiny_spec (two layers, the last across variates) with role embeddings, or with `extra` options.
std::unique_ptr<orrery::Model> covariate_model(uint64_t seed, Json extra = Json::object()) {
  orrery::ModelSpec s = test::tiny_spec(seed);
  s.arch.options["variate_roles"] = true;
  for (const auto& [k, v] : extra.items()) s.arch.options[k] = v;
  return std::make_unique<orrery::Model>(s, orrery::Registry::global());
}

at::Tensor roles_of(std::vector<int64_t> r) { return at::tensor(r, at::kLong).unsqueeze(0); }

// One series of V rows and T steps, every step observed.
orrery::Batch batch_of(const at::Tensor& values, const at::Tensor& roles) {
  orrery::Batch b;
  b.values = values;
  b.observed = at::ones(values.sizes(), at::kBool);
  b.series_ids = at::zeros({values.size(0), values.size(1)}, at::kLong);
  b.roles = roles;
  return b;
}

// Role embeddings away from their zero init, so that the rows differ by role.
void perturb_roles(orrery::Model& m) {
  at::NoGradGuard no_grad;
  for (auto& p : m.params())
    if (p.info.name == "role_embedding") p.tensor.copy_(at::randn(p.tensor.sizes()) * 0.5);
}

std::unique_ptr<orrery::DataSource> synthetic(const Json& options) {
  return orrery::Registry::global().create<orrery::PluginKind::data>("synthetic", options, orrery::DataContext{});
}

// The largest |correlation| of the first differences of y_t and x_{t-lag}, lag 0..12, over the
// observed steps both rows have.
double lagged_correlation(const at::Tensor& y, const at::Tensor& x) {
  const at::Tensor dy = y.to(at::kDouble).diff(), dx = x.to(at::kDouble).diff();
  double best = 0;
  for (int64_t lag = 0; lag <= 12; ++lag) {
    const int64_t n = dy.size(0) - lag;
    const at::Tensor a = dy.narrow(0, lag, n), b = dx.narrow(0, 0, n);
    const at::Tensor ca = a - a.mean(), cb = b - b.mean();
    const double r = (ca * cb).sum().item<double>() / std::sqrt((ca * ca).sum().item<double>() * (cb * cb).sum().item<double>() + 1e-300);
    best = std::max(best, std::fabs(r));
  }
  return best;
}

// Runs the Lua script at `path` with `orrery run`: it must exit 0 after printing `done`, its last line.
void check_script(const std::string& path, const std::string& done) {
  const auto r = test::run_command(test::orrery_cmd("run " + path));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains(done));
}

}  // namespace

TEST_CASE("covariate tasks: one series of a target and its covariates, each with its role") {
  const Json plain = {{"missing_prob", 1}};
  Json tasks = plain;
  tasks["covariate_prob"] = 1, tasks["max_covariates"] = 3;
  const orrery::Batch b = synthetic(tasks)->sample({64, 256, 3});
  REQUIRE(b.roles.defined());
  CHECK(b.values.size(1) == 4);  // a target and room for three covariates
  int64_t past = 0, future = 0;
  for (int64_t i = 0; i < 64; ++i) {
    const at::Tensor roles = b.roles[i], ids = b.series_ids[i], seen = b.observed[i].any(-1);
    CHECK(roles[0].item<int64_t>() == 0);
    const int64_t rows = seen.sum().item<int64_t>();  // the task's rows come first, the rest are empty
    REQUIRE(rows >= 2);
    CHECK(at::equal(seen.narrow(0, 0, rows), at::ones({rows}, at::kBool)));
    CHECK(at::equal(ids.narrow(0, 0, rows), at::zeros({rows}, at::kLong)));
    CHECK((ids.narrow(0, rows, 4 - rows) > 0).all().item<bool>());
    for (int64_t c = 1; c < rows; ++c) {
      const int64_t role = roles[c].item<int64_t>();
      CHECK((role == 1 || role == 2));
      (role == 1 ? past : future) += 1;
      if (role == 2) CHECK(b.observed[i][c].all().item<bool>());  // known ahead: never missing
    }
  }
  CHECK(past > 10);
  CHECK(future > 10);
  // Without tasks the source draws what it always drew, with no roles.
  const orrery::Batch none = synthetic({{"missing_prob", 1}, {"covariate_prob", 0}})->sample({8, 256, 3});
  const orrery::Batch before = synthetic(plain)->sample({8, 256, 3});
  CHECK(!none.roles.defined());
  CHECK(at::equal(none.values, before.values));
  CHECK(at::equal(none.observed, before.observed));
}

TEST_CASE("informative covariates drive their targets; noise covariates do not") {
  // Random-walk-like paths (ou), one covariate, a lagged linear effect: the target's steps follow
  // the covariate's steps at some lag in 0..12. A noise covariate's steps follow nothing.
  Json o = {{"missing_prob", 0}, {"families", {{"ou", 1}}}, {"covariate_prob", 1}, {"max_covariates", 1},
            {"effects", {{"lag", 1}}}, {"noise_covariates", 0}};
  auto mean_correlation = [&](const Json& options) {
    const orrery::Batch b = synthetic(options)->sample({64, 512, 9});
    double sum = 0;
    for (int64_t i = 0; i < 64; ++i) sum += lagged_correlation(b.values[i][0], b.values[i][1]);
    return sum / 64;
  };
  const double informative = mean_correlation(o);
  o["noise_covariates"] = 1;
  const double noise = mean_correlation(o);
  INFO("informative " << informative << ", noise " << noise);
  CHECK(informative > 0.4);
  CHECK(noise < 0.2);
}

TEST_CASE("role embeddings start at zero: with them a model forecasts and trains exactly as without") {
  auto plain = test::tiny_model(4);
  auto with_roles = covariate_model(4);
  CHECK(with_roles->params().size() == plain->params().size() + 1);
  at::Tensor x = at::randn({2, 1, 100}, at::kDouble) + 5;
  at::Tensor obs = at::ones({2, 1, 100}, at::kBool);
  at::Tensor ids = at::zeros({2, 1}, at::kLong);
  CHECK(at::equal(plain->forecast(x, obs, ids, 40).quantiles, with_roles->forecast(x, obs, ids, 40).quantiles));
  orrery::Batch b = batch_of(at::randn({2, 3, 4 * P}), {});
  CHECK(plain->loss(b).item<double>() == with_roles->loss(b).item<double>());
  // Roles that name every row a target are the same as none, for a model with or without them.
  orrery::ForecastOptions all_targets;
  all_targets.roles = at::zeros({2, 1}, at::kLong);
  CHECK(at::equal(plain->forecast(x, obs, ids, 40).quantiles, plain->forecast(x, obs, ids, 40, all_targets).quantiles));
}

TEST_CASE("a model that does not read roles refuses covariates rather than take them for targets") {
  auto plain = test::tiny_model(1);
  orrery::Batch b = batch_of(at::randn({1, 2, 4 * P}), roles_of({0, 1}));
  CHECK_THROWS_WITH(plain->loss(b), Catch::Contains("architecture plugin 'toto2', as this model was built, does not "
                                                    "read variate roles, so it cannot tell covariates from targets"));
}

TEST_CASE("the loss scores the targets only") {
  // No variate layer: rows do not mix, so a covariate row can change the loss only through its weight.
  auto m = covariate_model(2, {{"num_variate_layers_per_group", 0}});
  at::Tensor values = at::randn({3, 2, 4 * P});
  const double target_only = m->loss(batch_of(values.narrow(1, 0, 1), roles_of({0}).expand({3, 1}))).item<double>();
  for (int64_t role : {1, 2}) {
    INFO("role " << role);
    const double with_covariate = m->loss(batch_of(values, roles_of({0, role}).expand({3, 2}))).item<double>();
    CHECK(with_covariate == Approx(target_only).epsilon(1e-6));
  }
  // Both rows as targets: each counts, as it would alone (rows of equal length weigh the same).
  const double second_only = m->loss(batch_of(values.narrow(1, 1, 1), roles_of({0}).expand({3, 1}))).item<double>();
  const double both_targets = m->loss(batch_of(values, roles_of({0, 0}).expand({3, 2}))).item<double>();
  CHECK(both_targets == Approx((target_only + second_only) / 2).epsilon(1e-6));
}

TEST_CASE("a past-only covariate is read up to the patch forecast from, a known-future one a patch ahead") {
  auto m = covariate_model(3);
  perturb_roles(*m);
  const int64_t N = 6;
  at::Tensor values = at::randn({1, 2, N * P});
  auto target_hidden = [&](const at::Tensor& v, int64_t role) {
    return m->hidden(batch_of(v, roles_of({0, role}))).select(1, 0);  // (1, N, d): the target row
  };
  for (int64_t role : {1, 2}) {
    INFO("role " << role);
    at::Tensor changed = values.clone();
    changed[0][1].narrow(0, 3 * P, 3 * P).add_(5.0);  // the covariate from patch 3 on
    const at::Tensor before = target_hidden(values, role), after = target_hidden(changed, role);
    // Patch n forecasts patch n + 1: a past-only row shows patch n there, a known-future row patch n + 1.
    const int64_t first_seen = role == 1 ? 3 : 2;
    CHECK(at::equal(before.narrow(1, 0, first_seen), after.narrow(1, 0, first_seen)));
    CHECK(!at::allclose(before.narrow(1, first_seen, 1), after.narrow(1, first_seen, 1)));
  }
}

TEST_CASE("a covariate of one series never changes another series' forecast") {
  auto m = covariate_model(5);
  perturb_roles(*m);
  // Two series in one row of the batch (ids 0 and 1), each a target and a covariate.
  at::Tensor values = at::randn({1, 4, 4 * P});
  orrery::Batch b = batch_of(values, roles_of({0, 1, 0, 2}));
  b.series_ids = at::tensor({0, 0, 1, 1}, at::kLong).unsqueeze(0);
  const at::Tensor before = m->hidden(b);
  b.values = values.clone();
  b.values[0][3].add_(at::randn({4 * P}) * 3);  // series 1's covariate (a new shape: the scaler removes a level)
  const at::Tensor after = m->hidden(b);
  CHECK(at::equal(before.narrow(1, 0, 2), after.narrow(1, 0, 2)));
  CHECK(!at::allclose(before.narrow(1, 2, 1), after.narrow(1, 2, 1)));

  // In a forecast batch, series are rows of their own.
  at::Tensor x = at::randn({2, 2, 90}, at::kDouble) + 3;
  at::Tensor obs = at::ones({2, 2, 90}, at::kBool);
  orrery::ForecastOptions o;
  o.roles = at::tensor({0, 2}, at::kLong).unsqueeze(0).expand({2, 2}).contiguous();
  o.future = at::randn({2, 2, 40}, at::kDouble);
  const at::Tensor f1 = m->forecast(x, obs, at::zeros({2, 2}, at::kLong), 40, o).quantiles;
  o.future = o.future.clone();
  o.future[1][1].add_(10.0);
  const at::Tensor f2 = m->forecast(x, obs, at::zeros({2, 2}, at::kLong), 40, o).quantiles;
  CHECK(at::equal(f1.select(1, 0).select(1, 0), f2.select(1, 0).select(1, 0)));
  CHECK(!at::allclose(f1.select(1, 1).select(1, 0), f2.select(1, 1).select(1, 0)));
  CHECK(f1.select(2, 1).isnan().all().item<bool>());  // no forecast of a covariate
  CHECK(f1.select(2, 0).isfinite().all().item<bool>());
}

TEST_CASE("known-future values reach the forecast patch by patch") {
  auto m = covariate_model(6);
  perturb_roles(*m);
  const int64_t T = 96, H = 2 * P;
  at::Tensor x = at::randn({1, 2, T}, at::kDouble) * 2 + 10;
  at::Tensor obs = at::ones({1, 2, T}, at::kBool);
  orrery::ForecastOptions o;
  o.roles = roles_of({0, 2});
  o.future = at::randn({1, 2, H}, at::kDouble);
  const at::Tensor base = m->forecast(x, obs, at::zeros({1, 2}, at::kLong), H, o).median.select(1, 0);
  o.future = o.future.clone();
  o.future[0][1].narrow(0, P, P).add_(4.0);  // the covariate over the second horizon patch
  const at::Tensor moved = m->forecast(x, obs, at::zeros({1, 2}, at::kLong), H, o).median.select(1, 0);
  CHECK(at::equal(base.narrow(-1, 0, P), moved.narrow(-1, 0, P)));
  CHECK(!at::allclose(base.narrow(-1, P, P), moved.narrow(-1, P, P)));
  // Block decoding commits the targets' medians and the covariate's own values between blocks:
  // its first block is the one pass's first patch (up to rounding: xPos centres its positions
  // on each call's), and its second block reads the covariate's second patch.
  o.decode_block_size = P;
  const at::Tensor blocks = m->forecast(x, obs, at::zeros({1, 2}, at::kLong), H, o).median.select(1, 0);
  CHECK(at::allclose(blocks.narrow(-1, 0, P), moved.narrow(-1, 0, P), 1e-4, 1e-4));
  CHECK(blocks.isfinite().all().item<bool>());
  o.future = o.future.clone();
  o.future[0][1].narrow(0, P, P).sub_(4.0);
  const at::Tensor back = m->forecast(x, obs, at::zeros({1, 2}, at::kLong), H, o).median.select(1, 0);
  CHECK(at::equal(back.narrow(-1, 0, P), blocks.narrow(-1, 0, P)));
  CHECK(!at::allclose(back.narrow(-1, P, P), blocks.narrow(-1, P, P)));
}

TEST_CASE("a forecast's covariate arguments are checked, each mismatch named") {
  auto m = covariate_model(7);
  at::Tensor x = at::randn({1, 2, 64}, at::kDouble);
  at::Tensor obs = at::ones({1, 2, 64}, at::kBool);
  at::Tensor ids = at::zeros({1, 2}, at::kLong);
  auto with = [&](at::Tensor roles, at::Tensor future) {
    orrery::ForecastOptions o;
    o.roles = roles, o.future = future;
    return m->forecast(x, obs, ids, 8, o);
  };
  CHECK_THROWS_WITH(with(roles_of({0, 2}), {}), Catch::Contains("known-future covariates but no future values"));
  CHECK_THROWS_WITH(with(roles_of({0, 2}), at::zeros({1, 2, 5}, at::kDouble)),
                    Catch::Contains("known-future covariates have 5 future steps, the horizon is 8"));
  at::Tensor gap = at::zeros({1, 2, 8}, at::kDouble);
  gap[0][1][6] = std::nan("");
  CHECK_THROWS_WITH(with(roles_of({0, 2}), gap),
                    Catch::Contains("known-future covariate (series 1, variate 2) has no value at horizon step 7"));
  gap[0][0][6] = std::nan("");  // a target's entries are never read
  gap[0][1][6] = 1.0;
  CHECK_NOTHROW(with(roles_of({0, 2}), gap));
  CHECK_THROWS_WITH(with(roles_of({0, 3}), {}), Catch::Contains("forecast roles must be 0 (target), 1"));
  CHECK_THROWS_WITH(with(roles_of({1, 1}), {}), Catch::Contains("series 1 has covariates but no target to forecast"));
  CHECK_THROWS_WITH(with(roles_of({0}), {}), Catch::Contains("forecast roles must be int64 of shape (series, variates) = (1, 2)"));
  orrery::ForecastOptions signs;
  signs.roles = roles_of({0, 1}), signs.sign_average = true;
  CHECK_THROWS_WITH(m->forecast(x, obs, ids, 8, signs), Catch::Contains("sign_average does not apply to forecasts with covariates"));
}

TEST_CASE("model:forecast takes past_covariates and future_covariates of one series") {
  const std::string dir = test::temp_dir("lua-covariates");
  const std::string path = dir + "/cov.lua";
  std::ofstream(path) << R"(
local m = orrery.model{arch = {"toto2", d_model = 16, num_layers = 2, num_heads = 1, variate_roles = true}}
local y, price, calendar = {}, {}, {}
for t = 1, 40 do y[t] = math.sin(t / 3) + 5; price[t] = t % 7 end
for t = 1, 40 + 6 do calendar[t] = (t % 12 == 0) and 1 or 0 end
local f = m:forecast{values = y, past_covariates = {price}, future_covariates = {calendar}, horizon = 6}
assert(#f.median == 6 and #f.quantiles == 9, "one forecast of the target")
for _, v in ipairs(f.median) do assert(v == v, "finite") end
local ok, err = pcall(m.forecast, m, {values = y, future_covariates = {price}, horizon = 6})
assert(not ok and err:find("future_covariates%[1%] has 40 values; a known%-future covariate covers the series' history and the horizon, 40 %+ 6"), err)
ok, err = pcall(m.forecast, m, {values = y, past_covariates = {calendar}, horizon = 6})
assert(not ok and err:find("past_covariates%[1%] has 46 values, the series 40"), err)
ok, err = pcall(m.forecast, m, {series = {y, y}, past_covariates = {price}, horizon = 6})
assert(not ok and err:find("go with values = "), err)
local plain = orrery.model{arch = {"toto2", d_model = 16, num_layers = 2, num_heads = 1}}
ok, err = pcall(plain.forecast, plain, {values = y, past_covariates = {price}, horizon = 6})
assert(not ok and err:find("does not read variate roles"), err)
print("covariates ok")
)";
  check_script(path, "covariates ok");
}

TEST_CASE("a model trains on a CSV's covariate columns; one that does not read roles refuses them") {
  const std::string dir = test::temp_dir("csv-covariates-train");
  {
    std::ofstream csv(dir + "/sales.csv");
    csv << "time,sales,price,promo\n";
    for (int t = 0; t < 400; ++t) {  // the last tenth, the validation split, longer than a patch
      const int price = 5 + (t / 8) % 3, promo = t % 12 == 0;
      csv << t << "," << 50 - 4 * price + 10 * promo << "," << price << "," << promo << "\n";
    }
  }
  const std::string path = dir + "/train.lua";
  std::ofstream(path) << R"(
local data = {"csv", files = ")" << dir << R"(/sales.csv", timestamp_format = "unix", past_covariates = "price",
              future_covariates = "promo"}
local m = orrery.model{arch = {"toto2", d_model = 16, num_layers = 2, num_heads = 1, variate_roles = true}}
local run = orrery.train{model = m, data = data, steps = 3, batch_size = 4, context_length = 64, quiet = true,
                         runs_dir = ")" << dir << R"(/runs", val_batches = 0}
assert(run.final_loss == run.final_loss, "a finite loss")
local plain = orrery.model{arch = {"toto2", d_model = 16, num_layers = 2, num_heads = 1}}
local ok, err = pcall(orrery.train, {model = plain, data = data, steps = 1, batch_size = 4, context_length = 64,
                                     quiet = true, runs_dir = ")" << dir << R"(/runs", val_batches = 0})
assert(not ok and err:find("does not read variate roles"), err)
print("trained on covariates")
)";
  check_script(path, "trained on covariates");
  // Its forecast snapshots carry the covariate rows for the dashboard: the past-only price with its
  // history alone, the known-future promotion with its horizon values too.
  std::string snapshots;
  for (const auto& e : fs::directory_iterator(dir + "/runs"))
    if (fs::exists(e.path() / "forecasts.jsonl")) snapshots = test::read_text((e.path() / "forecasts.jsonl").string());
  REQUIRE(!snapshots.empty());
  const Json first = Json::parse(snapshots.substr(0, snapshots.find('\n')));
  const Json& series = first["series"][0];
  REQUIRE(series["covariates"].size() == 2);
  CHECK(series["covariates"][0]["role"] == "past-only");
  CHECK(!series["covariates"][0].contains("future"));
  CHECK(series["covariates"][0]["history"].size() == series["history"].size());
  CHECK(series["covariates"][1]["role"] == "known-future");
  CHECK(series["covariates"][1]["future"].size() == first["horizon"].get<size_t>());
  // promo is 1 every 12 steps: its horizon values are the data's.
  double ones = 0;
  for (const auto& v : series["covariates"][1]["future"]) ones += v.get<double>();
  CHECK(ones >= 1);
}

TEST_CASE("orrery eval scores a model with and without its covariates on the same windows") {
  const std::string dir = test::temp_dir("csv-covariates-eval");
  {
    std::ofstream csv(dir + "/sales.csv"), gap(dir + "/gap.csv");
    csv << "time,sales,price,promo\n";
    gap << "time,sales,promo\n";
    for (int t = 0; t < 240; ++t) {  // hourly: one test window of 48 steps
      const int price = 5 + (t / 8) % 3, promo = t % 7 == 0;
      csv << 3600 * t << "," << 40 + t % 24 - 3 * price + 8 * promo << "," << price << "," << promo << "\n";
      gap << 3600 * t << "," << 40 + t % 24 << ",";
      if (t != 230) gap << promo;  // a gap inside the test window's horizon
      gap << "\n";
    }
  }
  const std::string path = dir + "/eval.lua";
  std::ofstream(path) << R"(
local data = {"csv", files = ")" << dir << R"(/sales.csv", timestamp_format = "unix", past_covariates = "price",
              future_covariates = "promo"}
local m = orrery.model{arch = {"toto2", d_model = 16, num_layers = 2, num_heads = 1, variate_roles = true}}
local r = orrery.eval{models = {m = m}, data = data, baselines = {"seasonal_naive"}, quiet = true}
local score = {}
for _, s in ipairs(r.summary) do score[s.model] = s.score end
assert(score["m"] and score["m/no-covariates"] and score["seasonal_naive"], "three forecasters")
assert(score["m"] == score["m"] and score["m/no-covariates"] == score["m/no-covariates"], "finite scores")
assert(score["m"] ~= score["m/no-covariates"], "the covariates change the forecast")
assert(#r.configurations == 1 and r.configurations[1].items == 1, "one target: sales")
local plain = orrery.model{arch = {"toto2", d_model = 16, num_layers = 2, num_heads = 1}}
local p = orrery.eval{models = {plain = plain}, data = data, baselines = {}, quiet = true}
assert(#p.summary == 1 and p.summary[1].model == "plain", "a model that cannot read them: scored without")
local ok, err = pcall(orrery.eval, {models = {m = m}, data = {"csv", files = ")" << dir << R"(/gap.csv",
                                    timestamp_format = "unix", future_covariates = "promo"}, quiet = true})
assert(not ok and err:find("known%-future covariate 1 has no value at step 231, inside test window 1"), err)
print("with and without")
)";
  check_script(path, "with and without");
}

TEST_CASE("a checkpoint without role embeddings loads with variate_roles and forecasts as before") {
  const std::string dir = test::temp_dir("load-roles");
  const std::string path = dir + "/load.lua";
  std::ofstream(path) << R"(
local dir = ")" << dir << R"("
local m = orrery.model{arch = {"toto2", d_model = 16, num_layers = 2, num_heads = 1}}
m:save(dir .. "/plain.safetensors")
local y = {}
for t = 1, 50 do y[t] = math.sin(t / 4) * 3 + 10 end
local before = m:forecast{values = y, horizon = 8}.median
local r = orrery.load(dir .. "/plain.safetensors", "cpu", {variate_roles = true})
local after = r:forecast{values = y, horizon = 8}.median
for h = 1, 8 do assert(before[h] == after[h], "the same forecast at step " .. h) end
local x = {}
for t = 1, 50 do x[t] = t % 5 end
assert(#r:forecast{values = y, past_covariates = {x}, horizon = 8}.median == 8, "and it takes covariates")
local ok, err = pcall(orrery.load, dir .. "/plain.safetensors", "cpu", {num_layers = 3})
assert(not ok and err:find("an option added at load may add a parameter only if it starts at zero"), err)
ok, err = pcall(orrery.load, dir .. "/plain.safetensors", "cpu", "variate_roles")
assert(not ok and err:find("arch_options must be a table"), err)
print("loaded with roles")
)";
  check_script(path, "loaded with roles");
}

TEST_CASE("finetune.lua with covariates: the tuned model scored with and without them") {
  const std::string dir = test::temp_dir("finetune-covariates");
  {
    std::ofstream csv(dir + "/sales.csv");
    csv << "time,sales,price\n";
    for (int t = 0; t < 400; ++t) {  // hourly
      const int price = 5 + (t / 8) % 3;
      csv << 3600 * t << "," << 40 + t % 24 - 3 * price + (7 * t) % 5 << "," << price << "\n";
    }
  }
  std::ofstream(dir + "/make.lua") << "orrery.model{arch = {\"toto2\", d_model = 16, num_layers = 2, num_heads = 1}}"
                                      ":save(\"" << dir << "/model.safetensors\")\n";
  REQUIRE(test::run_command(test::orrery_cmd("run " + dir + "/make.lua")).status == 0);
  const auto r = test::run_command("cd '" + dir + "' && " + test::orrery_cmd(
      "run " + std::string(ORRERY_SOURCE_DIR) + "/scripts/finetune.lua model=" + dir + "/model.safetensors data=" +
      dir + "/sales.csv timestamp_format=unix past_covariates=price steps=2 batch=2 context=64"));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("fine-tuning moved MASE"));
  CHECK_THAT(r.output, Catch::Contains("the tuned model without its covariates: MASE"));
}
