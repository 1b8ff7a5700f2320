// The csv data plugin: layouts, missing values and gaps, frequencies, file patterns, the
// validation holdout, deterministic windows, the cache, chunked reading and its errors.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "orrery/error.h"
#include "orrery/host/csv.h"
#include "orrery/host/eval_protocol.h"
#include "orrery/host/registry.h"
#include "support.h"

namespace fs = std::filesystem;
using orrery::DataContext;
using orrery::Json;
using orrery::Split;

namespace {

std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::unique_ptr<orrery::DataSource> csv(Json options, Split split = Split::train, uint64_t seed = 0, int rank = 0) {
  DataContext ctx;
  ctx.split = split;
  ctx.seed = seed;
  ctx.rank = rank;
  return orrery::Registry::global().create<orrery::PluginKind::data>("csv", options, ctx);
}

// The source with `options` must not build: an orrery::Error that says `message`.
void refuses(const Json& options, const std::string& message) {
  try {
    csv(options);
    FAIL("no error for " << options.dump());
  } catch (const orrery::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains(message));
  }
}

// Variate v of sample b as text, "1,2,nan,4": from its first observed step to its last (left
// padding dropped), unobserved steps between as nan.
std::string render(const orrery::Batch& batch, int64_t b, int64_t v) {
  auto x = batch.values.accessor<float, 3>();
  auto m = batch.observed.accessor<bool, 3>();
  std::vector<std::string> parts;
  for (int64_t t = 0; t < batch.values.size(2); ++t) {
    if (!m[b][v][t]) {
      if (!parts.empty()) parts.push_back("nan");
      continue;
    }
    std::ostringstream out;
    out << x[b][v][t];
    parts.push_back(out.str());
  }
  while (!parts.empty() && parts.back() == "nan") parts.pop_back();
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ",") + p;
  return s;
}

// Every distinct series (variate 0) drawn in `draws` batches of windows longer than any series.
std::set<std::string> whole_series(const orrery::DataSource& d, int64_t length = 64, int draws = 8) {
  std::set<std::string> seen;
  for (int k = 0; k < draws; ++k) {
    auto b = d.sample({32, length, static_cast<uint64_t>(k)});
    for (int64_t i = 0; i < 32; ++i) seen.insert(render(b, i, 0));
  }
  return seen;
}

const char* kWide =
    "date,a,b,label\n"
    "2024-01-01,1,10,x\n"
    "2024-01-02,2,NA,y\n"
    "2024-01-03,,12,z\n"
    "2024-01-04,4,13,w\n";

}  // namespace

TEST_CASE("a wide file: each numeric column is a series, missing values are unobserved") {
  auto dir = test::temp_dir("csv-wide");
  auto d = csv({{"files", write(dir, "w.csv", kWide)}, {"holdout", 0.0}});
  CHECK(whole_series(*d) == std::set<std::string>{"1,2,nan,4", "10,nan,12,13"});
  const Json j = d->describe();
  CHECK(j["series"] == 2);
  CHECK(j["steps"] == 8);
  CHECK(j["frequency"] == "D");
  CHECK(j["season"] == 1);
  CHECK(j["variates"] == 1);
  // a window longer than the series: left-padded with unobserved steps
  auto b = d->sample({1, 6, 0});
  CHECK(b.values.sizes() == at::IntArrayRef{1, 1, 6});
  CHECK_FALSE(b.observed[0][0][0].item<bool>());
  CHECK_FALSE(b.observed[0][0][1].item<bool>());
  CHECK(b.observed[0][0][2].item<bool>());
  CHECK(b.series_ids.sizes() == at::IntArrayRef{1, 1});
  // columns chosen by name
  auto only_b = csv({{"files", dir + "/w.csv"}, {"holdout", 0.0}, {"columns", "b"}});
  CHECK(whole_series(*only_b) == std::set<std::string>{"10,nan,12,13"});
}

TEST_CASE("a wide file as one multivariate series") {
  auto dir = test::temp_dir("csv-multi");
  auto d = csv({{"files", write(dir, "w.csv", kWide)}, {"holdout", 0.0}, {"multivariate", true}});
  const Json j = d->describe();
  CHECK(j["series"] == 1);
  CHECK(j["variates"] == 2);
  auto b = d->sample({3, 4, 1});
  CHECK(b.values.sizes() == at::IntArrayRef{3, 2, 4});
  CHECK(render(b, 0, 0) == "1,2,nan,4");
  CHECK(render(b, 0, 1) == "10,nan,12,13");
  CHECK(b.series_ids.eq(0).all().item<bool>());  // one series: one id
}

TEST_CASE("covariate columns: each series' last rows, with roles; a long file's ids alike") {
  auto dir = test::temp_dir("csv-covariates");
  const std::string wide = write(dir, "sales.csv",
                                 "time,promo,sales,price\n1,0,10,5\n2,1,20,5\n3,0,11,6\n4,0,12,6\n");
  auto d = csv({{"files", wide}, {"holdout", 0.0}, {"timestamp_format", "unix"}, {"past_covariates", "price"},
                {"future_covariates", "promo"}});
  const Json j = d->describe();
  CHECK(j["series"] == 1);
  CHECK(j["variates"] == 3);
  CHECK(j["past_covariates"] == 1);
  CHECK(j["future_covariates"] == 1);
  auto b = d->sample({2, 4, 0});
  CHECK(render(b, 0, 0) == "10,20,11,12");  // the target first, whatever the column order
  CHECK(render(b, 0, 1) == "5,5,6,6");      // then the past-only covariate
  CHECK(render(b, 0, 2) == "0,1,0,0");      // then the known-future one
  REQUIRE(b.roles.defined());
  CHECK(b.roles.equal(at::tensor(std::vector<int64_t>{0, 1, 2, 0, 1, 2}, at::kLong).view({2, 3})));
  const auto stored = d->stored_series();
  REQUIRE(stored.size() == 1);
  CHECK(stored[0].columns == std::vector<std::string>{"sales", "price", "promo"});
  CHECK(stored[0].roles == std::vector<int64_t>{0, 1, 2});
  // Without covariates a batch has no roles, as before.
  CHECK_FALSE(csv({{"files", wide}, {"holdout", 0.0}, {"timestamp_format", "unix"}})->sample({1, 4, 0}).roles.defined());

  // A long file: each id one series of its targets and covariates.
  const std::string long_file = write(dir, "long.csv",
                                      "id,time,y,x\na,1,1,7\nb,1,5,8\na,2,2,7\nb,2,6,9\n");
  auto l = csv({{"files", long_file}, {"holdout", 0.0}, {"timestamp_format", "unix"}, {"past_covariates", "x"}});
  CHECK(l->describe()["series"] == 2);
  auto lb = l->sample({8, 2, 3});
  for (int64_t i = 0; i < 8; ++i) {
    const std::string y = render(lb, i, 0), x = render(lb, i, 1);
    CHECK(((y == "1,2" && x == "7,7") || (y == "5,6" && x == "8,9")));
  }
  CHECK(lb.roles.select(1, 1).eq(1).all().item<bool>());

  // Every mismatch names the file, the column and the option.
  auto fails = [&](Json options, const std::string& message) {
    options["files"] = wide;
    options["timestamp_format"] = "unix";
    refuses(options, message);
  };
  fails({{"past_covariates", "cost"}}, "sales.csv: no column \"cost\" (option past_covariates); its columns are time, "
                                       "promo, sales, price");
  fails({{"past_covariates", "time"}}, "column \"time\" is the time column, not a covariate (option past_covariates)");
  fails({{"columns", "sales,price"}, {"past_covariates", "price"}},
        "column \"price\" is both a target (option columns) and a covariate (option past_covariates)");
  fails({{"past_covariates", "price"}, {"future_covariates", "price"}}, "column \"price\" is named twice as a covariate");
  fails({{"past_covariates", "promo,sales,price"}}, "every value column is a covariate: no target to forecast");
}

