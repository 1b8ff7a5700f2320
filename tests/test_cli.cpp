// `orrery forecast` as a user types it: what a run folder, a CSV and the flags can get wrong;
// `orrery bench train`'s report and its reference comparison.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "orrery/host/covariate_regression.h"
#include "orrery/host/inference_defaults.h"
#include "support.h"

namespace {

using test::orrery_cmd;

// A folder with Orrery weights and a CSV of two series with a time column.
struct Fixture {
  std::string dir = test::temp_dir("cli");
  Fixture() {
    test::tiny_model(3)->save_weights(dir + "/model.safetensors");
    std::ofstream csv(dir + "/in.csv");
    csv << "time,a,b\n";
    for (int t = 0; t < 70; ++t) csv << 2000 + t / 12.0 << "," << 100 + t << "," << 3.5 * t << "\n";
  }
  test::CommandResult forecast(const std::string& args) const {
    return test::run_command(orrery_cmd("forecast --model " + dir + " " + args));
  }
};

// orrery forecast's CSV of a series with a time column: [step][level], the quantiles.
std::vector<std::vector<double>> quantile_rows(const std::string& csv) {
  std::vector<std::vector<double>> rows;
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    std::stringstream cells(line);
    std::string cell;
    std::getline(cells, cell, ','), std::getline(cells, cell, ',');  // step, time
    rows.emplace_back();
    while (std::getline(cells, cell, ',')) rows.back().push_back(std::stod(cell));
  }
  return rows;
}

}  // namespace

TEST_CASE("orrery forecast: flags with bad values get messages that name the flag") {
  Fixture f;
  auto zero = f.forecast("--input " + f.dir + "/in.csv --horizon 0");
  CHECK(zero.status == 1);
  CHECK(zero.output.find("forecast: --horizon must be at least 1 step, got 0") != std::string::npos);
  auto none = f.forecast("--input " + f.dir + "/in.csv");
  CHECK(none.output.find("--horizon are required") != std::string::npos);
  auto word = f.forecast("--input " + f.dir + "/in.csv --horizon soon");
  CHECK(word.output.find("forecast: --horizon takes a whole number, got 'soon'") != std::string::npos);
  auto out_dir = f.forecast("--input " + f.dir + "/in.csv --horizon 4 --out " + f.dir);
  CHECK(out_dir.status == 1);
  CHECK(out_dir.output.find("cannot write " + f.dir + ": it is a folder") != std::string::npos);
  CHECK(out_dir.output.find("Success") == std::string::npos);
  // Standard output that cannot be written (a full disk) is an error, not a lost forecast and exit 0.
  auto full = test::run_command("(" + orrery_cmd("forecast --model " + f.dir + " --input " + f.dir + "/in.csv --horizon 4") +
                                " > /dev/full)");
  CHECK(full.status == 1);
  CHECK(full.output.find("cannot write standard output") != std::string::npos);
  auto csv_dir = f.forecast("--input " + f.dir + " --horizon 4");
  CHECK(csv_dir.output.find(f.dir + " is a folder, not a CSV file") != std::string::npos);
}

TEST_CASE("orrery forecast: input that would give meaningless forecasts is refused", "[slow]") {
  Fixture f;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(f.dir + "/" + name, std::ios::binary) << text;
    return f.forecast("--input " + f.dir + "/" + name + " --horizon 3");
  };
  auto empty_column = write("empty.csv", "time,a,b\n1,5,\n2,6,\n3,7,\n");
  CHECK(empty_column.status == 1);
  CHECK(empty_column.output.find("empty.csv: column \"b\" has no observed value: there is nothing to forecast from") != std::string::npos);
  auto trailing = write("trailing.csv", "time,a,\n1,5,\n2,6,\n");
  CHECK(trailing.output.find("column 3 of the header has no name (a trailing comma?)") != std::string::npos);
  auto dup = write("dup.csv", "time,a,a\n1,5,6\n2,6,7\n");
  CHECK(dup.output.find("columns 2 and 3 are both named \"a\"") != std::string::npos);
  auto irregular = write("irregular.csv", "time,a\n1,5\n2,6\n3,7\n10,8\n11,9\n");
  CHECK(irregular.status == 1);
  CHECK(irregular.output.find("the time column is irregular: data rows 3 and 4 are 7 apart, but most rows are 1 apart") != std::string::npos);
  auto no_time = write("gap.csv", "time,a\n1,5\n,6\n3,7\n");
  CHECK(no_time.output.find("the time column has no value in data row 2") != std::string::npos);
  auto no_rows = write("header.csv", "time,a\n");
  CHECK(no_rows.output.find("no data rows below the header") != std::string::npos);

  // A byte-order mark leaves "time" a time column, not a series.
  auto bom = write("bom.csv", "\xEF\xBB\xBFtime,a\n1,5\n2,6\n3,7\n");
  REQUIRE(bom.status == 0);
  CHECK(bom.output.rfind("step,time,a_q0.1", 0) == 0);
  CHECK(bom.output.find("time_q") == std::string::npos);
  // Values beyond float32 are forecast on their own scale.
  auto huge = write("huge.csv", "a\n1e39\n2e39\n1.5e39\n1.7e39\n");
  REQUIRE(huge.status == 0);
  CHECK(huge.output.find("e+39") != std::string::npos);
  CHECK(huge.output.find("inf") == std::string::npos);
}

TEST_CASE("orrery forecast: a model path says what it holds when it holds no model") {
  Fixture f;
  auto csv = " --input " + f.dir + "/in.csv --horizon 3";
  auto missing = test::run_command(orrery_cmd("forecast --model " + f.dir + "/nothing" + csv));
  CHECK(missing.output.find("no model at " + f.dir + "/nothing (no such file or folder)") != std::string::npos);
  auto empty = test::temp_dir("cli-empty");
  auto none = test::run_command(orrery_cmd("forecast --model " + empty + csv));
  CHECK(none.output.find(empty + " holds no model: expected model.safetensors") != std::string::npos);
  std::ofstream(empty + "/config.json") << R"({"hidden_size": 768, "model_type": "bert"})";
  auto other = test::run_command(orrery_cmd("forecast --model " + empty + csv));
  CHECK(other.output.find("config.json is neither an Orrery run's config nor a checkpoint layout any plugin reads "
                          "(readers: Hugging Face Toto 2.0 (architecture plugin 'toto2'))") != std::string::npos);
}

