// The methodology score (tuner/compare/score.*): the closed-form random-search baseline, the time range, random
// search scoring 0 and an oracle 1 on a synthetic space, and compare-strategies --score time on shipped recordings.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "test_support.hpp"
#include "tests/cli_support.hpp"
#include "tuner/compare/score.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;

namespace {

/// N configurations X = 1..N of equal cost (1 s), each taking X ns: the expected best of k random draws is
/// (N + 1) / (k + 1).
struct Line {
  TuningSpec spec;
  std::unique_ptr<ParameterSpace> space;
  compare::RecordedSpace rec;
  explicit Line(int n) {
    std::string values;
    for (int x = 1; x <= n; ++x) values += (x > 1 ? "," : "") + std::to_string(x);
    spec = TuningSpec::from_json_text(R"J({"name": "line", "family": "synthetic", "source": "none.cu",
      "kernels": ["k"], "parameters": [{"name": "X", "values": [)J" +
                                          values + R"J(], "default": 1}],
      "problem": {"dims": ["n"], "sizes": [{"n": 4096}]}, "workloads": ["float32"]})J",
                                      ".", false);
    space = std::make_unique<ParameterSpace>(
        spec.space(spec.problem_sizes.front(), sim::SyntheticBackend::fake_device(), spec.workloads.front()));
    rec.optimum = 1;
    for (std::size_t i = 0; i < space->size(); ++i) {
      rec.values.push_back(static_cast<double>(space->config(i).at("X")));
      rec.cost_s.push_back(1.0);
      if (rec.values.back() == 1) rec.optimum_index = i;
    }
  }
};

}  // namespace

TEST_CASE("score: the expected best of k random draws in closed form", "[cpu][compare][score]") {
  std::vector<double> sorted;
  for (int x = 1; x <= 50; ++x) sorted.push_back(x);
  for (std::size_t k : {1, 2, 5, 16, 49, 50}) CHECK(compare::expected_random_best(sorted, k) == Approx(51.0 / (k + 1)));
  CHECK(compare::expected_random_best(sorted, 0) == Approx(25.5));   // clamped to 1
  CHECK(compare::expected_random_best(sorted, 500) == Approx(1.0));  // clamped to N
  CHECK(compare::expected_random_best({3, 3, 7}, 2) == Approx(3.0));
  CHECK_THROWS(compare::expected_random_best({}, 1));
}

TEST_CASE("score: the time range and the normalisation", "[cpu][compare][score]") {
  Line line(50);
  const compare::TimeBaseline b = compare::time_baseline(line.rec);
  CHECK(b.optimum == 1);
  CHECK(b.median == Approx(25.5));
  CHECK(b.eval_s == Approx(1.0));
  // 95%: target 1 + 24.5 x 0.05 = 2.225, 48 configurations worse: ceil(48 / 3) = 16 evaluations.
  CHECK(b.evals_end == 16);
  CHECK(b.evals_start == 1);  // 1%: target 25.255, 25 worse: ceil(25 / 26)
  CHECK(b.end_s == Approx(16.0));
  CHECK(compare::random_curve_at(b, 4.5) == Approx(51.0 / 5));
  CHECK(compare::normalised(b, 1, 10) == Approx(1.0));
  CHECK(compare::normalised(b, 10, 10) == Approx(0.0));
  CHECK(compare::normalised(b, 19, 10) == Approx(-1.0));
  CHECK(compare::normalised(b, std::numeric_limits<double>::infinity(), 10) ==
        Approx((25.5 - 10) / (1 - 10)));  // nothing yet: the mean

  compare::RecordedSpace untimed = line.rec;
  untimed.cost_s.assign(untimed.cost_s.size(), 0.0);
  CHECK_THROWS_WITH(compare::time_baseline(untimed), Catch::Contains("no tuning time"));
}