TEST_CASE("static covariate columns: one value per series, on every row of its batch; each mismatch named") {
  auto dir = test::temp_dir("csv-statics");
  // A long file: each id a series with its size (the same on each of its rows, or empty) and its region.
  const std::string file = write(dir, "stores.csv",
                                 "id,time,sales,size,region\na,1,10,40,1\nb,1,50,400,2\na,2,11,,1\nb,2,52,400,2\n"
                                 "a,3,12,40,1\nb,3,51,400,2\n");
  auto d = csv({{"files", file}, {"holdout", 0.0}, {"timestamp_format", "unix"}, {"static_covariates", "size, region"}});
  CHECK(d->static_covariates() == std::vector<std::string>{"size", "region"});
  const Json j = d->describe();
  CHECK(j["static_covariates"] == Json({"size", "region"}));
  CHECK(j["variates"] == 1);  // the static columns become no rows
  const auto b = d->sample({8, 3, 1});
  REQUIRE(b.statics.defined());
  REQUIRE(b.statics.sizes() == at::IntArrayRef({8, 1, 2}));
  for (int64_t i = 0; i < 8; ++i) {
    const std::string y = render(b, i, 0);
    INFO(y);
    const bool a = y == "10,11,12";
    CHECK((a || y == "50,52,51"));
    CHECK(b.statics[i][0][0].item<float>() == (a ? 40.f : 400.f));
    CHECK(b.statics[i][0][1].item<float>() == (a ? 1.f : 2.f));
  }
  const auto stored = d->stored_series();
  REQUIRE(stored.size() == 2);
  CHECK(stored[0].statics == std::vector<double>{40, 1});
  CHECK(stored[1].statics == std::vector<double>{400, 2});
  // Without them a batch has none, and the file's cache entry is the one it had before.
  auto plain = csv({{"files", file}, {"holdout", 0.0}, {"timestamp_format", "unix"}, {"value", "sales"}});
  CHECK_FALSE(plain->sample({1, 3, 0}).statics.defined());
  CHECK(plain->static_covariates().empty());

  // A wide file of several series: each takes the file's static values.
  const std::string wide = write(dir, "wide.csv", "time,x,y,size\n1,1,2,7\n2,3,4,7\n");
  auto w = csv({{"files", wide}, {"holdout", 0.0}, {"timestamp_format", "unix"}, {"static_covariates", "size"}});
  for (const auto& s : w->stored_series()) CHECK(s.statics == std::vector<double>{7});

  auto fails = [&](const std::string& text, Json options, const std::string& message) {
    options["files"] = write(dir, "bad.csv", text);
    options["timestamp_format"] = "unix";
    options["holdout"] = 0.0;
    refuses(options, message);
  };
  const std::string good = "id,time,sales,size\na,1,10,40\na,2,11,40\n";
  fails("id,time,sales,size\na,1,10,40\na,2,11,41\n", {{"static_covariates", "size"}},
        "bad.csv:3: column \"size\" is a static covariate (one value per series), but (series \"a\") it is 41 here "
        "and 40 at line 2");
  fails("id,time,sales,size\na,1,10,\na,2,11,\nb,1,1,3\nb,2,1,3\n", {{"static_covariates", "size"}},
        "series \"a\" has no value of static covariate \"size\" on any row");
  fails(good, {{"static_covariates", "area"}}, "no column \"area\" (option static_covariates)");
  fails(good, {{"static_covariates", "time"}}, "column \"time\" is the time column, not a static covariate");
  fails(good, {{"value", "sales,size"}, {"static_covariates", "size"}},
        "column \"size\" is both a target (option value) and a static covariate (option static_covariates)");
  fails(good, {{"past_covariates", "size"}, {"static_covariates", "size"}},
        "column \"size\" is both a covariate over time and a static covariate");
  fails(good, {{"static_covariates", "size,size"}}, "column \"size\" is named twice as a static covariate");
  fails(good, {{"static_covariates", "sales,size"}}, "every value column is a covariate: no target to forecast");
  fails("id,time,sales,size\na,1,10,1e39\na,2,11,1e39\n", {{"static_covariates", "size"}},
        "bad.csv:2: column \"size\": the static covariate 1e+39 (series \"a\") is not a finite float32 number");
  fails("id,time,sales,size\na,1,10,1e-40\na,2,11,1e-40\n", {{"static_covariates", "size"}},
        "bad.csv:2: column \"size\": the static covariate 1e-40 (series \"a\") is below float32's smallest normal number");
  fails("id,time,sales,size\na,1,10,abc\n", {{"static_covariates", "size"}}, "bad.csv:2: column \"size\": non-numeric value \"abc\"");
  // A categorical one: one category per series.
  fails("id,time,sales,format\na,1,10,mall\na,2,11,\na,3,12,street\n", {{"static_covariates", "format"}, {"categorical", "format"}},
        "bad.csv:4: column \"format\" is a static covariate (one category per series), but (series \"a\") it is "
        "\"street\" here and \"mall\" at line 2");
  fails("id,time,sales,format\na,1,10,\nb,1,11,mall\n", {{"static_covariates", "format"}, {"categorical", "format"}},
        "series \"a\" has no value of static covariate \"format=mall\" on any row");
}

TEST_CASE("categorical static covariates: one 0/1 static per category of any file, 0 where a file lacks it") {
  auto dir = test::temp_dir("csv-static-categories");
  // Two files: the first's stores are malls and streets, the second's kiosks and malls.
  write(dir, "north.csv", "id,time,sales,format,size\na,1,10,mall,40\na,2,11,mall,40\nb,1,5,street,4\nb,2,6,,4\n");
  write(dir, "south.csv", "id,time,sales,format,size\nc,1,1,kiosk,1\nc,2,2,kiosk,1\nd,1,7, mall ,50\nd,2,8,mall,50\n");
  const Json options = {{"files", dir + "/*.csv"}, {"holdout", 0.0}, {"timestamp_format", "unix"},
                        {"static_covariates", "format, size"}, {"categorical", "format"}};
  auto d = csv(options);
  const std::vector<std::string> names = {"format=kiosk", "format=mall", "format=street", "size"};
  CHECK(d->static_covariates() == names);
  CHECK(d->describe()["static_covariates"] == Json(names));
  CHECK(d->describe()["variates"] == 1);  // statics become no rows
  std::map<std::string, std::vector<double>> by_series;
  for (const auto& s : d->stored_series()) by_series[s.name] = s.statics;
  CHECK(by_series == std::map<std::string, std::vector<double>>{{"a", {0, 1, 0, 40}}, {"b", {0, 0, 1, 4}},
                                                                {"c", {1, 0, 0, 1}}, {"d", {0, 1, 0, 50}}});
  const auto b = d->sample({16, 2, 3});
  REQUIRE(b.statics.sizes() == at::IntArrayRef({16, 1, 4}));
  for (int64_t i = 0; i < 16; ++i) CHECK(b.statics[i][0].sum().item<float>() == b.statics[i][0][3].item<float>() + 1);
  // The entries come back from the cache with their categories.
  auto again = csv(options);
  CHECK(again->describe()["cache_reused"] == 2);
  CHECK(again->static_covariates() == names);
  CHECK(again->stored_series()[0].statics == d->stored_series()[0].statics);
  // A category that is not UTF-8 is named as JSON keeps it, the same when read back from the
  // cache; one that reads as another's text is refused rather than merged.
  std::filesystem::create_directories(dir + "/odd"), std::filesystem::create_directories(dir + "/twins");
  const std::string odd = write(dir, "odd/stores.csv", "id,time,sales,format\na,1,10,\xff\xfe\na,2,11,\xff\xfe\nb,1,1,ok\n");
  const Json odd_options = {{"files", odd}, {"holdout", 0.0}, {"timestamp_format", "unix"},
                            {"static_covariates", "format"}, {"categorical", "format"}};
  const std::vector<std::string> odd_names = {"format=\\xFF\\xFE", "format=ok"};
  CHECK(csv(odd_options)->static_covariates() == odd_names);
  CHECK(csv(odd_options)->static_covariates() == odd_names);
  const std::string twins = write(dir, "twins/stores.csv", "id,time,sales,format\na,1,10,\xff\nb,1,1,\\xFF\n");
  refuses({{"files", twins}, {"holdout", 0.0}, {"timestamp_format", "unix"}, {"static_covariates", "format"},
           {"categorical", "format"}},
          "holds two categories that read as the same text");
}