namespace {

// A model that reads variate roles (the last layer across variates), a history of a target and
// two covariates, and a file with the known-future one over 6 horizon steps.
struct CovariateFixture {
  static constexpr int kSteps = 70, kHorizon = 6;
  std::string dir = test::temp_dir("cli-covariates");
  std::unique_ptr<orrery::Model> model;
  std::vector<double> sales, price, promo;  // promo covers the history and the horizon
  CovariateFixture() {
    orrery::ModelSpec spec = test::tiny_spec(5);
    spec.arch.options["variate_roles"] = true;
    model = std::make_unique<orrery::Model>(spec, orrery::Registry::global());
    model->save_weights(dir + "/model.safetensors");
    std::ofstream in(dir + "/in.csv"), future(dir + "/future.csv");
    in.precision(17);  // the values exactly, as the forecast in C++ takes them
    in << "time,sales,price,promo\n";
    future << "time,promo\n";
    for (int t = 0; t < kSteps + kHorizon; ++t) {
      promo.push_back(t % 12 == 0 ? 1 : 0);
      if (t >= kSteps) {
        future << t << "," << promo.back() << "\n";
        continue;
      }
      price.push_back(5 + (t / 8) % 3);
      sales.push_back(50 - 4 * price.back() + 10 * promo.back() + 0.5 * std::sin(t));
      in << t << "," << sales.back() << "," << price.back() << "," << promo.back() << "\n";
    }
  }
  test::CommandResult forecast(const std::string& args) const {
    return test::run_command(orrery_cmd("forecast --model " + dir + " --input " + dir + "/in.csv --horizon " +
                                        std::to_string(kHorizon) + " " + args));
  }
};

// The column `name` of a CSV text.
std::vector<double> csv_column(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string line, cell;
  std::getline(in, line);
  std::istringstream header(line);
  int index = -1;
  for (int i = 0; std::getline(header, cell, ','); ++i)
    if (cell == name) index = i;
  std::vector<double> out;
  while (index >= 0 && std::getline(in, line)) {
    std::istringstream row(line);
    for (int i = 0; i <= index; ++i) std::getline(row, cell, ',');
    out.push_back(std::stod(cell));
  }
  return out;
}

}  // namespace

TEST_CASE("orrery forecast with covariates: the rows of one series, as Model::forecast takes them") {
  CovariateFixture f;
  // One context and no transform: Model::forecast's own defaults, which the C++ below calls.
  const std::string args = "--past-covariates price --future-covariates promo --future " + f.dir +
                           "/future.csv --context 4096 --no-box-cox";
  auto r = f.forecast("--target sales " + args);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.rfind("step,time,sales_q0.1,", 0) == 0);
  CHECK(r.output.find("price_q") == std::string::npos);
  CHECK(r.output.find("promo_q") == std::string::npos);
  const std::vector<double> median = csv_column(r.output, "sales_q0.5");
  REQUIRE(median.size() == CovariateFixture::kHorizon);
  CHECK(csv_column(r.output, "time").front() == CovariateFixture::kSteps);

  // The same forecast in C++: target, past-only and known-future rows of one series.
  const int64_t T = CovariateFixture::kSteps, H = CovariateFixture::kHorizon;
  at::Tensor values = at::stack({at::tensor(f.sales, at::kDouble), at::tensor(f.price, at::kDouble),
                                 at::tensor(std::vector<double>(f.promo.begin(), f.promo.begin() + T), at::kDouble)})
                          .unsqueeze(0);
  orrery::ForecastOptions o;
  o.roles = at::tensor(std::vector<int64_t>{0, 1, 2}, at::kLong).unsqueeze(0);
  o.future = at::full({1, 3, H}, std::nan(""), at::kDouble);
  o.future[0][2].copy_(at::tensor(std::vector<double>(f.promo.begin() + T, f.promo.end()), at::kDouble));
  const orrery::Forecast direct = f.model->forecast(values, at::ones(values.sizes(), at::kBool),
                                                    at::zeros({1, 3}, at::kLong), H, o);
  for (int64_t h = 0; h < H; ++h) {
    const double expected = direct.median[0][0][h].item<double>();
    CHECK(median[h] == Approx(expected).epsilon(1e-8));
  }
  // Without --target, the targets are the columns not named as covariates: the same forecast.
  auto untargeted = f.forecast(args);
  CHECK(untargeted.output == r.output);
  // The known-future covariate's horizon values are read: other values, another forecast.
  std::ofstream(f.dir + "/other.csv") << "promo\n1\n1\n1\n1\n1\n1\n";
  auto other = f.forecast("--past-covariates price --future-covariates promo --future " + f.dir +
                          "/other.csv --context 4096 --no-box-cox");
  REQUIRE(other.status == 0);
  CHECK(csv_column(other.output, "sales_q0.5") != median);
}

TEST_CASE("orrery forecast --static-covariates: columns of one value, the model's static covariates", "[slow]") {
  const std::string dir = test::temp_dir("cli-statics");
  orrery::ModelSpec spec = test::tiny_spec(3);
  spec.arch.options["static_covariates"] = "size, urban";
  orrery::Model model(spec, orrery::Registry::global());
  {
    at::NoGradGuard no_grad;
    for (auto& p : model.params())  // away from its zero init, so that the values matter
      if (p.info.name == "static_embedding") p.tensor.copy_(at::randn(p.tensor.sizes()) * 0.5);
  }
  model.save_weights(dir + "/model.safetensors");
  std::vector<double> a, b;
  {
    std::ofstream csv(dir + "/in.csv"), big(dir + "/big.csv");  // big: the same with a size of 4000
    csv << "time,a,urban,b,size\n", big << "time,a,urban,b,size\n";
    for (int t = 0; t < 70; ++t) {
      a.push_back(100 + t + 5 * std::sin(t)), b.push_back(3.5 * t);
      csv << t << "," << a.back() << "," << (t == 3 ? "" : "1") << "," << b.back() << ",40\n";
      big << t << "," << a.back() << "," << (t == 3 ? "" : "1") << "," << b.back() << ",4000\n";
    }
  }
  auto forecast = [&](const std::string& args) {
    // One context and no transform: Model::forecast's own defaults, which the C++ below calls.
    return test::run_command(orrery_cmd("forecast --model " + dir + " --input " + dir +
                                        "/in.csv --horizon 8 --context 4096 --no-box-cox " + args));
  };
  auto r = forecast("--static-covariates urban,size");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.rfind("step,time,a_q0.1,", 0) == 0);
  CHECK(r.output.find("size_q") == std::string::npos);
  CHECK(r.output.find("urban_q") == std::string::npos);
  // The same forecast in C++: each target its own series, with the file's statics in the model's order.
  at::Tensor values = at::stack({at::tensor(a, at::kDouble), at::tensor(b, at::kDouble)}).unsqueeze(1);
  orrery::ForecastOptions o;
  o.statics = at::tensor({40.f, 1.f}).view({1, 1, 2}).expand({2, 1, 2}).contiguous();
  const orrery::Forecast direct = model.forecast(values, at::ones(values.sizes(), at::kBool), at::zeros({2, 1}, at::kLong), 8, o);
  const std::vector<double> median = csv_column(r.output, "b_q0.5");
  REQUIRE(median.size() == 8);
  for (int64_t h = 0; h < 8; ++h) CHECK(median[h] == Approx(direct.median[1][0][h].item<double>()).epsilon(1e-8));
  // Another static value, another forecast.
  const auto big = forecast("--input " + dir + "/big.csv --static-covariates size,urban");
  REQUIRE(big.status == 0);
  CHECK(csv_column(big.output, "b_q0.5") != median);

  auto fails = [&](const std::string& args, const std::string& message) {
    auto e = forecast(args);
    INFO(e.output);
    CHECK(e.status == 1);
    CHECK_THAT(e.output, Catch::Contains(message));
  };
  fails("", "forecast: the model reads static covariates (size, urban); name their columns with --static-covariates");
  fails("--static-covariates size", "forecast: --static-covariates: no value for \"urban\" (the model reads size, urban)");
  std::ofstream(dir + "/shop.csv") << "a,size,urban,shop\n1,40,1,7\n2,40,1,7\n3,40,1,7\n";
  fails("--input " + dir + "/shop.csv --static-covariates size,urban,shop",
        "forecast: --static-covariates: the model reads no static covariate \"shop\"; it reads size, urban");
  fails("--static-covariates size,area", "no column \"area\"");
  fails("--static-covariates size,size", "column \"size\" is named twice");
  std::ofstream(dir + "/varies.csv") << "a,size,urban\n1,40,1\n2,41,1\n";
  fails("--input " + dir + "/varies.csv --static-covariates size,urban",
        "varies.csv: column \"size\" is a static covariate (one value per series), but it is 40 on line 2 and 41 on line 3");
  std::ofstream(dir + "/huge.csv") << "a,size,urban\n1,1e39,1\n2,1e39,1\n";
  fails("--input " + dir + "/huge.csv --static-covariates size,urban",
        "forecast: --static-covariates: \"size\" is beyond float32's range (+-3.4e38)");
  std::ofstream(dir + "/empty.csv") << "a,size,urban\n1,,1\n2,,1\n";
  fails("--input " + dir + "/empty.csv --static-covariates size,urban",
        "empty.csv: static covariate column \"size\" has no value on any line");
}

