// Tests of tuner/core/stats.cpp: the median, quantiles and the relative spread that timings, imports, reports and
// the strategy benchmark share.
#include "tuner/core/stats.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace autotune;

TEST_CASE("stats: median of odd and even counts, in any order", "[cpu][stats]") {
  CHECK(stats::median({}) == 0);
  CHECK(stats::median({4}) == 4);
  CHECK(stats::median({9, 1, 5}) == 5);
  CHECK(stats::median({9, 1, 5, 3}) == 4);  // the mean of the two middle values
  CHECK(stats::median_sorted({1, 3, 5, 9}) == 4);
  CHECK(stats::median({0.1, 0.7}) == (0.1 + 0.7) / 2);  // (a + b) / 2 to the last bit
  CHECK(stats::median_sorted({1e-3, 7.0}) == (1e-3 + 7.0) / 2);
}

TEST_CASE("stats: quantiles interpolate between closest ranks", "[cpu][stats]") {
  const std::vector<double> v = {10, 20, 30, 40, 50};
  CHECK(stats::quantile_sorted(v, 0) == 10);
  CHECK(stats::quantile_sorted(v, 1) == 50);
  CHECK(stats::quantile_sorted(v, 0.5) == 30);
  CHECK(stats::quantile_sorted(v, 0.1) == Approx(14));
  CHECK(stats::quantile_sorted(v, 0.9) == Approx(46));
  CHECK(stats::quantile_sorted(v, 2) == 50);  // clamped
  CHECK(stats::quantile_sorted({}, 0.5) == 0);
  CHECK(stats::quantile({50, 10, 40, 20, 30}, 0.25) == 20);
}

TEST_CASE("stats: relative spread is (p90 - p10) / p50", "[cpu][stats]") {
  CHECK(stats::relative_spread({}) == 0);
  CHECK(stats::relative_spread({3}) == 0);
  CHECK(stats::relative_spread({0, 0, 0}) == 0);
  CHECK(stats::relative_spread({50, 10, 40, 20, 30}) == Approx((46.0 - 14.0) / 30.0));
  CHECK(stats::relative_spread_sorted({1, 1, 1, 1}) == 0);
  CHECK(stats::relative_spread_sorted({1, 2}) == Approx((1.9 - 1.1) / 1.5));
}