TEST_CASE("categorical covariate columns: one 0/1 row per category in the file, as a forecast makes them") {
  auto dir = test::temp_dir("csv-categorical");
  // Two stores: the holiday column's categories are the file's ("easter", "none", "xmas"), so
  // store b, which never sees "easter", still has its row (all zeros); an empty cell is missing
  // in every row of the column. Byte order, as one_hot sorts them for a forecast.
  const std::string path = write(dir, "stores.csv",
                                 "id,time,sales,holiday,price\n"
                                 "a,1,10,none,5\na,2,30,xmas,5\na,3,12,,6\na,4,20,easter,6\n"
                                 "b,1,7,none,2\nb,2,9, xmas ,2\nb,3,6,none,3\nb,4,5,none,3\n");
  for (int64_t chunk : {int64_t{1} << 20, int64_t{7}}) {
    INFO("chunk_bytes " << chunk);
    auto d = csv({{"files", path}, {"holdout", 0.0}, {"timestamp_format", "unix"}, {"past_covariates", "price"},
                  {"future_covariates", "holiday"}, {"categorical", "holiday"}, {"chunk_bytes", chunk},
                  {"cache_dir", dir + "/c" + std::to_string(chunk)}});
    CHECK(d->describe()["variates"] == 5);
    const auto stored = d->stored_series();
    REQUIRE(stored.size() == 2);
    for (const auto& s : stored) {
      CHECK(s.columns == std::vector<std::string>{"sales", "price", "holiday=easter", "holiday=none", "holiday=xmas"});
      CHECK(s.roles == std::vector<int64_t>{0, 1, 2, 2, 2});
    }
    const auto& a = stored[0].name == "a" ? stored[0] : stored[1];
    const auto& b = stored[0].name == "a" ? stored[1] : stored[0];
    auto text = [](const std::vector<float>& row) {
      std::ostringstream s;
      for (size_t t = 0; t < row.size(); ++t) s << (t ? "," : "") << row[t];
      return s.str();
    };
    CHECK(text(a.values[2]) == "0,0,nan,1");
    CHECK(text(a.values[3]) == "1,0,nan,0");
    CHECK(text(a.values[4]) == "0,1,nan,0");
    CHECK(text(b.values[2]) == "0,0,0,0");
    CHECK(text(b.values[4]) == "0,1,0,0");
    auto batch = d->sample({4, 4, 1});
    REQUIRE(batch.roles.defined());
    CHECK(batch.roles.equal(at::tensor(std::vector<int64_t>{0, 1, 2, 2, 2}, at::kLong).repeat({4, 1})));
  }
  // Past-only categories too, and two categorical columns of different widths: the roles follow
  // the variates each column became, not the count of columns.
  const std::string wide = write(dir, "shop.csv", "time,sales,weather,day\n1,3,sun,mon\n2,4,rain,tue\n3,5,sun,wed\n");
  auto w = csv({{"files", wide}, {"holdout", 0.0}, {"timestamp_format", "unix"}, {"past_covariates", "weather"},
                {"future_covariates", "day"}, {"categorical", "day, weather"}});
  const auto shop = w->stored_series();
  REQUIRE(shop.size() == 1);
  CHECK(shop[0].columns == std::vector<std::string>{"sales", "weather=rain", "weather=sun", "day=mon", "day=tue", "day=wed"});
  CHECK(shop[0].roles == std::vector<int64_t>{0, 1, 1, 2, 2, 2});

  auto fails = [&](Json options, const std::string& message) {
    options["files"] = path;
    options["timestamp_format"] = "unix";
    options["holdout"] = 0.0;
    refuses(options, message);
  };
  fails({{"past_covariates", "price"}, {"categorical", "holiday"}},
        "stores.csv: column \"holiday\" is named by option categorical but is not a covariate; name it in "
        "past_covariates, future_covariates or static_covariates too");
  fails({{"future_covariates", "holiday"}, {"categorical", "holiday,holiday"}},
        "column \"holiday\" is named twice by option categorical");
  fails({{"future_covariates", "holiday"}, {"categorical", "day"}}, "stores.csv: no column \"day\" (option categorical)");
  // Without the option the column's text is an error naming the cell, as for any value column.
  fails({{"future_covariates", "holiday"}}, "stores.csv:3: column \"holiday\"");  // "none" on line 2 reads as missing
  // An id is not a covariate: more categories than one_hot allows is refused, named.
  std::string many = "time,y,code\n";
  for (int t = 0; t < 70; ++t) many += std::to_string(t + 1) + ",1,c" + std::to_string(t) + "\n";
  CHECK_THROWS_WITH(csv({{"files", write(dir, "many.csv", many)}, {"holdout", 0.0}, {"timestamp_format", "unix"},
                         {"past_covariates", "code"}, {"categorical", "code"}}),
                    Catch::Contains("many.csv: column \"code\": more than 64 categories, the most a categorical "
                                    "covariate may have (one row each); is it an id?"));
  // Hostile cells: bytes that are not UTF-8, a quote-escaped comma, a megabyte-long category. The
  // rows' names go into JSON (the cache index, config.json), so they are kept valid there.
  {
    const std::string long_cell(1 << 20, 'x');
    const std::string odd = write(dir, "odd.csv", "time,y,code\n1,1,\xff\xfe\n2,2,\"a,b\"\n3,3," + long_cell + "\n4,4,\xff\xfe\n");
    auto o = csv({{"files", odd}, {"holdout", 0.0}, {"timestamp_format", "unix"}, {"past_covariates", "code"},
                  {"categorical", "code"}});
    const auto s = o->stored_series();
    REQUIRE(s.size() == 1);
    REQUIRE(s[0].columns.size() == 4);
    CHECK(s[0].columns[1] == "code=a,b");
    for (const auto& c : s[0].columns) CHECK_NOTHROW(Json(c).dump());
    CHECK(s[0].values[3] == std::vector<float>{1, 0, 0, 1});  // the two non-UTF-8 cells: one category, last in byte order
    CHECK(s[0].values[2] == std::vector<float>{0, 0, 1, 0});
  }
  CHECK_THROWS_WITH(csv({{"files", write(dir, "empty.csv", "time,y,code\n1,1,\n2,2, \n")}, {"holdout", 0.0},
                         {"timestamp_format", "unix"}, {"past_covariates", "code"}, {"categorical", "code"}}),
                    Catch::Contains("empty.csv: column \"code\": a categorical covariate with no category"));
}

TEST_CASE("a long file with interleaved ids, in memory or spilled to disk") {
  auto dir = test::temp_dir("csv-long");
  const std::string path = write(dir, "l.csv",
                                 "item_id,timestamp,target\n"
                                 "a,2024-01-01 00:00,1\n"
                                 "b,2024-01-01 00:00,5\n"
                                 "a,2024-01-01 01:00,2\n"
                                 "b,2024-01-01 01:00,6\n"
                                 "a,2024-01-01 02:00,3\n");
  for (int64_t buffer : {int64_t{64} << 20, int64_t{1}}) {
    INFO("buffer_bytes " << buffer);
    auto d = csv({{"files", path}, {"holdout", 0.0}, {"buffer_bytes", buffer}, {"cache_dir", dir + "/c" + std::to_string(buffer)}});
    CHECK(whole_series(*d) == std::set<std::string>{"1,2,3", "5,6"});
    CHECK(d->describe()["frequency"] == "H");
    CHECK(d->describe()["season"] == 24);
  }
}

TEST_CASE("a long file's value columns: one series each, or an id's variates") {
  auto dir = test::temp_dir("csv-long-multi");
  const std::string path = write(dir, "l.csv",
                                 "series,time,x,y\n"
                                 "s1,2024-01-01,1,10\n"
                                 "s2,2024-01-01,3,30\n"
                                 "s1,2024-01-02,2,20\n"
                                 "s2,2024-01-02,4,\n");
  auto separate = csv({{"files", path}, {"holdout", 0.0}});
  CHECK(separate->describe()["series"] == 4);
  CHECK(whole_series(*separate) == std::set<std::string>{"1,2", "10,20", "3,4", "30"});
  auto joint = csv({{"files", path}, {"holdout", 0.0}, {"multivariate", true}});
  CHECK(joint->describe()["series"] == 2);
  CHECK(joint->describe()["variates"] == 2);
  auto b = joint->sample({16, 2, 0});
  for (int64_t i = 0; i < 16; ++i) {
    const std::string x = render(b, i, 0), y = render(b, i, 1);
    CHECK(((x == "1,2" && y == "10,20") || (x == "3,4" && y == "30")));
  }
  auto only_y = csv({{"files", path}, {"holdout", 0.0}, {"value", "y"}, {"layout", "long"}, {"id", "series"}});
  CHECK(whole_series(*only_y) == std::set<std::string>{"10,20", "30"});
}

TEST_CASE("gaps in the timestamps become unobserved steps, rows in any order") {
  auto dir = test::temp_dir("csv-gaps");
  auto d = csv({{"files", write(dir, "g.csv",
                                "timestamp,v\n"
                                "2024-01-01 05:00:00,6\n"
                                "2024-01-01 00:00:00,1\n"
                                "2024-01-01 01:00:00,2\n"
                                "2024-01-01 02:00:00,3\n"
                                "2024-01-01 07:00:00,8\n")},
                {"holdout", 0.0}});
  CHECK(whole_series(*d) == std::set<std::string>{"1,2,3,nan,nan,6,nan,8"});
  CHECK(d->describe()["steps"] == 8);
  CHECK(d->describe()["rows"] == 5);
  // without a time column rows stay in file order
  auto untimed = csv({{"files", dir + "/g.csv"}, {"holdout", 0.0}, {"timestamp", "none"}, {"cache_dir", dir + "/u"}});
  CHECK(whole_series(*untimed) == std::set<std::string>{"6,1,2,3,8"});
  CHECK(untimed->describe()["frequency"].is_null());
  // ... and a given frequency names their steps: an untimed monthly file has a season of 12.
  auto monthly = csv({{"files", dir + "/g.csv"}, {"holdout", 0.0}, {"timestamp", "none"}, {"frequency", "M"},
                      {"cache_dir", dir + "/m"}});
  CHECK(whole_series(*monthly) == std::set<std::string>{"6,1,2,3,8"});
  CHECK(monthly->describe()["frequency"] == "M");
  CHECK(monthly->describe()["season"] == 12);
}