TEST_CASE("orrery forecast --static-covariates --categorical: a column of one category, the model's 0/1 statics", "[slow]") {
  const std::string dir = test::temp_dir("cli-static-categories");
  orrery::ModelSpec spec = test::tiny_spec(3);
  spec.arch.options["static_covariates"] = "size, format=mall, format=street";  // as a csv source names them
  orrery::Model model(spec, orrery::Registry::global());
  {
    at::NoGradGuard no_grad;
    for (auto& p : model.params())
      if (p.info.name == "static_embedding") p.tensor.copy_(at::randn(p.tensor.sizes()) * 0.5);
  }
  model.save_weights(dir + "/model.safetensors");
  std::vector<double> a;
  {
    std::ofstream csv(dir + "/in.csv"), street(dir + "/street.csv"), kiosk(dir + "/kiosk.csv"), mixed(dir + "/mixed.csv"),
        sized(dir + "/sized.csv");
    for (auto* f : {&csv, &street, &kiosk, &mixed}) *f << "time,a,format,size\n";
    sized << "time,a,size\n";
    for (int t = 0; t < 70; ++t) {
      a.push_back(100 + t + 5 * std::sin(t));
      char value[32];
      std::snprintf(value, sizeof value, "%.17g", a.back());  // read back exactly
      const std::string row = std::to_string(t) + "," + value + ",";
      csv << row << (t == 5 ? "" : "mall") << ",40\n";  // an empty cell says nothing
      street << row << "street,40\n", kiosk << row << "kiosk,40\n";
      mixed << row << (t < 9 ? "mall" : "street") << ",40\n";
      sized << row << "40\n";
    }
  }
  auto forecast = [&](const std::string& input, const std::string& args) {
    return test::run_command(orrery_cmd("forecast --model " + dir + " --input " + dir + "/" + input +
                                        " --target a --horizon 8 --context 4096 --no-box-cox " + args));
  };
  const auto mall = forecast("in.csv", "--static-covariates format,size --categorical format");
  INFO(mall.output);
  REQUIRE(mall.status == 0);
  at::Tensor values = at::tensor(a, at::kDouble).view({1, 1, -1});
  orrery::ForecastOptions o;
  o.statics = at::tensor({40.f, 1.f, 0.f}).view({1, 1, 3});
  const orrery::Forecast direct = model.forecast(values, at::ones(values.sizes(), at::kBool), at::zeros({1, 1}, at::kLong), 8, o);
  const std::vector<double> median = csv_column(mall.output, "a_q0.5");
  REQUIRE(median.size() == 8);
  for (int64_t h = 0; h < 8; ++h) CHECK(median[h] == Approx(direct.median[0][0][h].item<double>()).epsilon(1e-8));
  const auto street = forecast("street.csv", "--static-covariates format,size --categorical format");
  REQUIRE(street.status == 0);
  CHECK(csv_column(street.output, "a_q0.5") != median);

  auto fails = [&](const std::string& input, const std::string& args, const std::string& message) {
    auto e = forecast(input, args);
    INFO(e.output);
    CHECK(e.status == 1);
    CHECK_THAT(e.output, Catch::Contains(message));
  };
  fails("kiosk.csv", "--static-covariates format,size --categorical format",
        "forecast: --static-covariates: \"format\" = \"kiosk\" is not a category the model was trained with (mall, street)");
  fails("mixed.csv", "--static-covariates format,size --categorical format",
        "mixed.csv: column \"format\" is a static covariate (one category per series), but it is \"mall\" on line 2 "
        "and \"street\" on line 11");
  fails("sized.csv", "--static-covariates size", "no value for \"format\" (a category)");
  fails("in.csv", "--static-covariates format,size", "column \"format\": non-numeric value \"mall\"");
  fails("in.csv", "--static-covariates size --categorical format",
        "--categorical names \"format\", which --past-covariates, --future-covariates and --static-covariates do not");
}