TEST_CASE("score: random search scores 0, an oracle 1", "[cpu][compare][score]") {
  Line line(50);
  compare::CompareOptions opt;
  opt.strategies = {"brute_force"};
  opt.strategy_options["brute_force"]["order"] = "enumeration";  // X = 1 first: the optimum at once
  opt.repeats = 2000;
  compare::ScoreSettings settings;
  settings.strategy_time = false;
  settings.resolution = 100;
  const compare::SpaceScore s = compare::score_space(*line.space, line.rec, opt, settings, "line");
  REQUIRE(s.strategies.size() == 2);
  const compare::StrategyScore& random = s.strategies[0];
  const compare::StrategyScore& oracle = s.strategies[1];
  CHECK(random.strategy == "random_sample");
  INFO("random " << random.score << " +- " << random.score_se);
  CHECK(random.score_se > 0);
  CHECK(std::fabs(random.score) < 4 * random.score_se);
  CHECK(random.evaluations == Approx(16.0));
  CHECK(oracle.strategy == "brute_force");
  CHECK(oracle.score == Approx(1.0));
  CHECK(oracle.score_se == Approx(0.0).margin(1e-12));

  const auto all = compare::aggregate_scores({s, s});
  REQUIRE(all.size() == 2);
  CHECK(all[1].score == Approx(1.0));
  CHECK(all[0].score_se == Approx(random.score_se / std::sqrt(2.0)));
  CHECK(all[0].spaces == 2);
  const std::string svg = compare::score_svg({s}, all);
  CHECK_THAT(svg, Catch::StartsWith("<svg") && Catch::Contains("random_sample"));
  CHECK_THAT(compare::score_csv({s}, all, false),
             Catch::Contains("line,brute_force,1,0,2000,") && Catch::Contains("all,brute_force,1,0,"));
}

TEST_CASE("autotune compare-strategies --score time on the shipped H100 recordings", "[cpu][compare][score][cli]") {
  const std::string dir = autotune_test::data_dir();
  const std::string base = "/tmp/autotune_score_test_" + std::to_string(::getpid());
  autotune_test::Run r = autotune_test::run_cli(
      "compare-strategies transpose --score time --from " + dir + "/recorded_h100.db --from " + dir +
      "/landscapes_h100.db --repeats 3 --resolution 50 --strategies greedy_local_search --csv " + base +
      ".csv --curve-csv " + base + "_curve.csv --plot " + base + ".svg");
  INFO(r.out);
  REQUIRE(r.code == 0);
  // transpose: two problems recorded in one, three in the other.
  CHECK_THAT(r.out, Catch::Contains("space 5: transpose") && Catch::Contains("methodology score") &&
                        Catch::Contains("greedy_local_search") && Catch::Contains("SVG curve written"));
  std::ifstream csv(base + ".csv");
  std::string line;
  std::size_t lines = 0;
  while (std::getline(csv, line)) ++lines;
  CHECK(lines == 1 + 5 * 2 + 2);
  std::ifstream curves(base + "_curve.csv");
  lines = 0;
  while (std::getline(curves, line)) ++lines;
  CHECK(lines == 1 + 5 * 2 * 50 + 2 * 50);
  std::ifstream svg(base + ".svg");
  std::stringstream ss;
  ss << svg.rdbuf();
  CHECK_THAT(ss.str(), Catch::StartsWith("<svg"));
  for (const char* ext : {".csv", "_curve.csv", ".svg"}) std::remove((base + ext).c_str());

  autotune_test::Run one = autotune_test::run_cli("compare-strategies reduction --score time --from " + dir +
                                                  "/landscapes_h100.db --n 262144 --repeats 2 --no-strategy-time "
                                                  "--strategies genetic_algorithm --markdown");
  INFO(one.out);
  CHECK(one.code == 0);
  CHECK_THAT(one.out, Catch::Contains("| genetic_algorithm |") && Catch::Contains("space 1: reduction"));

  autotune_test::Run twice = autotune_test::run_cli("compare-strategies transpose --from " + dir +
                                                    "/recorded_h100.db --from " + dir + "/landscapes_h100.db");
  CHECK(twice.code == 2);
  CHECK_THAT(twice.out, Catch::Contains("only with --score"));
}