TEST_CASE("frequencies are inferred per series and give the source's season") {
  auto dir = test::temp_dir("csv-freq");
  auto freq = [&](const std::string& name, const std::string& text, Json extra = Json::object()) {
    Json o = {{"files", write(dir, name, text)}, {"holdout", 0.0}};
    o.update(extra);
    const Json j = csv(o)->describe();
    return std::pair(j["frequency"].is_null() ? std::string("-") : j["frequency"].get<std::string>(), j["season"].get<int64_t>());
  };
  CHECK(freq("t.csv", "ds,v\n2024-01-01T00:00:00Z,1\n2024-01-01T00:15:00Z,2\n2024-01-01T00:30:00Z,3\n"
                     "2024-01-01T01:00:00Z,4\n") == std::pair(std::string("15T"), int64_t{96}));
  CHECK(freq("s.csv", "time,v\n2024-01-01 00:00:00,1\n2024-01-01 00:00:10,2\n2024-01-01 00:00:20,3\n") ==
        std::pair(std::string("10S"), int64_t{360}));
  CHECK(freq("m.csv", "date,v\n2023-01-31,1\n2023-02-28,2\n2023-03-31,3\n2023-04-30,4\n") == std::pair(std::string("M"), int64_t{12}));
  CHECK(freq("q.csv", "date,v\n2023-01-01,1\n2023-04-01,2\n2023-07-01,3\n") == std::pair(std::string("Q"), int64_t{4}));
  CHECK(freq("w.csv", "date,v\n2024-01-07,1\n2024-01-14,2\n2024-01-21,3\n2024-02-04,4\n") == std::pair(std::string("W"), int64_t{1}));
  std::string business = "date,v\n";
  for (const char* day : {"2024-01-04", "2024-01-05", "2024-01-08", "2024-01-09", "2024-01-10", "2024-01-12"})
    business += std::string(day) + ",1\n";
  CHECK(freq("b.csv", business) == std::pair(std::string("B"), int64_t{5}));
  auto b = csv({{"files", dir + "/b.csv"}, {"holdout", 0.0}});
  CHECK(b->describe()["steps"] == 7);  // Thursday to Friday of the next week, Thursday 11th missing
  // R's monthly ts times
  CHECK(freq("r.csv", "time,value\n1949,112\n1949.0833,118\n1949.1667,132\n1949.25,129\n",
             {{"timestamp_format", "year"}}) == std::pair(std::string("M"), int64_t{12}));
  CHECK(freq("u.csv", "time,v\n1700000000,1\n1700003600,2\n", {{"timestamp_format", "unix"}}) ==
        std::pair(std::string("H"), int64_t{24}));
  // a frequency given is used as it is
  CHECK(freq("h.csv", "date,v\n2024-01-01,1\n2024-01-03,2\n", {{"frequency", "D"}}) == std::pair(std::string("D"), int64_t{1}));
  CHECK(csv({{"files", dir + "/h.csv"}, {"holdout", 0.0}, {"frequency", "D"}})->describe()["steps"] == 3);
  // several frequencies in one source: no single season
  auto mixed = csv({{"files", dir + "/{t,m}.csv"}, {"holdout", 0.0}})->describe();
  CHECK(mixed["frequency"].is_null());
  CHECK(mixed["season"] == 1);
  CHECK(mixed["frequencies"] == Json{{"15T", 1}, {"M", 1}});
}

TEST_CASE("file patterns: globs, braces, sorted, and none matching is an error") {
  auto dir = test::temp_dir("csv-glob");
  write(dir, "b2.csv", "v\n3\n4\n");
  write(dir, "b1.csv", "v\n1\n2\n");
  write(dir, "c.csv", "v\n5\n6\n");
  auto d = csv({{"files", dir + "/b*.csv"}, {"holdout", 0.0}});
  CHECK(d->describe()["files"] == Json{dir + "/b1.csv", dir + "/b2.csv"});
  CHECK(whole_series(*d) == std::set<std::string>{"1,2", "3,4"});
  auto braces = csv({{"files", dir + "/{c,b1}.csv"}, {"holdout", 0.0}});
  CHECK(braces->describe()["files"].size() == 2);
  CHECK(whole_series(*braces) == std::set<std::string>{"1,2", "5,6"});
  CHECK_THROWS_WITH(csv({{"files", dir + "/z*.csv"}}), Catch::Contains("no file matches \"" + dir + "/z*.csv\""));
  CHECK_THROWS_WITH(csv({{"files", dir + "/nope.csv"}}), Catch::Contains("no such file \"" + dir + "/nope.csv\""));
  CHECK_THROWS_WITH(csv(Json::object()), Catch::Contains("option files is required"));
  CHECK_THROWS_WITH(csv({{"files", dir}}), Catch::Contains("is a folder"));
}

TEST_CASE("the validation holdout: disjoint series, the same in every run and whatever the other files") {
  auto dir = test::temp_dir("csv-holdout");
  auto wide = [&](const std::string& name, int first, int count) {
    std::string text;
    // appended piecewise: GCC 12 warns falsely on literal + string
    for (int c = 0; c < count; ++c) text.append(c ? ",c" : "c").append(std::to_string(first + c));
    text += "\n";
    for (int r = 0; r < 20; ++r) {
      for (int c = 0; c < count; ++c) text.append(c ? "," : "").append(std::to_string(first + c));
      text += "\n";
    }
    return write(dir, name, text);
  };
  wide("a.csv", 0, 100);
  wide("b.csv", 1000, 50);
  // the columns a source draws from (each column holds its own number)
  auto columns = [&](const orrery::DataSource& d) {
    std::set<int> seen;
    for (int k = 0; k < 40; ++k) {
      auto b = d.sample({64, 4, static_cast<uint64_t>(k)});
      auto x = b.values.accessor<float, 3>();
      for (int64_t i = 0; i < 64; ++i) seen.insert(static_cast<int>(x[i][0][3]));
    }
    return seen;
  };
  const Json o = {{"files", dir + "/a.csv"}, {"timestamp", "none"}, {"holdout", 0.2}};
  auto train = csv(o, Split::train), validation = csv(o, Split::validation);
  const int held = validation->describe()["split_series"];
  CHECK(train->describe()["split_series"].get<int>() + held == 100);
  CHECK(held > 8);
  CHECK(held < 35);
  const auto t = columns(*train), v = columns(*validation);
  CHECK(static_cast<int>(v.size()) == held);
  for (int c : v) CHECK(t.count(c) == 0);
  CHECK(csv(o, Split::validation)->describe()["split_series"] == held);  // stable
  CHECK(columns(*csv(o, Split::validation)) == v);
  // another file beside it changes nothing of this file's split
  Json both = o;
  both["files"] = dir + "/{a,b}.csv";
  std::set<int> from_a;
  for (int c : columns(*csv(both, Split::validation)))
    if (c < 1000) from_a.insert(c);
  CHECK(from_a == v);
  // no holdout: nothing to validate on
  CHECK_THROWS_WITH(csv({{"files", dir + "/a.csv"}, {"holdout", 0.0}}, Split::validation),
                    Catch::Contains("no series for the validation split"));
}

TEST_CASE("a file of one series is split in time: validation draws the last steps") {
  auto dir = test::temp_dir("csv-timesplit");
  std::string text = "v\n";
  for (int i = 0; i < 100; ++i) text += std::to_string(i) + "\n";
  const Json o = {{"files", write(dir, "one.csv", text)}, {"holdout", 0.1}};
  auto train = csv(o, Split::train), validation = csv(o, Split::validation);
  CHECK(validation->describe()["time_split_files"].size() == 1);
  CHECK(validation->describe()["split_steps"] == 10);
  CHECK(train->describe()["split_steps"] == 90);
  for (int k = 0; k < 20; ++k) {
    auto tb = train->sample({16, 8, static_cast<uint64_t>(k)});
    auto vb = validation->sample({16, 8, static_cast<uint64_t>(k)});
    CHECK(tb.values.masked_select(tb.observed).max().item<float>() <= 89);
    CHECK(vb.values.masked_select(vb.observed).min().item<float>() >= 90);
  }
}