TEST_CASE("orrery forecast --categorical: a column of categories is its one-hot rows", "[slow]") {
  CovariateFixture f;
  const int T = CovariateFixture::kSteps, H = CovariateFixture::kHorizon;
  // season: "high" every 12th step, else "low", one cell missing; high and low: its rows as numbers.
  std::ofstream cat(f.dir + "/cat.csv"), hot(f.dir + "/hot.csv"), cat_ahead(f.dir + "/cat_ahead.csv"),
      hot_ahead(f.dir + "/hot_ahead.csv");
  cat.precision(17), hot.precision(17);
  cat << "time,sales,price,season\n", hot << "time,sales,price,high,low\n";
  cat_ahead << "time,season\n", hot_ahead << "time,high,low\n";
  for (int t = 0; t < T + H; ++t) {
    const bool high = f.promo[static_cast<size_t>(t)] == 1, missing = t == 10;
    const std::string season = missing ? "" : high ? "high" : "low";
    const std::string rows = missing ? "," : high ? "1,0" : "0,1";
    if (t >= T) {
      cat_ahead << t << "," << season << "\n", hot_ahead << t << "," << rows << "\n";
      continue;
    }
    cat << t << "," << f.sales[static_cast<size_t>(t)] << "," << f.price[static_cast<size_t>(t)] << "," << season << "\n";
    hot << t << "," << f.sales[static_cast<size_t>(t)] << "," << f.price[static_cast<size_t>(t)] << "," << rows << "\n";
  }
  cat.close(), hot.close(), cat_ahead.close(), hot_ahead.close();
  auto forecast = [&](const std::string& input, const std::string& args) {
    auto r = test::run_command(orrery_cmd("forecast --model " + f.dir + " --input " + f.dir + "/" + input +
                                          " --horizon " + std::to_string(H) + " --target sales " + args));
    INFO(args << "\n" << r.output);
    CHECK(r.status == 0);
    return r.output;
  };
  // Known-future, past-only and through the regression: the categories in byte order ("high",
  // "low") are the rows, bit for bit.
  const std::string known = forecast("cat.csv", "--future-covariates season --categorical season --future " + f.dir +
                                                    "/cat_ahead.csv");
  CHECK(known == forecast("hot.csv", "--future-covariates high,low --future " + f.dir + "/hot_ahead.csv"));
  CHECK(known.rfind("step,time,sales_q0.1,", 0) == 0);
  CHECK(forecast("cat.csv", "--past-covariates price,season --categorical season") ==
        forecast("hot.csv", "--past-covariates price,high,low"));
  CHECK(forecast("cat.csv", "--future-covariates season --categorical season --regression --future " + f.dir +
                                "/cat_ahead.csv") ==
        forecast("hot.csv", "--future-covariates high,low --regression --future " + f.dir + "/hot_ahead.csv"));

  auto fails = [&](const std::string& args, const std::string& message) {
    auto r = test::run_command(orrery_cmd("forecast --model " + f.dir + " --input " + f.dir + "/cat.csv --horizon " +
                                          std::to_string(H) + " --target sales " + args));
    INFO(args << "\n" << r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains(message));
  };
  fails("--past-covariates season", "cat.csv:2: column \"season\": non-numeric value \"high\"");
  fails("--past-covariates season --categorical sales",
        "--categorical names \"sales\", which --past-covariates, --future-covariates and --static-covariates do not");
  std::ofstream(f.dir + "/gap_ahead.csv") << "time,season\n70,low\n71,\n72,low\n73,low\n74,low\n75,low\n";
  fails("--future-covariates season --categorical season --future " + f.dir + "/gap_ahead.csv",
        "gap_ahead.csv: column \"season\" has no value in data row 2; a known-future covariate must be known");
  fails("--past-covariates season --categorical , ", "forecast: --categorical takes column names, separated by commas");
  // A --future file whose first column is the categorical one (no time column): the same forecast.
  {
    std::ofstream only(f.dir + "/season_ahead.csv");
    only << "season\n";
    for (int t = T; t < T + H; ++t) only << (f.promo[static_cast<size_t>(t)] == 1 ? "high" : "low") << "\n";
  }
  CHECK(forecast("cat.csv", "--future-covariates season --categorical season --future " + f.dir + "/season_ahead.csv") ==
        known);
  // A column of ids is not a covariate.
  {
    std::ofstream ids(f.dir + "/ids.csv");
    ids << "sales,store\n";
    for (int t = 0; t < T; ++t) ids << f.sales[static_cast<size_t>(t)] << ",store" << t << "\n";
  }
  auto many = test::run_command(orrery_cmd("forecast --model " + f.dir + " --input " + f.dir + "/ids.csv --horizon " +
                                           std::to_string(H) + " --target sales --past-covariates store --categorical store"));
  CHECK(many.status == 1);
  CHECK_THAT(many.output, Catch::Contains("ids.csv: column \"store\": more than 64 categories, the most a "
                                          "categorical covariate may have"));
}

TEST_CASE("orrery forecast --regression: the model forecasts the residual, the fit is added back") {
  CovariateFixture f;
  auto r = f.forecast("--target sales --future-covariates promo --future " + f.dir +
                      "/future.csv --regression --context 4096 --no-box-cox");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.rfind("step,time,sales_q0.1,", 0) == 0);
  const std::vector<double> median = csv_column(r.output, "sales_q0.5");
  REQUIRE(median.size() == CovariateFixture::kHorizon);

  // The same in C++: fit sales on promo, forecast the residual as a plain series, add the fit.
  const int64_t T = CovariateFixture::kSteps, H = CovariateFixture::kHorizon;
  const orrery::CovariateRegression fit = orrery::CovariateRegression::fit(f.sales, {f.promo});
  REQUIRE(fit.fitted);
  CHECK(fit.coef[0] > 5);  // the promotion's +10 (11.7: price, left out, moves with it)
  const at::Tensor residual = at::tensor(fit.residual(f.sales, {f.promo}), at::kDouble).view({1, 1, T});
  const orrery::Forecast direct = f.model->forecast(residual, at::ones(residual.sizes(), at::kBool),
                                                    at::zeros({1, 1}, at::kLong), H, orrery::ForecastOptions{});
  for (int64_t h = 0; h < H; ++h) {
    const double expected = direct.median[0][0][h].item<double>() + fit.at({f.promo}, static_cast<size_t>(T + h));
    CHECK(median[h] == Approx(expected).epsilon(1e-8));
  }
  // What it needs, and what it cannot use.
  auto none = f.forecast("--target sales --regression");
  CHECK(none.status != 0);
  CHECK_THAT(none.output, Catch::Contains("--regression fits the targets on --future-covariates"));
  auto past = f.forecast("--target sales --past-covariates price --future-covariates promo --future " + f.dir +
                         "/future.csv --regression");
  CHECK(past.status != 0);
  CHECK_THAT(past.output, Catch::Contains("--regression reads known-future covariates only"));

  // --regression-lags K: the fit over the covariates' lags 0..K, added back the same way.
  auto lagged = f.forecast("--target sales --future-covariates promo --future " + f.dir + "/future.csv --regression "
                           "--regression-lags 3 --context 4096 --no-box-cox");
  INFO(lagged.output);
  REQUIRE(lagged.status == 0);
  const std::vector<double> lagged_median = csv_column(lagged.output, "sales_q0.5");
  const orrery::CovariateRegression over_lags = orrery::CovariateRegression::fit(f.sales, {f.promo}, 3);
  REQUIRE(over_lags.fitted);
  CHECK(over_lags.coef[0] > 5);  // the promotion acts on its own day
  const at::Tensor lagged_residual = at::tensor(over_lags.residual(f.sales, {f.promo}), at::kDouble).view({1, 1, T});
  // Where a lag reaches before the history the residual is unknown: unobserved steps.
  const orrery::Forecast direct_lagged = f.model->forecast(at::nan_to_num(lagged_residual, 0.0), at::isfinite(lagged_residual),
                                                           at::zeros({1, 1}, at::kLong), H, orrery::ForecastOptions{});
  for (int64_t h = 0; h < H; ++h) {
    const double expected = direct_lagged.median[0][0][h].item<double>() + over_lags.at({f.promo}, static_cast<size_t>(T + h));
    CHECK(lagged_median[h] == Approx(expected).epsilon(1e-8));
  }
  auto unasked = f.forecast("--target sales --future-covariates promo --future " + f.dir + "/future.csv --regression-lags 3");
  CHECK(unasked.status != 0);
  CHECK_THAT(unasked.output, Catch::Contains("--regression-lags needs --regression"));
  auto negative = f.forecast("--target sales --future-covariates promo --future " + f.dir + "/future.csv --regression "
                             "--regression-lags -1");
  CHECK(negative.status != 0);
  CHECK_THAT(negative.output, Catch::Contains("--regression-lags must be 0 or the largest lag in steps, got -1"));
}

