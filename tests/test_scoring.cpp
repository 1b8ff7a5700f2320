#include <catch2/catch.hpp>

#include <cmath>

#include "orrery/host/csv.h"
#include "orrery/error.h"
#include "orrery/host/scoring.h"



// A vector worked by hand with GluonTS's formulas (MASE of the median against the in-sample
// seasonal-naive error; CRPS as the mean weighted quantile loss), as GIFT-Eval scores them.
TEST_CASE("MASE and CRPS match the hand-worked GIFT-Eval vector") {
  std::vector<double> levels = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  auto fan = [&](std::vector<double> median, double c) {
    std::vector<std::vector<double>> q;
    for (double l : levels) {
      std::vector<double> row;
      for (double m : median) row.push_back(m + (l - 0.5) * c);
      q.push_back(row);
    }
    return q;
  };
  orrery::ScoreAccumulator acc(levels);
  acc.add({10, 12, 14, 11, 13, 15}, 3, {12, 14, 16}, fan({13, 13, 17}, 4));
  acc.add({100, 90, 110, 95, 105, 100, 98}, 3, {101, 97, 120}, fan({100, 100, 100}, 20));
  CHECK(acc.mase() == Approx(0.9848484848).epsilon(1e-9));
  CHECK(acc.crps() == Approx(0.0652469136).epsilon(1e-8));
  const double wql[] = {0.0254444444, 0.0428888889, 0.0545555556, 0.0660000000, 0.0750000000,
                        0.0815555556, 0.0856666667, 0.0828888889, 0.0732222222};
  for (size_t i = 0; i < levels.size(); ++i) CHECK(acc.weighted_quantile_loss(i) == Approx(wql[i]).margin(1e-6));
  CHECK(acc.coverage(0) == 0.0);
  CHECK(acc.coverage(4) == Approx(0.5).margin(1e-9));
  CHECK(acc.coverage(8) == Approx(0.833333).margin(1e-6));
  CHECK(acc.mae_coverage() == Approx(0.0703703704).margin(1e-6));
  CHECK(acc.band_coverage(0.1, 0.9) == Approx(0.833333).margin(1e-6));
  CHECK(orrery::seasonal_error({100, 90, 110, 95, 105, 100, 98}, 3) == Approx(8.25));
}

TEST_CASE("normal quantiles") {
  CHECK(orrery::normal_quantile(0.5) == Approx(0.0).margin(1e-12));
  CHECK(orrery::normal_quantile(0.9) == Approx(1.2815515655446004).epsilon(1e-12));
  CHECK(orrery::normal_quantile(0.01) == Approx(-2.3263478740408408).epsilon(1e-12));
}

TEST_CASE("seasonal naive repeats the last season with widening normal intervals") {
  std::vector<double> h = {1, 2, 3, 2, 3, 4};  // residuals y_t - y_{t-3} = 1, 1, 1
  auto q = orrery::seasonal_naive_quantiles(h, 3, 4, {0.1, 0.5, 0.9});
  CHECK(q[1] == std::vector<double>{2, 3, 4, 2});
  const double z = orrery::normal_quantile(0.9);
  CHECK(q[2][0] == Approx(2 + z * 1.0));
  CHECK(q[2][3] == Approx(2 + z * std::sqrt(2.0)));  // second season ahead
  CHECK(q[0][0] == Approx(2 - z));
}

TEST_CASE("the bundled CSV files read back with their lengths") {
  auto t = orrery::read_csv(std::string(ORRERY_SOURCE_DIR) + "/assets/data/air_passengers.csv");
  CHECK(t.names == std::vector<std::string>{"time", "value"});
  CHECK(t.column("value").size() == 144);
  CHECK(t.column("value")[0] == 112);
  CHECK_THROWS_WITH(t.column("nope"), Catch::Contains("no column \"nope\" (columns: time, value)"));
  CHECK_THROWS_WITH(orrery::read_csv("/nonexistent.csv"), Catch::Contains("cannot open /nonexistent.csv"));
}