TEST_CASE("exclude_last keeps the end of every series from both splits") {
  auto dir = test::temp_dir("csv-exclude");
  std::string text = "v\n";
  for (int i = 0; i < 100; ++i) text += std::to_string(i) + "\n";
  const Json o = {{"files", write(dir, "one.csv", text)}, {"holdout", 0.1}, {"exclude_last", 20}};
  auto train = csv(o, Split::train), validation = csv(o, Split::validation);
  CHECK(train->describe()["split_steps"] == 72);  // the first 80 steps, split 72 / 8 in time
  CHECK(validation->describe()["split_steps"] == 8);
  for (int k = 0; k < 20; ++k) {
    auto tb = train->sample({16, 8, static_cast<uint64_t>(k)});
    auto vb = validation->sample({16, 8, static_cast<uint64_t>(k)});
    CHECK(tb.values.masked_select(tb.observed).max().item<float>() <= 71);
    CHECK(vb.values.masked_select(vb.observed).max().item<float>() <= 79);
  }
  Json all = o;
  all["exclude_last"] = 100;
  CHECK_THROWS_WITH(csv(all), Catch::Contains("exclude_last = 100"));
}

// Evaluation reads a file source's series whole (both splits, exclude_last ignored): a long
// file scores exactly as the same series laid out wide.
TEST_CASE("a file source's series feed evaluation, whatever the layout") {
  auto dir = test::temp_dir("csv-eval");
  std::string wide = "date,a,b\n", long_form = "id,date,v\n", untimed = "v\n";
  for (int t = 0; t < 60; ++t) {
    char date[32];  // room for any int: GCC at -O1 (make sanitize) cannot bound t and warns
    std::snprintf(date, sizeof date, "%04d-%02d-01", 2000 + t / 12, t % 12 + 1);
    const double a = 10 + t + 3 * std::sin(t * 0.52), b = 50 - 0.5 * t + (t % 12 == 0 ? 6 : 0);
    wide += std::string(date) + "," + std::to_string(a) + "," + (t == 7 ? "" : std::to_string(b)) + "\n";
    long_form += "a," + std::string(date) + "," + std::to_string(a) + "\n";
    if (t != 7) long_form += "b," + std::string(date) + "," + std::to_string(b) + "\n";
    untimed += std::to_string(a) + "\n";
  }
  const Json base = {{"holdout", 0.5}, {"exclude_last", 12}};
  auto source = [&](const std::string& file, Json extra = Json::object()) {
    Json o = base;
    o["files"] = write(dir, file.substr(0, file.find('|')), file.substr(file.find('|') + 1));
    o.update(extra);
    return csv(o, Split::validation);
  };
  auto w = source("wide.csv|" + wide), l = source("long.csv|" + long_form);
  const auto dw = orrery::eval_datasets(*w, "csv"), dl = orrery::eval_datasets(*l, "csv");
  REQUIRE(dw.size() == 1);
  REQUIRE(dl.size() == 1);
  CHECK(dw[0].name == "wide");
  CHECK(dw[0].frequency.str() == "M");
  REQUIRE(dl[0].series.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(dl[0].series[i].name == std::string(i ? "b" : "a"));
    CHECK(dl[0].series[i].values.size() == 60);  // whole: neither the holdout nor exclude_last applies
    CHECK(std::isnan(dl[0].series[1].values[7]));
    for (size_t t = 0; t < 60; ++t)
      if (!std::isnan(dw[0].series[i].values[t])) CHECK(dl[0].series[i].values[t] == dw[0].series[i].values[t]);
  }
  auto naive = orrery::baseline_forecaster("seasonal_naive"), theta = orrery::baseline_forecaster("theta");
  const Json rw = orrery::run_eval(dw, {naive.get(), theta.get()}, {}), rl = orrery::run_eval(dl, {naive.get(), theta.get()}, {});
  CHECK(rw["summary"] == rl["summary"]);
  CHECK(rw["configurations"][0]["items"] == 2);

  // Without times the frequency must be given; series at two frequencies are two data sets.
  CHECK_THROWS_WITH(orrery::eval_datasets(*source("untimed.csv|" + untimed), "csv"),
                    Catch::Contains("untimed: series 'v' has no times to infer its frequency from"));
  CHECK(orrery::eval_datasets(*source("untimed.csv|" + untimed), "csv", "W")[0].frequency.str() == "W");
  write(dir, "daily.csv", "date,d\n2024-01-01,1\n2024-01-02,2\n2024-01-03,3\n");
  auto both = csv({{"files", Json::array({dir + "/wide.csv", dir + "/daily.csv"})}});
  const auto two = orrery::eval_datasets(*both, "csv");
  REQUIRE(two.size() == 2);
  CHECK(two[0].name == "csv/D");
  CHECK(two[1].name == "csv/M");
  auto generator = orrery::Registry::global().create<orrery::PluginKind::data>("synthetic", Json::object(), DataContext{});
  CHECK_THROWS_WITH(orrery::eval_datasets(*generator, "synthetic"), Catch::Contains("it holds no fixed series"));
}

TEST_CASE("sampling is deterministic in the seed, the same on every rank and safe from threads") {
  auto dir = test::temp_dir("csv-seed");
  std::string text = "id,v\n";
  for (int i = 0; i < 300; ++i) text.append("s").append(std::to_string(i % 7)).append(",").append(std::to_string(i)).append("\n");
  const Json o = {{"files", write(dir, "s.csv", text)}, {"holdout", 0.0}};
  auto a = csv(o), b = csv(o);
  auto x = a->sample({8, 16, 5}), y = b->sample({8, 16, 5});
  CHECK(at::equal(x.values, y.values));
  CHECK(at::equal(x.observed, y.observed));
  CHECK_FALSE(at::equal(x.values, a->sample({8, 16, 6}).values));
  CHECK(at::equal(x.values, csv(o, Split::train, 0, 1)->sample({8, 16, 5}).values));  // batches differ by number
  std::vector<at::Tensor> parallel(8);
  std::vector<std::thread> threads;
  for (int k = 0; k < 8; ++k) threads.emplace_back([&, k] { parallel[k] = a->sample({8, 16, static_cast<uint64_t>(k)}).values; });
  for (auto& t : threads) t.join();
  for (int k = 0; k < 8; ++k) CHECK(at::equal(parallel[k], b->sample({8, 16, static_cast<uint64_t>(k)}).values));
}

TEST_CASE("the cache is reused while the file is unchanged and rebuilt when it changes") {
  auto dir = test::temp_dir("csv-cache");
  const std::string path = write(dir, "c.csv", "date,v\n2024-01-01,1\n2024-01-02,2\n");
  auto first = csv({{"files", path}, {"holdout", 0.0}})->describe();
  CHECK(first["cache"] == dir + "/.orrery-cache");  // beside the file by default
  CHECK(first["cache_built"] == 1);
  fs::path index;
  for (const auto& e : fs::directory_iterator(dir + "/.orrery-cache"))
    if (e.path().extension() == ".json") index = e.path();
  REQUIRE(!index.empty());
  const auto written = fs::last_write_time(index);
  auto second = csv({{"files", path}, {"holdout", 0.0}})->describe();
  CHECK(second["cache_reused"] == 1);
  CHECK(second["cache_built"] == 0);
  CHECK(fs::last_write_time(index) == written);
  // other content options: an entry of their own
  CHECK(csv({{"files", path}, {"holdout", 0.0}, {"timestamp", "none"}})->describe()["cache_built"] == 1);
  CHECK(csv({{"files", path}, {"holdout", 0.0}})->describe()["cache_reused"] == 1);
  // the file changes: rebuilt, with the new rows
  write(dir, "c.csv", "date,v\n2024-01-01,1\n2024-01-02,2\n2024-01-03,3\n");
  auto third = csv({{"files", path}, {"holdout", 0.0}});
  CHECK(third->describe()["cache_built"] == 1);
  CHECK(whole_series(*third) == std::set<std::string>{"1,2,3"});
  int values_files = 0;
  for (const auto& e : fs::directory_iterator(dir + "/.orrery-cache")) values_files += e.path().extension() == ".f32";
  CHECK(values_files == 2);  // this option set's current values and the untimed entry's
  // a damaged index is rebuilt, not trusted
  std::ofstream(index) << "{not json";
  CHECK(csv({{"files", path}, {"holdout", 0.0}})->describe()["cache_built"] == 1);
}

TEST_CASE("reading a file stops on a requested interrupt, leaving no partial cache; the next read builds it") {
  auto dir = test::temp_dir("csv-interrupt");
  std::string text = "date,v\n";
  for (int d = 1; d <= 28; ++d) text += "2024-02-" + std::string(d < 10 ? "0" : "") + std::to_string(d) + "," + std::to_string(d) + "\n";
  const std::string path = write(dir, "c.csv", text);
  orrery::Interrupt stop;
  stop.request(SIGTERM);
  DataContext ctx;
  ctx.interrupt = &stop;
  const Json options = {{"files", path}, {"holdout", 0.0}};
  CHECK_THROWS_WITH(orrery::Registry::global().create<orrery::PluginKind::data>("csv", options, ctx),
                    Catch::Contains("interrupted"));
  for (const auto& e : fs::directory_iterator(dir + "/.orrery-cache"))  // its lock only: no values, no index
    CHECK(e.path().extension() == ".lock");
  stop.clear();
  auto source = orrery::Registry::global().create<orrery::PluginKind::data>("csv", options, ctx);
  CHECK(source->describe()["cache_built"] == 1);
}