TEST_CASE("orrery forecast --box-cox --no-box-cox-average: each series' Box-Cox transform forecast, as Model::forecast gives it") {
  CovariateFixture f;
  auto r = f.forecast("--target sales --box-cox --no-box-cox-average --season 12 --context 4096");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const std::vector<double> median = csv_column(r.output, "sales_q0.5");
  REQUIRE(median.size() == CovariateFixture::kHorizon);
  const int64_t T = CovariateFixture::kSteps, H = CovariateFixture::kHorizon;
  const at::Tensor x = at::tensor(f.sales, at::kDouble).view({1, 1, T});
  orrery::ForecastOptions o;
  o.box_cox = std::numeric_limits<double>::quiet_NaN(), o.season = 12;
  const orrery::Forecast direct = f.model->forecast(x, at::ones(x.sizes(), at::kBool), at::zeros({1, 1}, at::kLong), H, o);
  const orrery::Forecast plain = f.model->forecast(x, at::ones(x.sizes(), at::kBool), at::zeros({1, 1}, at::kLong), H, {});
  bool differs = false;
  for (int64_t h = 0; h < H; ++h) {
    CHECK(median[h] == Approx(direct.median[0][0][h].item<double>()).epsilon(1e-8));
    differs = differs || std::abs(median[h] - plain.median[0][0][h].item<double>()) > 1e-6;
  }
  CHECK(differs);  // the exponent Guerrero's method picks here is not 1
  auto unasked = f.forecast("--target sales --no-box-cox --season 12");
  CHECK(unasked.status != 0);
  CHECK_THAT(unasked.output, Catch::Contains("--season sets the blocks of Box-Cox's exponent and the season of --combine's baselines"));
}

TEST_CASE("orrery forecast with covariates: every mismatch is an error naming the file, column or flag", "[slow]") {
  CovariateFixture f;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(f.dir + "/" + name) << text;
    return f.dir + "/" + name;
  };
  auto fails = [&](const std::string& args, const std::string& message) {
    auto r = f.forecast(args);
    INFO(args << "\n" << r.output);
    CHECK(r.status == 1);
    CHECK(r.output.find(message) != std::string::npos);
  };
  const std::string future = " --future " + f.dir + "/future.csv";
  fails("--future-covariates promo", "forecast: --future-covariates needs --future FILE with their values over the horizon");
  fails("--past-covariates price" + future, "holds known-future covariates, but --future-covariates names none");
  fails("--past-covariates cost", "in.csv: no column \"cost\" (named by --past-covariates); its series columns are "
                                  "sales, price, promo");
  fails("--past-covariates time", "in.csv: the time column cannot be a series (--past-covariates)");
  fails("--target sales --past-covariates sales", "forecast: column \"sales\" is named twice");
  fails("--past-covariates sales,price,promo", "every series column is a covariate; name the targets with --target");
  fails("--target sales --past-covariates ,", "forecast: --past-covariates takes column names, separated by commas");
  fails("--future-covariates price" + future, "future.csv: no column \"price\" (named by --future-covariates)");
  fails("--future-covariates promo --future " + write("short.csv", "promo\n1\n0\n"),
        "short.csv: 2 data rows, the horizon is 6: known-future covariates need a value at every horizon step");
  fails("--future-covariates promo --future " + write("gap.csv", "time,promo\n70,1\n71,0\n72,\n73,0\n74,0\n75,0\n"),
        "gap.csv: column \"promo\" has no value in data row 3; a known-future covariate must be known at every "
        "horizon step");
  fails("--future-covariates promo --future " + write("late.csv", "time,promo\n71,1\n72,0\n73,0\n74,0\n75,0\n76,0\n"),
        "late.csv: data row 1 holds time 71, but horizon step 1 is at 70");
  fails("--future-covariates promo --future " + write("huge.csv", "promo\n1\n0\n1e200\n0\n0\n0\n"),
        "huge.csv: column \"promo\" is beyond +-1e150 in data row 3");
  // Hostile --future files: each is refused with the file (and line) named, nothing written.
  const std::string out = " --out " + f.dir + "/never.csv";
  fails("--future-covariates promo --future " + f.dir + "/absent.csv" + out, "cannot open " + f.dir + "/absent.csv");
  fails("--future-covariates promo --future " + f.dir + out, f.dir + " is a folder, not a CSV file");
  fails("--future-covariates promo --future " + write("empty.csv", "") + out, "empty.csv: empty file, expected a header row");
  fails("--future-covariates promo --future " + write("words.csv", "promo\n1\nabc\n0\n0\n0\n0\n") + out,
        "words.csv:3: column \"promo\": non-numeric value \"abc\"");
  fails("--future-covariates promo --future " + write("inf.csv", "promo\n1\ninf\n0\n0\n0\n0\n") + out,
        "inf.csv:3: column \"promo\": infinite value \"inf\"");
  fails("--future-covariates promo --future " + write("nul.csv", std::string("promo\n1\n\0\n", 10)) + out,
        "nul.csv:3: holds binary data (a NUL byte): not a text CSV file");
  fails("--future-covariates promo --future " + write("ragged.csv", "time,promo\n70,1\n71\n72,0\n73,0\n74,0\n75,0\n") + out,
        "ragged.csv:3: expected 2 fields, found 1");
  fails("--future-covariates promo --future " + write("twice.csv", "promo,promo\n1,1\n0,0\n0,0\n0,0\n0,0\n0,0\n") + out,
        "twice.csv:1: columns 1 and 2 are both named \"promo\"");
  CHECK(!std::filesystem::exists(f.dir + "/never.csv"));
  // A model without role embeddings cannot tell covariates from targets.
  test::tiny_model(3)->save_weights(f.dir + "/plain.safetensors");
  auto plain = test::run_command(orrery_cmd("forecast --model " + f.dir + "/plain.safetensors --input " + f.dir +
                                            "/in.csv --horizon 6 --past-covariates price"));
  CHECK(plain.status == 1);
  CHECK(plain.output.find("does not read variate roles") != std::string::npos);
  // --target alone forecasts those columns, each on its own, as before covariates.
  auto alone = f.forecast("--target price");
  REQUIRE(alone.status == 0);
  CHECK(alone.output.rfind("step,time,price_q0.1,", 0) == 0);
  CHECK(alone.output.find("sales_q") == std::string::npos);
}

