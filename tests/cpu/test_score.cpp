// The methodology score (tuner/compare/score.*): the closed-form random-search baseline, the time range, random
// search scoring 0 and an oracle 1 on a synthetic space, external runs (traces.*) read and scored as ours, and
// compare-strategies --score time on shipped recordings.
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
#include "tuner/compare/traces.hpp"
#include "tuner/core/error.hpp"
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

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/autotune_traces_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

/// A run line with X = first, first + step, ... (count values).
std::string run_line(const std::string& strategy, int run, int first, int step, int count) {
  std::string configs;
  for (int k = 0; k < count; ++k)
    configs += std::string(k ? "," : "") + "{\"X\": " + std::to_string(first + k * step) + "}";
  return R"({"kernel": "line", "device": "dev", "strategy": ")" + strategy + R"(", "run": )" + std::to_string(run) +
         R"(, "configs": [)" + configs + "]}\n";
}

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

TEST_CASE("traces: external runs are read, mapped onto the space and scored as our runs", "[cpu][compare][score]") {
  Line line(50);
  const std::string path =
      write_temp("runs.jsonl", run_line("ext:oracle", 0, 1, 1, 5) + "\n" + run_line("ext:worst", 0, 50, -1, 50) +
                                   run_line("ext:worst", 1, 50, -1, 50));
  const std::vector<compare::ExternalRun> runs = compare::read_traces(path);
  REQUIRE(runs.size() == 3);
  CHECK(runs[1].run == 0);
  CHECK(runs[1].configs.size() == 50);
  CHECK(runs[0].configs[0].at("X") == "1");

  const auto orders = compare::trace_orders(runs, *line.space, "line", "n=4096", "dev", "/some/where/rec.db");
  REQUIRE(orders.size() == 2);
  CHECK(orders[0].first == "ext:oracle");
  CHECK(orders[1].second.size() == 2);
  CHECK(compare::trace_orders(runs, *line.space, "line", "n=4096", "other device", "").empty());

  compare::CompareOptions opt;
  opt.strategies = {"brute_force"};
  opt.strategy_options["brute_force"]["order"] = "enumeration";  // the oracle's order
  opt.repeats = 3;
  compare::ScoreSettings settings;
  settings.strategy_time = false;
  settings.resolution = 50;
  compare::SpaceScore s = compare::score_space(*line.space, line.rec, opt, settings, "line");
  for (const auto& [name, o] : orders) compare::score_orders(s, line.rec, name, o);
  REQUIRE(s.strategies.size() == 4);
  const compare::StrategyScore& ours = s.strategies[1];
  const compare::StrategyScore& oracle = s.strategies[2];
  const compare::StrategyScore& worst = s.strategies[3];
  CHECK(oracle.score == Approx(ours.score));  // the same order scores the same
  CHECK(oracle.score == Approx(1.0));
  CHECK(oracle.runs == 1);
  CHECK(worst.score < 0);
  CHECK(worst.runs == 2);
  CHECK(worst.evaluations == Approx(ours.evaluations));  // the same clock: one evaluation per second
  CHECK_THROWS_AS(compare::score_orders(s, line.rec, "none", {}), UsageError);

  // A repeat costs nothing and adds no evaluation; the replay ends at the first evaluation past the limit.
  compare::TimedReplay timed;
  timed.limit_s = 2.5;
  const std::vector<double> trace = compare::replay_order(line.rec, {4, 4, 2, 0, 1, 3}, timed);
  CHECK(trace == std::vector<double>{5, 3, 1});
  CHECK(timed.end_s == std::vector<double>{1, 2, 3});

  const std::string bad = write_temp("bad.jsonl", run_line("ext", 0, 49, 1, 3));  // X = 51 is not in the space
  CHECK_THROWS_WITH(compare::trace_orders(compare::read_traces(bad), *line.space, "line", "", "dev", ""),
                    Catch::Contains("X=51") && Catch::Contains("not in the valid space"));
  CHECK_THROWS_WITH(compare::read_traces(write_temp("json.jsonl", "{\"kernel\": \"line\"\n")),
                    Catch::Contains("line 1: not JSON"));
  CHECK_THROWS_WITH(compare::read_traces(write_temp("field.jsonl", R"({"kernel": "line", "device": "dev"})"
                                                                   "\n")),
                    Catch::Contains("no \"strategy\""));
  for (const char* f : {"runs.jsonl", "bad.jsonl", "json.jsonl", "field.jsonl"})
    std::remove(("/tmp/autotune_traces_" + std::to_string(::getpid()) + "_" + f).c_str());
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