TEST_CASE("chunks cut rows, fields and quotes anywhere without changing what is read") {
  auto dir = test::temp_dir("csv-chunks");
  const std::string path = write(dir, "q.csv",
                                 "\xEF\xBB\xBF\"id\",\"the \"\"time\"\"\",\"value, in units\"\r\n"
                                 "\"a,1\",2024-01-01,1.5\r\n"
                                 "\r\n"
                                 "\"a,1\", 2024-01-02 ,\" 2.5\"\r\n"
                                 "b,2024-01-01,-3e2\r\n"
                                 "b,2024-01-02,NaN\r\n"
                                 "b,2024-01-03,7\r\n");
  const Json base = {{"files", path}, {"holdout", 0.0}, {"timestamp", "the \"time\""}};
  auto reference = csv(base);
  CHECK(whole_series(*reference) == std::set<std::string>{"1.5,2.5", "-300,nan,7"});
  for (int chunk : {1, 2, 3, 5, 7, 13}) {
    INFO("chunk_bytes " << chunk);
    Json o = base;
    o["chunk_bytes"] = chunk;
    o["cache_dir"] = dir + "/c" + std::to_string(chunk);
    auto d = csv(o);
    CHECK(d->describe()["steps"] == reference->describe()["steps"]);
    CHECK(at::equal(d->sample({8, 4, 3}).values, reference->sample({8, 4, 3}).values));
  }
}

TEST_CASE("a file many times the chunk size streams through a small buffer") {
  auto dir = test::temp_dir("csv-big");
  std::string text = "id,time,v\n";
  const int ids = 50, steps = 400;
  for (int t = 0; t < steps; ++t)
    for (int i = 0; i < ids; ++i)
      text += "id" + std::to_string(i) + "," + std::to_string(1700000000 + 60 * t) + "," + std::to_string(i * 100000 + t) + "\n";
  REQUIRE(text.size() > 100 * 4096);
  auto d = csv({{"files", write(dir, "big.csv", text)}, {"holdout", 0.0}, {"timestamp_format", "unix"},
                {"chunk_bytes", 4096}, {"buffer_bytes", 4096}});
  const Json j = d->describe();
  CHECK(j["rows"] == ids * steps);
  CHECK(j["series"] == ids);
  CHECK(j["steps"] == ids * steps);
  CHECK(j["frequency"] == "T");
  CHECK(j["season"] == 1440);
  auto b = d->sample({32, 64, 9});
  CHECK(b.observed.all().item<bool>());
  auto diffs = b.values.narrow(2, 1, 63) - b.values.narrow(2, 0, 63);
  CHECK(diffs.eq(1).all().item<bool>());  // consecutive steps of one series, in time order
}