namespace {

// The number after `label` in `text` (the first one), or NaN when the label is missing.
double number_after(const std::string& text, const std::string& label) {
  const size_t at = text.find(label);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(text.c_str() + at + label.size(), nullptr);
}

// The Python of the checkout's .venv when it can import torch (cmake/setup.sh installs it).
std::string python_with_torch() {
  const std::string python = std::string(ORRERY_SOURCE_DIR) + "/.venv/bin/python";
  if (!std::filesystem::exists(python)) return "";
  return test::run_command("'" + python + "' -c 'import torch'").status == 0 ? python : "";
}

const std::string kTinyTrain = "bench train --preset toto2-4m --batch 2 --context 128 --repeats 2 --warmup 1";

}  // namespace

TEST_CASE("orrery bench train prints step time, throughput, memory, FLOPs and MFU") {
  auto r = test::run_command(orrery_cmd(kTinyTrain));
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("bench train: toto2-4m (4144448 parameters, umup) on cpu") != std::string::npos);
  // The trainer's step (train_step.h), masks and fault check included.
  CHECK(r.output.find("batch 2 x 1 variates x 128 steps (4 patches); fp32, patch masking, host checks;") !=
        std::string::npos);
  for (const char* label : {"step: median ", "min ", "max ", "throughput: ", "tokens/s (a token: one patch of 32 steps of one variate), ",
                            "memory: peak ", "model FLOPs: ", "achieved: ", "peak: "}) {
    INFO(label);
    const double v = number_after(r.output, label);
    CHECK(std::isfinite(v));
    CHECK(v > 0);
  }
  CHECK(r.output.find("the process's peak resident set") != std::string::npos);
  CHECK(r.output.find("float32 at::mm of 2048 x 2048 by 2048 x 2048 on cpu, best of 5") != std::string::npos);
  // A toto2-4m step at 2 x 128: 6 x 4.14M x 8 tokens less the head's last patch, ~0.19 GFLOP.
  CHECK(r.output.find("model FLOPs: 191 MFLOP per step") != std::string::npos);
  const double mfu = number_after(r.output, "MFU: ");
  CHECK(mfu > 0);
  CHECK(mfu < 1.5);
  CHECK(r.output.find("reference") == std::string::npos);  // none asked for
}

TEST_CASE("orrery bench train refuses bad arguments, naming the option", "[slow]") {
  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{
           {"--bogus 1", "bench train: unknown argument '--bogus' (see orrery bench train --help)"},
           {"--precision fp16", "bench train: --precision: unknown precision 'fp16' (fp32 or bf16)"},
           {"--batch 0", "bench train: --batch must be at least 1, got 0"},
           {"--repeats two", "bench train: --repeats takes a whole number, got 'two'"},
           {"--context 100", "bench train: --context must be a multiple of the patch size 32"},
           {"--optimizer sgd --reference python", "the reference step uses AdamW with its defaults"},
           {"--param upmu", "bench train: --param: unknown parametrisation plugin 'upmu'"},
           {"--baseline-ms 40", "bench train: --baseline-ms is how --nproc tells its ranks"},
           {"--cpm maybe", "bench train: --cpm must be on or off, got 'maybe'"},
           {"--host-checks 1", "bench train: --host-checks must be on or off, got '1'"},
           {"--cpm on --reference python", "--reference times Orrery's without them: drop --cpm on"},
           {"--batch", "bench train: --batch needs a value"}}) {
    auto r = test::run_command(orrery_cmd("bench train " + c.args));
    INFO(c.args << "\n" << r.output);
    CHECK(r.status == 1);
    CHECK(r.output.find(c.message) != std::string::npos);
  }
  auto help = test::run_command(orrery_cmd("bench train --help"));
  CHECK(help.status == 0);
  CHECK(help.output.find("causal time layers counted at the full S^2") != std::string::npos);
}

// [long]: torch.compile in the reference (not instrumented), minutes under the sanitizers.
TEST_CASE("orrery bench train runs the PyTorch reference, eager and compiled, and prints the ratios", "[long][slow]") {
  const std::string python = python_with_torch();
  if (python.empty()) {
    WARN("skipped: no .venv/bin/python with torch");
    return;
  }
  const std::string script = std::string(ORRERY_SOURCE_DIR) + "/tests/reference/bench_train_reference.py";
  auto r = test::run_command(orrery_cmd(kTinyTrain + " --reference \"'" + python + "' '" + script + "'\""));
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("--mode eager") != std::string::npos);
  CHECK(r.output.find("--mode compile") != std::string::npos);
  // Like for like: the reference draws no masks and reads nothing on the host.
  CHECK(r.output.find("(4 patches); fp32; ") != std::string::npos);
  CHECK(r.output.find("warning: the reference reports") == std::string::npos);  // the same parameter count
  for (const char* label : {"reference (eager): median ", "reference (compile): median "}) {
    INFO(label);
    const double ms = number_after(r.output, label);
    CHECK(std::isfinite(ms));
    CHECK(ms > 0);
    const size_t at = r.output.find(label);
    const double ratio = number_after(r.output.substr(at), "reference ms / Orrery ms = ");
    CHECK(ratio > 0);
    CHECK(std::isfinite(ratio));
  }
  // A reference that fails is an error that shows what it printed.
  auto bad = test::run_command(orrery_cmd(kTinyTrain + " --reference \"'" + python + "' '" + script + "' --no-such-flag\""));
  CHECK(bad.status == 1);
  CHECK(bad.output.find("the reference command failed or printed no `median_ms X` line") != std::string::npos);
  CHECK(bad.output.find("unrecognized arguments: --no-such-flag") != std::string::npos);
}

TEST_CASE("orrery bench forecast: bf16 and graphed forecasts, and a bad --graph named") {
  auto r = test::run_command(orrery_cmd("bench forecast --context 256 --horizon 64 --batch 2 --repeats 2 --warmup 1 "
                                        "--precision bf16 --graph on"));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("bf16, graphed") != std::string::npos);
  CHECK(r.output.find("latency: median") != std::string::npos);
  auto bad = test::run_command(orrery_cmd("bench forecast --graph maybe"));
  CHECK(bad.status != 0);
  CHECK(bad.output.find("--graph must be on or off, got 'maybe'") != std::string::npos);
}

TEST_CASE("orrery bench train --graph on replays the recorded step, and a bad --graph is named", "[slow]") {
  auto r = test::run_command(orrery_cmd(kTinyTrain + " --graph on"));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("fp32, graphed") != std::string::npos);
  CHECK(r.output.find("MFU:") != std::string::npos);
  auto bad = test::run_command(orrery_cmd(kTinyTrain + " --graph yes"));
  CHECK(bad.status != 0);
  CHECK(bad.output.find("--graph must be on or off, got 'yes'") != std::string::npos);
}

// One forecast path (core/include/orrery/host/forecast_request.h) and one set of defaults
// (inference_defaults.h): the same request through model:forecast, `orrery forecast` and
// `orrery eval` gives the same numbers. Eval's window, forecast as every front end does by default
// (a context ensemble, Box-Cox averaged with the plain forecast where checked), is forecast again from its history by the other two,
// each given nothing but the season eval takes from the dates.
TEST_CASE("one forecast path: Lua, orrery forecast and orrery eval give the same forecast of a window by default") {
  Fixture f;
  // A monthly series with a season and a trend, ISO dates: eval's season is 12.
  std::ofstream(f.dir + "/monthly.csv") << [] {
    std::ostringstream s;
    s << "time,sales\n";
    for (int t = 0; t < 150; ++t)
      s << 2000 + t / 12 << "-" << (t % 12 < 9 ? "0" : "") << t % 12 + 1 << "-01," << 50 + 0.4 * t + 9 * std::sin(t * 0.5236) + (t % 7) << "\n";
    return s.str();
  }();
  const auto eval = test::run_command(orrery_cmd("eval --model " + f.dir + "/model.safetensors=tiny --data " + f.dir +
                                                 "/monthly.csv --baselines seasonal_naive --out " +
                                                 f.dir + "/eval"));
  INFO(eval.output);
  REQUIRE(eval.status == 0);
  std::ifstream lines(f.dir + "/eval/eval_forecasts.jsonl");
  std::string header, last, line;
  std::getline(lines, header);
  while (std::getline(lines, line)) last = line;
  const orrery::Json window = orrery::Json::parse(last);
  const orrery::Json protocol = orrery::Json::parse(test::read_text(f.dir + "/eval/eval.json"))["protocol"];
  CHECK(protocol["contexts"] == orrery::Json::array({64, 512}));
  CHECK(protocol["box_cox"] == "checked");
  // --no-forecasts keeps the scores alone.
  const auto scores_only = test::run_command(orrery_cmd("eval --model " + f.dir + "/model.safetensors=tiny --data " +
                                                        f.dir + "/monthly.csv --baselines seasonal_naive --no-forecasts "
                                                        "--out " + f.dir + "/scores"));
  CHECK(scores_only.status == 0);
  CHECK(std::filesystem::exists(f.dir + "/scores/eval.json"));
  CHECK_FALSE(std::filesystem::exists(f.dir + "/scores/eval_forecasts.jsonl"));
  const int64_t start = window["start"], horizon = window["actual"].size();
  REQUIRE(horizon > 0);
  const orrery::Json& theirs = window["forecasts"]["tiny"];  // [level][step], 6 significant digits

  // The same window's history, as a CSV for orrery forecast and as a list for Lua.
  std::vector<double> history;
  {
    std::ifstream in(f.dir + "/monthly.csv");
    std::getline(in, line);
    for (int64_t t = 0; t < start && std::getline(in, line); ++t) history.push_back(std::stod(line.substr(line.find(',') + 1)));
  }
  {
    std::ofstream csv(f.dir + "/history.csv");
    csv.precision(17);
    csv << "sales\n";
    for (double v : history) csv << v << "\n";
  }
  const auto cli = f.forecast("--input " + f.dir + "/history.csv --horizon " + std::to_string(horizon) +
                              " --season 12 --out " + f.dir + "/cli.csv");
  INFO(cli.output);
  REQUIRE(cli.status == 0);
  std::vector<std::vector<double>> by_cli(9, std::vector<double>(horizon));
  {
    std::ifstream in(f.dir + "/cli.csv");
    std::getline(in, line);
    for (int64_t h = 0; h < horizon && std::getline(in, line); ++h) {
      std::stringstream cells(line);
      std::string cell;
      std::getline(cells, cell, ',');  // step
      for (int q = 0; q < 9; ++q) std::getline(cells, cell, ','), by_cli[q][h] = std::stod(cell);
    }
  }
  std::ostringstream lua;
  lua.precision(17);
  lua << "local m = orrery.load('" << f.dir << "/model.safetensors')\nlocal f = m:forecast{values = {";
  for (size_t t = 0; t < history.size(); ++t) lua << (t ? ", " : "") << history[t];
  lua << "}, horizon = " << horizon << ", season = 12}\n"
         "orrery.write_json('" << f.dir << "/lua.json', f.quantiles)\n";
  std::ofstream(f.dir + "/parity.lua") << lua.str();
  const auto by_lua = test::run_command(orrery_cmd("run " + f.dir + "/parity.lua"));
  INFO(by_lua.output);
  REQUIRE(by_lua.status == 0);
  const orrery::Json from_lua = orrery::Json::parse(test::read_text(f.dir + "/lua.json"));
  for (int q = 0; q < 9; ++q)
    for (int64_t h = 0; h < horizon; ++h) {
      const double e = theirs[q][h].get<double>(), tolerance = 1e-5 * std::max(1.0, std::fabs(e));  // eval keeps 6 digits
      INFO("level " << q << ", step " << h);
      CHECK(std::fabs(by_cli[q][h] - e) <= tolerance);
      CHECK(std::fabs(from_lua[q][h].get<double>() - by_cli[q][h]) <= 1e-9 * std::max(1.0, std::fabs(by_cli[q][h])));
    }
}