TEST_CASE("malformed files: errors name the file, the line and the column") {
  auto dir = test::temp_dir("csv-errors");
  auto error = [&](const std::string& name, const std::string& text, Json extra = Json::object()) {
    Json o = {{"files", write(dir, name, text)}, {"holdout", 0.0}};
    o.update(extra);
    try {
      csv(o);
    } catch (const orrery::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error("n.csv", "date,a\n2024-01-01,1\n2024-01-02,abc\n", {{"columns", "a"}}),
             Catch::Contains(dir + "/n.csv:3: column \"a\": non-numeric value \"abc\""));
  std::string late = "a\n";  // past the rows that choose the numeric columns
  for (int i = 0; i < 150; ++i) late += "1\n";
  CHECK_THAT(error("late.csv", late + "x1\n"), Catch::Contains("late.csv:152: column \"a\": non-numeric value \"x1\""));
  CHECK_THAT(error("inf.csv", "a\n1\ninf\n"), Catch::Contains("inf.csv:3: column \"a\": infinite value \"inf\""));
  CHECK_THAT(error("w.csv", "date,a,b\n2024-01-01,1,2\n2024-01-02,3\n"),
             Catch::Contains("w.csv:3: expected 3 fields as in the header, found 2"));
  CHECK_THAT(error("t.csv", "date,a\n2024-01-01,1\n2024-13-01,2\n"),
             Catch::Contains("t.csv:3: column \"date\": cannot read \"2024-13-01\" as a time"));
  CHECK_THAT(error("e.csv", "date,a\n2024-01-01,1\n,2\n"), Catch::Contains("e.csv:3: column \"date\": no time"));
  CHECK_THAT(error("d.csv", "id,timestamp,v\na,2024-01-01 00:00,1\na,2024-01-01 01:00,2\nb,2024-01-01 00:00,3\n"
                            "a,2024-01-01 01:00,4\n"),
             Catch::Contains("d.csv:5: column \"timestamp\": the time 2024-01-01 01:00:00 repeats line 3 (series \"a\")"));
  CHECK_THAT(error("h.csv", "date,a\n"), Catch::Contains("h.csv:1: no data rows after the header"));
  CHECK_THAT(error("z.csv", ""), Catch::Contains("z.csv: empty file"));
  CHECK_THAT(error("i.csv", "date,a\n2024-01-01,1\n2024-01-02,2\n2024-01-02 07:00,3\n2024-01-04,4\n"),
             Catch::Contains("i.csv: column \"date\": irregular timestamps"));
  CHECK_THAT(error("q.csv", "a,b\n\"1,2\n"), Catch::Contains("q.csv:2: a quoted field is not closed"));
  CHECK_THAT(error("x.csv", "date,a,a\n2024-01-01,1,2\n"), Catch::Contains("x.csv:1: columns 2 and 3 are both named \"a\""));
  CHECK_THAT(error("v.csv", "id,date,a\nx,2024-01-01,1\n", {{"value", "nope"}}),
             Catch::Contains("v.csv: no column \"nope\" (option value); its columns are id, date, a"));
  CHECK_THAT(error("l.csv", "date,a\n2024-01-01,1\n", {{"layout", "long"}}), Catch::Contains("the long layout needs an id column"));
  CHECK_THAT(error("s.csv", "date,name\n2024-01-01,x\n"), Catch::Contains("s.csv: no value columns"));
  CHECK_THAT(error("f.csv", "date,a\n2024-01-01,1\n", {{"frequency", "fortnightly"}}), Catch::Contains("unknown frequency"));
  CHECK_THAT(error("o.csv", "a\n1\n", {{"chunk_size", 5}}), Catch::Contains("unknown option 'chunk_size'"));
}

// One rule for a cell (csv_fields.h), the same in every CSV reader of Orrery.
TEST_CASE("a bad cell in a column of numbers is an error naming it, never a dropped column") {
  auto dir = test::temp_dir("csv-cells");
  auto error = [&](const std::string& name, const std::string& text) {
    try {
      csv({{"files", write(dir, name, text)}, {"holdout", 0.0}, {"timestamp_format", "unix"}});
    } catch (const orrery::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Before: column b, taken for text among the first 100 rows, was dropped without a word.
  std::string text = "time,a,b\n";
  for (int i = 0; i < 60; ++i)
    text += std::to_string(1700000000 + 3600 * i) + "," + std::to_string(i) + "," + (i == 50 ? "abc" : std::to_string(2 * i)) + "\n";
  CHECK_THAT(error("cell.csv", text), Catch::Contains("cell.csv:52: column \"b\": non-numeric value \"abc\""));
  CHECK_THAT(error("hex.csv", "a\n1\n0x64\n"), Catch::Contains("hex.csv:3: column \"a\": non-numeric value \"0x64\""));
  // The float32 cache: too small is refused as too large is (before: 1e-40 became a denormal,
  // 1e-50 an exact zero); beyond a double's range either way.
  CHECK_THAT(error("tiny.csv", "a\n1\n1e-40\n"),
             Catch::Contains("tiny.csv:3: column \"a\": the value 1e-40 is below float32's smallest normal number (1.2e-38): "
                             "rescale the column"));
  CHECK_THAT(error("tinier.csv", "a\n1\n-1e-50\n"), Catch::Contains("tinier.csv:3: column \"a\": the value -1e-50 is below"));
  CHECK_THAT(error("e-400.csv", "a\n1\n1e-400\n"),
             Catch::Contains("e-400.csv:3: column \"a\": the value \"1e-400\" is outside a double's range"));
  CHECK_THAT(error("only_text.csv", "date,name\n2024-01-01,x\n"),
             Catch::Contains("only_text.csv: no value columns: no numeric column besides the time and id (" + dir +
                             "/only_text.csv:2 holds \"x\" in column \"name\")"));
  // Missing markers, a text column left out, and a column that starts after 100 missing rows.
  std::string late = "date,label,a,b\n";
  for (int d = 0; d < 120; ++d) {
    char day[16];
    std::snprintf(day, sizeof day, "2024-%02d-%02d", 1 + d / 28, 1 + d % 28);
    const char* markers[] = {"N/A", "-", "None", "#N/A", "?", "--", "nil", "null"};
    late += std::string(day) + ",x" + std::to_string(d) + "," + (d % 3 ? std::to_string(d) : markers[d / 3 % 8]) + "," +
            (d < 110 ? "NA" : std::to_string(d)) + "\n";
  }
  auto src = csv({{"files", write(dir, "markers.csv", late)}, {"holdout", 0.0}, {"frequency", "D"}});
  const Json d = src->describe();
  CHECK(d["series"] == 2);  // a and b; label is text
  const orrery::Batch b = src->sample({4, 4, 1});
  CHECK(b.values.size(1) == 1);
}

TEST_CASE("the host's CSV reader (orrery forecast, orrery eval, orrery.read_csv) follows the plugin's rule") {
  auto dir = test::temp_dir("csv-host-rule");
  auto error = [&](const std::string& name, const std::string& text) {
    try {
      orrery::read_csv(write(dir, name, text));
    } catch (const orrery::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Before: "15 (an unbalanced quote) read as 15 and 0x64 as 100, where the plugin refused both.
  CHECK_THAT(error("quote.csv", "a\n1\n\"15\n2\n"), Catch::Contains("quote.csv:3: a quoted field is not closed"));
  CHECK_THAT(error("hex.csv", "a\n1\n0x64\n"), Catch::Contains("hex.csv:3: column \"a\": non-numeric value \"0x64\""));
  CHECK_THAT(error("e400.csv", "a\n1\n1e400\n"), Catch::Contains("e400.csv:3: column \"a\": the value \"1e400\" is outside"));
  // Quoting as RFC 4180 has it, and the same missing markers.
  const orrery::CsvTable t = orrery::read_csv(write(dir, "ok.csv", "\"a, b\",c\n\"1\",N/A\n -2 ,?\n3,\"\"\n"));
  CHECK(t.names == std::vector<std::string>{"a, b", "c"});
  CHECK(t.columns[0] == std::vector<double>{1, -2, 3});
  CHECK(std::all_of(t.columns[1].begin(), t.columns[1].end(), [](double v) { return std::isnan(v); }));
}

TEST_CASE("a header of a million columns is checked in linear time") {
  auto dir = test::temp_dir("csv-wide-header");
  // Before: the duplicate check compared each name with every earlier one (100k columns 11 s,
  // 1M over 450 s). The repeat at the end is found after every name is seen once.
  std::string header;
  for (int i = 0; i < 1000000; ++i) header.append("c").append(std::to_string(i)).append(",");
  header += "c0\n1";
  for (int i = 0; i < 1000000; ++i) header += ",1";
  const std::string path = write(dir, "wide.csv", header + "\n");
  const auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(csv({{"files", path}}), Catch::Contains("wide.csv:1: columns 1 and 1000001 are both named \"c0\""));
  CHECK_THROWS_WITH(orrery::read_csv(path), Catch::Contains("wide.csv:1: columns 1 and 1000001 are both named \"c0\""));
  // A complexity check, not a timing: linear takes a second or two here, quadratic many minutes.
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(120));
}

TEST_CASE("a named pipe is refused, not waited on") {
  auto dir = test::temp_dir("csv-fifo");
  const std::string fifo = dir + "/pipe.csv";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Before: open(2) blocked with no writer, and Ctrl-C could not stop it.
  CHECK_THROWS_WITH(csv({{"files", fifo}}), Catch::Contains(fifo + " is a named pipe, not a data file"));
  CHECK_THROWS_WITH(orrery::read_csv(fifo), Catch::Contains(fifo + " is a named pipe, not a CSV file"));
}

TEST_CASE("bytes that are not UTF-8 in a file name or a header cell: usable, cached, named safely") {
  auto dir = test::temp_dir("csv-bytes");
  // Before: nlohmann's type_error 316 while writing the cache index, a .json.tmp left behind,
  // and the file could not be used at all.
  const std::string path = write(dir, "sales\xff.csv", "time,caf\xe9,b\n2024-01-01,1,2\n2024-01-02,3,4\n2024-01-03,5,6\n");
  auto first = csv({{"files", path}, {"holdout", 0.0}});
  const Json d = first->describe();
  CHECK(d["series"] == 2);
  CHECK(d["cache_built"] == 1);
  CHECK(d["files"][0] == dir + "/sales\\xFF.csv");  // JSON text holds the byte as \xFF
  CHECK_NOTHROW(orrery::json_text(d));
  std::set<std::string> names;
  for (const auto& s : first->stored_series()) names.insert(s.name);
  CHECK(names == std::set<std::string>{"caf\\xE9", "b"});
  for (const auto& e : fs::directory_iterator(dir + "/.orrery-cache"))
    CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
  CHECK(csv({{"files", path}, {"holdout", 0.0}})->describe()["cache_reused"] == 1);
}

TEST_CASE("the cache notices a file rewritten with its size and modification time kept") {
  auto dir = test::temp_dir("csv-cache-ctime");
  const std::string path = write(dir, "c.csv", "a\n1\n2\n");
  auto before = csv({{"files", path}, {"holdout", 0.0}});
  CHECK(whole_series(*before) == std::set<std::string>{"1,2"});
  const auto mtime = fs::last_write_time(path);
  write(dir, "c.csv", "a\n7\n8\n");  // the same size
  fs::last_write_time(path, mtime);  // and its time set back, as touch -d or rsync -t do
  // Before: read from the stale cache, "1,2".
  auto after = csv({{"files", path}, {"holdout", 0.0}});
  CHECK(after->describe()["cache_built"] == 1);
  CHECK(whole_series(*after) == std::set<std::string>{"7,8"});
}

TEST_CASE("a split with no series says why in the options' terms") {
  auto dir = test::temp_dir("csv-empty-split");
  // Before: both said "every series is held out for validation: holdout = 1" with holdout 0.1.
  CHECK_THROWS_WITH(csv({{"files", write(dir, "one_row.csv", "a\n5\n")}}),
                    Catch::Contains("no series for the train split in " + dir + "/one_row.csv (the longest series has 1 "
                                    "step, too few to split in time between training and validation (holdout = 0.1"));
  CHECK_THROWS_WITH(csv({{"files", write(dir, "short.csv", "a\n1\n2\n3\n")}, {"exclude_last", 10}}),
                    Catch::Contains("(exclude_last = 10 keeps back every step: the longest series has 3 steps)"));
  CHECK_THROWS_WITH(csv({{"files", write(dir, "all.csv", "a\n1\n2\n3\n")}, {"holdout", 1.0}}),
                    Catch::Contains("(every series is held out for validation: holdout = 1)"));
}

TEST_CASE("a source says the longest series a sample can hold") {
  auto dir = test::temp_dir("csv-longest");
  std::string text = "a,b\n";
  for (int i = 0; i < 30; ++i) text += std::to_string(i) + "," + (i < 12 ? std::to_string(i) : "") + "\n";
  auto train = csv({{"files", write(dir, "l.csv", text)}, {"holdout", 0.0}});
  CHECK(train->longest_series() == 30);
  CHECK(orrery::Registry::global()
            .create<orrery::PluginKind::data>("synthetic", Json::object(), DataContext{})
            ->longest_series() == std::nullopt);
}

// The parquet plugin shares the csv plugin's layouts, cache and sampler; it is built only where
// the pyarrow wheel's Arrow C++ is found, and its files are written here by that same pyarrow.
TEST_CASE("parquet and Arrow IPC files, when the parquet plugin is built") {
  bool built = false;
  for (const auto& p : orrery::Registry::global().plugins()) built |= p.kind == orrery::PluginKind::data && p.name == "parquet";
  const std::string python = std::string(ORRERY_SOURCE_DIR) + "/.venv/bin/python";
  if (!built || !fs::exists(python)) {
    WARN("the parquet plugin or the venv's python is missing: skipped");
    return;
  }
  auto dir = test::temp_dir("parquet");
  write(dir, "make.py", R"(import sys, datetime as dt
import pyarrow as pa, pyarrow.parquet as pq, pyarrow.feather as feather, pyarrow.ipc as ipc
d = sys.argv[1]
h = lambda k: dt.datetime(2024, 1, 1, k)
pq.write_table(pa.table({
    'item_id': pa.array(['a', 'b', 'a', 'b', 'a', 'a']).dictionary_encode(),
    'timestamp': pa.array([h(0), h(0), h(1), h(1), h(2), h(5)], pa.timestamp('ns')),
    'target': pa.array([1.0, 5.0, 2.0, None, 3.0, 6.0])}), d + '/long.parquet', row_group_size=2)
feather.write_feather(pa.table({
    'date': pa.array([dt.date(2024, 1, 1), dt.date(2024, 1, 2), dt.date(2024, 1, 4)], pa.date32()),
    'a': pa.array([1, 2, 4], pa.int64()), 'b': pa.array([10.5, None, 13.0], pa.float32()),
    'label': ['x', 'y', 'z']}), d + '/wide.feather')
with ipc.new_stream(d + '/s.arrows', pa.schema([('time', pa.string()), ('v', pa.float64())])) as w:
    w.write_table(pa.table({'time': ['2024-01-01', '2024-02-01', '2024-03-01'], 'v': [1.0, 2.0, 3.0]}))
pq.write_table(pa.table({'v': ['1', '2', 'abc']}), d + '/bad.parquet')
categories = pa.table({
    'y': [1.0, 2.0, 3.0, 4.0],
    'day': pa.array(['mon', ' tue', None, 'mon']).dictionary_encode(),
    'level': pa.array([3, 1, 3, 3], pa.int32()),
    'grade': pa.array([1.5, float('nan'), 1.5, 2.5], pa.float64())})
pq.write_table(categories, d + '/categories.parquet')
feather.write_feather(categories, d + '/categories.feather')
# Nested columns first: the first pass reads the categorical columns' leaves only.
nested = categories.add_column(0, 'meta', pa.array([{'a': 1, 'b': [1, 2]}] * 4))
nested = nested.add_column(1, 'tags', pa.array([[1], [2, 3], [], [4]]))
pq.write_table(nested, d + '/nested.parquet', row_group_size=3)
import decimal
pq.write_table(pa.table({
    'price': pa.array([decimal.Decimal('1.25'), None, decimal.Decimal('-3.50')], pa.decimal128(9, 2)),
    'big': pa.array([decimal.Decimal('2.5'), decimal.Decimal('4'), decimal.Decimal('8')], pa.decimal256(40, 1)),
    'half': pa.array([0.5, 1.5, 2.25], pa.float16()),
    'text': pa.array(['1', 'N/A', '-'])}), d + '/typed.parquet')
pq.write_table(pa.table({
    'id': ['a', 'a', 'b', 'b'], 'time': [1, 2, 1, 2], 'y': [1.0, 2.0, 3.0, 4.0],
    'size': pa.array([40, None, 400, 400], pa.int32()),
    'format': pa.array(['mall', None, 'street', 'street']).dictionary_encode()}), d + '/stores.parquet', row_group_size=1)
)");
  const auto made = test::run_command("'" + python + "' '" + dir + "/make.py' '" + dir + "'");
  REQUIRE(made.status == 0);
  auto parquet = [&](Json o) {
    o["holdout"] = 0.0;
    return orrery::Registry::global().create<orrery::PluginKind::data>("parquet", o, DataContext{});
  };
  for (int rows : {65536, 1}) {
    INFO("batch_rows " << rows);
    auto d = parquet({{"files", dir + "/long.parquet"}, {"batch_rows", rows}, {"cache_dir", dir + "/c" + std::to_string(rows)}});
    CHECK(whole_series(*d) == std::set<std::string>{"1,2,3,nan,nan,6", "5"});
    CHECK(d->describe()["frequency"] == "H");
    CHECK(d->describe()["rows"] == 6);
  }
  const auto sets = orrery::eval_datasets(*parquet({{"files", dir + "/long.parquet"}}), "parquet");
  REQUIRE(sets.size() == 1);
  CHECK(sets[0].name == "long");
  CHECK(sets[0].frequency.str() == "H");
  CHECK(sets[0].series.size() == 2);
  auto wide = parquet({{"files", dir + "/wide.feather"}});
  CHECK(whole_series(*wide) == std::set<std::string>{"1,2,nan,4", "10.5,nan,nan,13"});
  CHECK(wide->describe()["frequency"] == "D");
  auto stream = parquet({{"files", dir + "/s.arrows"}});
  CHECK(whole_series(*stream) == std::set<std::string>{"1,2,3"});
  CHECK(stream->describe()["season"] == 12);
  // Decimal and float16 columns are numbers (before: "non-numeric"); text cells follow CSV's rule.
  auto typed = parquet({{"files", dir + "/typed.parquet"}});
  CHECK(whole_series(*typed) == std::set<std::string>{"1.25,nan,-3.5", "2.5,4,8", "0.5,1.5,2.25"});
  CHECK(whole_series(*parquet({{"files", dir + "/typed.parquet"}, {"columns", "text"}})) == std::set<std::string>{"1"});
  // Categorical covariates as in CSV: dictionary, string and integer columns alike, a null missing.
  // The first pass reads those columns alone, in Parquet (nested columns before them or not) and
  // Arrow IPC alike.
  for (const std::string file : {"categories.parquet", "categories.feather", "nested.parquet"}) {
    for (int rows : {65536, 1}) {
      INFO(file << ", batch_rows " << rows);
      auto cat = parquet({{"files", dir + "/" + file}, {"timestamp", "none"}, {"batch_rows", rows}, {"columns", "y"},
                          {"cache_dir", dir + "/cat" + file + std::to_string(rows)}, {"past_covariates", "level"},
                          {"future_covariates", "day"}, {"categorical", "day,level"}});
      const auto s = cat->stored_series();
      REQUIRE(s.size() == 1);
      CHECK(s[0].columns == std::vector<std::string>{"y", "level=1", "level=3", "day=mon", "day=tue"});
      CHECK(s[0].roles == std::vector<int64_t>{0, 1, 1, 2, 2});
      CHECK(s[0].values[2] == std::vector<float>{1, 0, 1, 1});
      CHECK(s[0].values[4][1] == 1);
      CHECK(std::isnan(s[0].values[3][2]));
    }
  }
  // Static covariates as in CSV: each id's value, a null cell skipped, whatever the batch size; a
  // categorical one (a dictionary column) as its 0/1 per category.
  for (int rows : {65536, 1}) {
    auto stores = parquet({{"files", dir + "/stores.parquet"}, {"timestamp_format", "unix"}, {"batch_rows", rows},
                           {"cache_dir", dir + "/stores" + std::to_string(rows)}, {"static_covariates", "size,format"},
                           {"categorical", "format"}});
    CHECK(stores->static_covariates() == std::vector<std::string>{"size", "format=mall", "format=street"});
    const auto s = stores->stored_series();
    REQUIRE(s.size() == 2);
    CHECK(s[0].statics == std::vector<double>{40, 1, 0});
    CHECK(s[1].statics == std::vector<double>{400, 0, 1});
    CHECK(s[0].values.size() == 1);
  }
  // A float column's NaN is missing there, as a number's would be; its values are categories.
  {
    auto grade = parquet({{"files", dir + "/categories.parquet"}, {"timestamp", "none"}, {"columns", "y"},
                          {"past_covariates", "grade"}, {"categorical", "grade"}, {"cache_dir", dir + "/grade"}});
    const auto s = grade->stored_series();
    REQUIRE(s.size() == 1);
    CHECK(s[0].columns == std::vector<std::string>{"y", "grade=1.5", "grade=2.5"});
    CHECK(std::isnan(s[0].values[1][1]));
    CHECK(s[0].values[2][3] == 1);
  }
  // A flipped byte in the footer's metadata (before: only "Couldn't deserialize thrift").
  {
    std::string bytes = test::read_text(dir + "/long.parquet");
    uint32_t length = 0;
    std::memcpy(&length, bytes.data() + bytes.size() - 8, 4);  // the footer: metadata, its length, "PAR1"
    char& first = bytes[bytes.size() - 8 - length];
    first = static_cast<char>(first ^ 0xFF);
    write(dir, "flipped.parquet", bytes);
    CHECK_THROWS_WITH(parquet({{"files", dir + "/flipped.parquet"}}),
                      Catch::Contains("flipped.parquet: the file is damaged or truncated"));
  }
  CHECK_THROWS_WITH(parquet({{"files", dir + "/bad.parquet"}, {"columns", "v"}}),
                    Catch::Contains("bad.parquet: row 3: column \"v\": non-numeric value \"abc\""));
  CHECK_THROWS_WITH(parquet({{"files", dir + "/make.py"}}), Catch::Contains("make.py: neither Parquet nor Arrow IPC"));
  CHECK_THROWS_WITH(parquet({{"files", dir + "/long.parquet"}, {"layout", "wide"}}),
                    Catch::Contains("long.parquet: row 2: column \"timestamp\": the time 2024-01-01 00:00:00 repeats row 1"));
}