TEST_CASE("orrery forecast --combine pools the model's forecast with baselines fitted on the same column") {
  Fixture f;
  // in.csv's column a: 100 + t for t < 70, so naive forecasts 169 at every step and level's centre.
  auto quantiles = [&](const std::string& args) {
    const auto r = f.forecast("--input " + f.dir + "/in.csv --target a --horizon 4 --context 64" + args);
    INFO(r.output);
    REQUIRE(r.status == 0);
    return quantile_rows(r.output);
  };
  const auto alone = quantiles("");
  // The median of {model, naive, naive} is naive's: 169 at the median level.
  const auto median = quantiles(" --combine naive,naive --combine-rule median");
  for (const auto& step : median) CHECK(step[4] == Approx(169).epsilon(1e-9));
  // The mean of {model, naive}: half way between the model's median and 169.
  const auto mean = quantiles(" --combine naive");
  for (size_t h = 0; h < mean.size(); ++h) CHECK(mean[h][4] == Approx((alone[h][4] + 169) / 2).epsilon(1e-6));
  // Checked, the column keeps one forecast whole: the pool or the model's alone, at every step and level.
  const auto checked = quantiles(" --combine naive --combine-check");
  CHECK((checked == mean || checked == alone));
  // So it does when both checks score the column's last 3 horizons, and model:forecast agrees.
  const auto checked3 = quantiles(" --combine naive --combine-check --check-origins 3");
  CHECK((checked3 == mean || checked3 == alone));
  // Hostile counts are refused, naming the flag: empty, a fraction, tiny, huge, not text at all.
  for (const std::string bad : {"''", "1e-40", "2.5", "99999999999999999999999", "\"$(printf '\\377\\376')\"", "-3", "0"}) {
    INFO(bad);
    const auto r = f.forecast("--input " + f.dir + "/in.csv --target a --horizon 4 --check-origins " + bad);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("forecast: --check-origins"));
  }
  auto unasked = f.forecast("--input " + f.dir + "/in.csv --horizon 4 --combine-check");
  CHECK(unasked.status == 1);
  CHECK_THAT(unasked.output, Catch::Contains("--combine-check checks a combination; give --combine"));
  // model:forecast takes the same: the median of {model, naive, naive} is naive's last value.
  std::ofstream(f.dir + "/combine.lua")
      << "local m = orrery.load('" << f.dir << "/model.safetensors')\n"
         "local v = {}\nfor t = 0, 69 do v[#v + 1] = 100 + t end\n"
         "local f = m:forecast{values = v, horizon = 4, contexts = {64}, combine = {'naive', 'naive'}, combine_rule = 'median'}\n"
         "print(string.format('median %.9g %.9g', f.median[1], f.quantiles[5][4]))\n"
         "local g = m:forecast{values = v, horizon = 4, contexts = {64}, combine = {'naive'}, combine_check = true,\n"
         "                     check_origins = 3}\n"
         "print(string.format('checked3 %.17g', g.quantiles[5][1]))\n";
  const auto lua = test::run_command(orrery_cmd("run " + f.dir + "/combine.lua"));
  INFO(lua.output);
  CHECK(lua.output.find("median 169 169") != std::string::npos);
  const size_t at = lua.output.find("checked3 ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(lua.output.substr(at + 9)) == Approx(checked3[0][4]).epsilon(1e-6));
  auto bad = f.forecast("--input " + f.dir + "/in.csv --horizon 4 --combine prophet");
  CHECK(bad.status == 1);
  CHECK_THAT(bad.output, Catch::Contains("prophet"));
}

TEST_CASE("orrery forecast --box-cox-average averages the transform's forecast with the plain one, as model:forecast does") {
  Fixture f;
  // A seasonal series whose swings grow with its level: Guerrero's exponent is well below 1.
  std::vector<double> grows;
  for (int t = 0; t < 96; ++t) grows.push_back(50 * std::exp(0.015 * t) * (1 + 0.25 * std::sin(2 * M_PI * t / 12)));
  {
    std::ofstream csv(f.dir + "/grows.csv");
    csv.precision(17);
    csv << "time,a\n";
    for (size_t t = 0; t < grows.size(); ++t) csv << 2000 + static_cast<double>(t) / 12 << "," << grows[t] << "\n";
  }
  auto quantiles = [&](const std::string& args) {
    const auto r = f.forecast("--input " + f.dir + "/grows.csv --horizon 4 --context 64" + args);
    INFO(r.output);
    REQUIRE(r.status == 0);
    return quantile_rows(r.output);
  };
  const auto plain = quantiles(" --no-box-cox"), transformed = quantiles(" --box-cox --no-box-cox-average --season 12");
  const auto averaged = quantiles(" --box-cox --box-cox-average --season 12");
  REQUIRE(transformed != plain);  // the transform changes this model's forecast of column a
  for (size_t h = 0; h < averaged.size(); ++h)
    for (size_t q = 0; q < averaged[h].size(); ++q)
      CHECK(averaged[h][q] == Approx((plain[h][q] + transformed[h][q]) / 2).epsilon(1e-6));
  // Checked (the default transform), the column keeps the average whole or the plain forecast.
  const auto checked = quantiles(" --box-cox-average --season 12");
  bool whole_average = true, whole_plain = true;
  for (size_t h = 0; h < checked.size(); ++h)
    for (size_t q = 0; q < checked[h].size(); ++q) {
      whole_average = whole_average && checked[h][q] == Approx(averaged[h][q]).epsilon(1e-9);
      whole_plain = whole_plain && checked[h][q] == plain[h][q];
    }
  CHECK((whole_average || whole_plain));
  // model:forecast takes the same option and forecasts the same.
  std::ostringstream script;
  script.precision(17);
  script << "local m = orrery.load('" << f.dir << "/model.safetensors')\nlocal v = {";
  for (size_t t = 0; t < grows.size(); ++t) script << (t ? ", " : "") << grows[t];
  script << "}\nlocal g = m:forecast{values = v, horizon = 4, contexts = {64}, season = 12, box_cox = true,\n"
         "                     box_cox_average = true}\n"
         "print(string.format('averaged %.17g', g.quantiles[2][3]))\n"
         "for _, a in ipairs({true, false}) do\n"
         "  local e = orrery.eval{model = m, data = '" << f.dir << "/grows.csv', frequency = 'M', baselines = {'naive'},\n"
         "                       box_cox = true, box_cox_average = a, quiet = true}\n"
         "  print('protocol', a, e.protocol.box_cox_average)\n"
         "end\n";
  std::ofstream(f.dir + "/average.lua") << script.str();
  const auto lua = test::run_command(orrery_cmd("run " + f.dir + "/average.lua"));
  INFO(lua.output);
  const size_t at = lua.output.find("averaged ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(lua.output.substr(at + 9)) == Approx(averaged[2][1]).epsilon(1e-6));
  // orrery.eval takes it too and records it in the protocol (absent: the transform's alone).
  CHECK_THAT(lua.output, Catch::Contains("protocol\ttrue\ttrue") && Catch::Contains("protocol\tfalse\tnil"));
  // orrery eval says which it scored: the average by default, the transform alone when told.
  for (const bool average : {true, false}) {
    const auto r = test::run_command(orrery_cmd("eval --model " + f.dir + " --data " + f.dir + "/grows.csv --frequency M "
                                                "--baselines naive --no-forecasts" +
                                                (average ? std::string() : " --no-box-cox-average")));
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK((r.output.find("mapped back, averaged with the untransformed forecast;") != std::string::npos) == average);
    CHECK(r.output.find("mapped back") != std::string::npos);
  }
  // Nothing to average without the transform, in either order.
  for (const std::string flags : {"--no-box-cox --box-cox-average", "--box-cox-average --no-box-cox"}) {
    INFO(flags);
    const auto r = f.forecast("--input " + f.dir + "/grows.csv --horizon 4 " + flags);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("forecast: --box-cox-average averages the Box-Cox forecast with the plain one"));
  }
  // The default averages (inference_defaults.h); --no-box-cox-average beside --no-box-cox is not
  // refused, and the two average flags together are.
  CHECK(quantiles(" --box-cox --season 12") == (orrery::inference_defaults::box_cox_average ? averaged : transformed));
  CHECK(quantiles(" --no-box-cox --no-box-cox-average") == plain);
  const auto both = f.forecast("--input " + f.dir + "/grows.csv --horizon 4 --box-cox-average --no-box-cox-average");
  CHECK(both.status == 1);
  CHECK_THAT(both.output, Catch::Contains("forecast: --box-cox-average and --no-box-cox-average ask for different "
                                          "forecasts; give one"));
}
