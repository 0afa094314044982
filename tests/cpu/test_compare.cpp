// The strategy benchmark (tuner/compare/compare.*) and its CLI command compare-strategies: budgets, mapping
// a recording onto the space, the simulated run (revisits are free, failures are +inf), statistics on a
// synthetic space with a known optimum, and every strategy on the shipped H200 recordings.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "search/strategy.hpp"
#include "test_support.hpp"
#include "tests/cli_support.hpp"
#include "tuner/core/error.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/compare/compare.hpp"
#include "tuner/session/session.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;
using compare::BudgetSpec;

namespace {

using autotune_test::Run;
using autotune_test::run_cli;

const double kInf = std::numeric_limits<double>::infinity();

TuningSpec bowl_spec() {
  return TuningSpec::from_json_text(R"J({
    "name": "bowl", "family": "synthetic", "source": "none.cu", "kernels": ["k"],
    "parameters": [{"name": "A", "values": [1, 2, 4, 8, 16, 32], "default": 2},
                   {"name": "B", "values": [1, 2, 4, 8, 16], "default": 1},
                   {"name": "C", "values": [0, 1, 2], "default": 0}],
    "constraints": ["A * B <= 128"],
    "problem": {"dims": ["n"], "sizes": [{"n": 4096}]}, "workloads": ["float32"]})J",
                                    ".", false);
}

/// Known optimum at A=8, B=2, C=1 (1000 ns); A=32 always fails.
double bowl_time(const Config& c) {
  double a = std::log2(static_cast<double>(c.at("A"))) - 3, b = std::log2(static_cast<double>(c.at("B"))) - 1;
  double cc = static_cast<double>(c.at("C")) - 1;
  return 1000.0 * (1 + 0.05 * a * a + 0.08 * b * b + 0.03 * cc * cc);
}

/// A space, its recording in a database, and the recording mapped onto the space.
struct Bowl {
  TuningSpec spec = bowl_spec();
  Workload w = spec.workloads.front();
  ProblemKey p = spec.problem_sizes.front();
  std::unique_ptr<db::Database> db = db::Database::open(":memory:");
  std::unique_ptr<ParameterSpace> space;
  Bowl() {
    sim::SyntheticBackend be(sim::SyntheticBackend::fake_device(), bowl_time);
    be.inject_failure_when("A", 32, TrialStatus::launch_error);
    session::run(spec, be, *db, w, p, {});
    space = std::make_unique<ParameterSpace>(spec.space(p, sim::SyntheticBackend::fake_device(), w));
  }
  std::vector<db::TrialRow> rows() const {
    db::TrialFilter f;
    f.kernel = spec.name;
    return db->trials(f);
  }
};

/// Proposes a fixed script of index lists, recording what it was told.
class Scripted : public search::Strategy {
 public:
  explicit Scripted(std::vector<std::vector<std::size_t>> script) : script_(std::move(script)) {}
  std::string name() const override { return "scripted"; }
  std::vector<std::size_t> propose(std::size_t) override {
    return step_ < script_.size() ? script_[step_++] : std::vector<std::size_t>{};
  }
  void observe(const std::vector<search::Observation>& r) override { told.insert(told.end(), r.begin(), r.end()); }
  std::vector<search::Observation> told;

 private:
  std::vector<std::vector<std::size_t>> script_;
  std::size_t step_ = 0;
};

/// A warm start of indices only (measured first, as given).
search::WarmStartHint as_given(const std::vector<std::size_t>& indices) {
  search::WarmStartHint h;
  h.indices = indices;
  return h;
}

std::string recorded_db() { return autotune_test::data_dir() + "/recorded_h200.db"; }

/// Runs the CLI with `args` and checks that it stops with a usage error (exit code 2) saying `text`.
void check_usage_error(const std::string& args, const std::string& text) {
  Run r = run_cli(args);
  INFO(args << "\n" << r.out);
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains(text));
}

}  // namespace

TEST_CASE("budgets: counts and percentages of the space", "[cpu][compare]") {
  auto b = compare::parse_budgets("10, 20,5%,2.5%");
  REQUIRE(b.size() == 4);
  CHECK(b[0].resolve(1000) == 10);
  CHECK_FALSE(b[0].percent);
  CHECK(b[2].percent);
  CHECK(b[2].resolve(2436) == 122);  // 121.8 rounds to 122
  CHECK(b[3].resolve(2436) == 61);   // 60.9
  CHECK(b[2].str() == "5%");
  CHECK(b[1].str() == "20");
  CHECK(BudgetSpec{1, true}.resolve(90) == 1);   // 0.9 rounds to 1
  CHECK(BudgetSpec{1, true}.resolve(10) == 1);   // 0.1: at least one evaluation
  CHECK(BudgetSpec{500, false}.resolve(90) == 90);  // capped at the space
  CHECK(BudgetSpec{100, true}.resolve(90) == 90);
  CHECK(compare::parse_budgets("10,").size() == 1);
  for (const char* bad : {"", "0", "-5", "abc", "1.5", "150%", "10,,20", "5%%", "%"})
    CHECK_THROWS_AS(compare::parse_budgets(bad), UsageError);
  CHECK_THROWS_WITH(compare::parse_budgets("10,x"), Catch::Contains("'x'"));
}

TEST_CASE("a recording maps onto the valid space, gaps and strangers are errors naming them", "[cpu][compare]") {
  Bowl bowl;
  auto rows = bowl.rows();
  REQUIRE(rows.size() == bowl.space->size());
  compare::RecordedSpace rec = compare::map_recording(*bowl.space, rows);
  CHECK(rec.optimum == Approx(1000.0));
  CHECK(bowl.space->config(rec.optimum_index) == Config({{"A", 8}, {"B", 2}, {"C", 1}}));
  CHECK(rec.failures == 3 * 3);  // A=32 with B in {1, 2, 4}, C in {0, 1, 2}
  for (std::size_t i = 0; i < bowl.space->size(); ++i)
    CHECK((bowl.space->config(i).at("A") == 32) == std::isinf(rec.values[i]));

  // A valid config without a recorded row.
  auto missing = rows;
  std::string gone = missing.back().config_json;
  missing.pop_back();
  CHECK_THROWS_WITH(compare::map_recording(*bowl.space, missing), Catch::Contains(gone) && Catch::Contains("no recorded trial"));

  // A recorded config outside the valid space; an "invalid" one (never run) is ignored instead.
  auto stranger = rows;
  stranger.push_back(rows.front());
  stranger.back().config_json = Config({{"A", 32}, {"B", 16}, {"C", 0}}).to_json();
  CHECK_THROWS_WITH(compare::map_recording(*bowl.space, stranger),
                    Catch::Contains("{\"A\":32,\"B\":16,\"C\":0}") && Catch::Contains("not in the valid space"));
  stranger.back().m.status = TrialStatus::invalid;
  CHECK(compare::map_recording(*bowl.space, stranger).ignored == 1);
}

TEST_CASE("load_recording reads one kernel, device and problem from a database", "[cpu][compare]") {
  Bowl bowl;
  compare::Recording r = compare::load_recording(*bowl.db, bowl.spec, bowl.w, bowl.p);
  CHECK(r.device.info.name == "Synthetic GPU");
  CHECK(r.space->size() == bowl.space->size());
  CHECK(r.recorded.optimum == Approx(1000.0));
  CHECK(r.note.empty());
  CHECK(r.source_hash == bowl.spec.source_hash());
  CHECK_THROWS_WITH(compare::load_recording(*bowl.db, bowl.spec, bowl.w, bowl.p, "Other GPU"),
                    Catch::Contains("Synthetic GPU"));
  CHECK_THROWS_WITH(compare::load_recording(*bowl.db, bowl.spec, bowl.w, ProblemKey::parse("n=5")),
                    Catch::Contains("no recorded trials"));
  TuningSpec other = bowl.spec;
  other.name = "nothing";
  CHECK_THROWS_AS(compare::load_recording(*bowl.db, other, bowl.w, bowl.p), UsageError);
  // A changed kernel source: the old recording is still used, with a note.
  TuningSpec changed = bowl.spec;
  changed.source_text = "// new";
  CHECK_FALSE(compare::load_recording(*bowl.db, changed, bowl.w, bowl.p).note.empty());
}

TEST_CASE("simulated runs: revisits are free, failures are +inf, brute force follows the enumeration",
          "[cpu][compare]") {
  Bowl bowl;
  compare::RecordedSpace rec = compare::map_recording(*bowl.space, bowl.rows());
  const auto& v = rec.values;

  Scripted s({{0}, {0}, {0, 1}, {1}, {1, 0}, {2}, {3}});
  auto trace = compare::simulate_run(*bowl.space, rec, s, 3);
  REQUIRE(trace.size() == 3);  // 0, 1, 2 evaluated; the four revisits cost nothing
  CHECK(trace[0] == v[0]);
  CHECK(trace[2] == std::min({v[0], v[1], v[2]}));
  // Revisits were answered with the recorded value.
  std::size_t zeros = 0;
  for (const auto& o : s.told) zeros += o.index == 0 ? 1 : 0;
  CHECK(zeros == 4);

  auto bf = compare::simulate_run(*bowl.space, rec, "brute_force", {}, 1, bowl.space->size());
  REQUIRE(bf.size() == bowl.space->size());
  double best = kInf;
  for (std::size_t i = 0; i < bf.size(); ++i) {
    best = std::min(best, v[i]);
    CHECK(bf[i] == best);
  }
  // The strategy runs dry at the size of the space.
  CHECK(compare::simulate_run(*bowl.space, rec, "random_sample", {}, 1, 10 * bowl.space->size()).size() ==
        bowl.space->size());
  // Deterministic per seed; batches keep the budget.
  CHECK(compare::simulate_run(*bowl.space, rec, "genetic_algorithm", {}, 7, 40) ==
        compare::simulate_run(*bowl.space, rec, "genetic_algorithm", {}, 7, 40));
  CHECK(compare::simulate_run(*bowl.space, rec, "greedy_local_search", {}, 7, 25, 8).size() == 25);
  CHECK_THROWS_AS(compare::simulate_run(*bowl.space, rec, "no_such_strategy", {}, 1, 5), UsageError);
}

TEST_CASE("compare on a synthetic space with a known optimum", "[cpu][compare]") {
  Bowl bowl;
  compare::RecordedSpace rec = compare::map_recording(*bowl.space, bowl.rows());
  const std::size_t n = bowl.space->size();
  compare::CompareOptions opt;
  opt.strategies = {"brute_force", "greedy_local_search", "bayesian_optimization"};
  opt.strategy_options["brute_force"] = {{"order", "enumeration"}};  // compare's default is the covering order
  opt.budgets = compare::parse_budgets("1,20%,100%");
  opt.repeats = 8;
  std::vector<std::string> done;
  opt.on_strategy_done = [&](const std::string& s, double) { done.push_back(s); };
  compare::CompareResult r = compare::compare_strategies(*bowl.space, rec, opt);
  CHECK(r.space_size == n);
  CHECK(r.optimum_ns == Approx(1000.0));
  REQUIRE(r.budgets == std::vector<std::size_t>{1, static_cast<std::size_t>(std::lround(0.2 * n)), n});
  REQUIRE(r.rows.size() == 4 * 3);
  CHECK(done == std::vector<std::string>{"random_sample", "brute_force", "greedy_local_search", "bayesian_optimization"});
  CHECK(r.rows.front().strategy == "random_sample");  // the baseline comes first
  for (const auto& row : r.rows) {
    CHECK(row.repeats == 8);
    CHECK(row.p10 <= row.median);
    CHECK(row.median <= row.p90);
    CHECK(row.p90 <= 1.0);
    CHECK(row.found <= row.within);
    if (row.budget == n) {  // the whole space: everyone finds the optimum
      CHECK(row.median == 1.0);
      CHECK(row.within == 1.0);
      CHECK(row.found == 1.0);
      CHECK(row.mean_evaluations == Approx(static_cast<double>(n)));
    }
    if (row.strategy == "brute_force" && row.budget == 1) {  // index 0 every time: A=1, B=1, C=0
      double first = rec.values[0];
      CHECK(row.median == Approx(1000.0 / first));
      CHECK(row.p10 == row.p90);
    }
  }
  // Deterministic.
  opt.on_strategy_done = nullptr;
  compare::CompareResult again = compare::compare_strategies(*bowl.space, rec, opt);
  for (std::size_t i = 0; i < r.rows.size(); ++i) CHECK(again.rows[i].median == r.rows[i].median);

  // Output.
  std::string csv = compare::compare_csv(r, {{"kernel", "bowl"}});
  std::istringstream lines(csv);
  std::string header, line;
  std::getline(lines, header);
  CHECK(header.rfind("kernel,space_size,optimum_ns,strategy,budget,", 0) == 0);
  std::size_t count = 0;
  while (std::getline(lines, line)) {
    ++count;
    CHECK(line.rfind("bowl,", 0) == 0);
  }
  CHECK(count == r.rows.size());
  std::string table = compare::compare_table(r);
  CHECK_THAT(table, Catch::Contains("random_sample") && Catch::Contains("bayesian_optimization") &&
                        Catch::Contains("within 5%") && Catch::Contains("baseline"));
  CHECK_THAT(compare::compare_table(r, true), Catch::Contains("| strategy |") && Catch::Contains("(baseline)"));

  // Bad input.
  compare::CompareOptions bad = opt;
  bad.strategies = {"nope"};
  bad.strategy_options.clear();
  CHECK_THROWS_WITH(compare::compare_strategies(*bowl.space, rec, bad), Catch::Contains("nope"));
  bad = opt;
  bad.strategy_options["greedy_local_search"] = {{"improvement", "sideways"}};
  CHECK_THROWS_AS(compare::compare_strategies(*bowl.space, rec, bad), UsageError);
  bad = opt;
  bad.strategy_options["particle_swarm"] = {{"swarm", "10"}};  // not among the compared strategies
  CHECK_THROWS_WITH(compare::compare_strategies(*bowl.space, rec, bad), Catch::Contains("particle_swarm"));
  bad = opt;
  bad.repeats = 0;
  CHECK_THROWS_AS(compare::compare_strategies(*bowl.space, rec, bad), UsageError);
  bad = opt;
  bad.budgets.clear();
  CHECK_THROWS_AS(compare::compare_strategies(*bowl.space, rec, bad), UsageError);
}

namespace {
/// Splits one CSV line (no quoted fields).
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) out.push_back(cell);
  return out;
}
}  // namespace

TEST_CASE("compare: standard errors, thresholds, per-run rows and the comparison with random", "[cpu][compare]") {
  Bowl bowl;
  compare::RecordedSpace rec = compare::map_recording(*bowl.space, bowl.rows());
  compare::CompareOptions opt;
  opt.strategies = {"brute_force", "broad_then_local"};
  opt.strategy_options["brute_force"] = {{"order", "enumeration"}};  // index 0 first: a poor start
  opt.budgets = compare::parse_budgets("3,12");
  opt.repeats = 40;
  opt.within = 0.1;
  opt.keep_runs = true;
  compare::CompareResult r = compare::compare_strategies(*bowl.space, rec, opt);
  CHECK(r.thresholds == std::vector<double>{0.01, 0.02, 0.05, 0.1});
  REQUIRE(r.rows.size() == 3 * 2);
  REQUIRE(r.runs.size() == 3 * 2 * 40);
  REQUIRE(r.decisions.size() == 3);
  for (const auto& d : r.decisions) {
    CHECK(d.steps > 0);
    CHECK(d.mean_us > 0);
    CHECK(d.mean_us <= d.max_us);
    CHECK(d.p99_us <= d.max_us);
  }
  for (const auto& row : r.rows) {
    // The summary agrees with its runs: mean, standard error and shares recomputed from the per-run rows.
    std::vector<double> scores, bests;
    for (const auto& run : r.runs)
      if (run.strategy == row.strategy && run.budget == row.budget) {
        scores.push_back(run.score);
        bests.push_back(run.best_ns);
      }
    REQUIRE(scores.size() == 40);
    double mean = 0, var = 0;
    for (double v : scores) mean += v / 40;
    for (double v : scores) var += (v - mean) * (v - mean) / 39;
    CHECK(row.mean == Approx(mean));
    CHECK(row.mean_se == Approx(std::sqrt(var / 40)).margin(1e-12));
    REQUIRE(row.within_at.size() == 4);
    for (std::size_t t = 0; t < 4; ++t) {
      double k = 0;
      for (double b : bests) k += b <= (1 + r.thresholds[t]) * r.optimum_ns ? 1 : 0;
      CHECK(row.within_at[t] == Approx(k / 40));
      if (t > 0) CHECK(row.within_at[t] >= row.within_at[t - 1]);
    }
    CHECK(row.within == row.within_at[3]);
    CHECK(row.within_se == Approx(std::sqrt(row.within * (1 - row.within) / 40)));
    CHECK(row.found_se == Approx(std::sqrt(row.found * (1 - row.found) / 40)));
    if (row.strategy == "random_sample") CHECK(row.vs_random == 0);
  }
  // The enumeration-order brute force sees the same 3 configs every run (A=1, B=1): never within 10%, a clear loss
  // against random sampling, which gets there in some runs.
  const auto& base3 = r.rows[0];
  const auto& bf3 = r.rows[2];
  REQUIRE(bf3.strategy == "brute_force");
  REQUIRE(bf3.budget == 3);
  CHECK(bf3.within == 0.0);
  CHECK(bf3.within_se == 0.0);
  CHECK(bf3.mean_se == 0.0);
  if (base3.within >= 2 * base3.within_se && base3.within > 0) CHECK(bf3.vs_random == -1);

  // CSV: standard errors, every threshold, and the decision times.
  const std::string csv = compare::compare_csv(r, {{"kernel", "bowl"}});
  std::istringstream lines(csv);
  std::string header, line;
  std::getline(lines, header);
  const auto cols = csv_cells(header);
  auto col = [&](const std::string& name) {
    auto it = std::find(cols.begin(), cols.end(), name);
    REQUIRE(it != cols.end());
    return static_cast<std::size_t>(it - cols.begin());
  };
  for (const char* name : {"mean_se", "within_se", "found_optimum_se", "within_1pct", "within_2pct", "within_5pct",
                           "within_10pct", "vs_random", "decision_mean_us", "decision_max_us"})
    col(name);
  for (std::size_t k = 0; std::getline(lines, line); ++k) {
    const auto cells = csv_cells(line);
    REQUIRE(cells.size() == cols.size());
    CHECK(std::stod(cells[col("mean_se")]) == Approx(r.rows[k].mean_se).margin(1e-6));
    CHECK(std::stod(cells[col("within_se")]) == Approx(r.rows[k].within_se).margin(1e-4));
    CHECK(std::stoi(cells[col("vs_random")]) == r.rows[k].vs_random);
  }
  // Per-run CSV: one line per strategy, budget and seed.
  const std::string runs = compare::compare_runs_csv(r);
  CHECK(runs.rfind("strategy,budget,seed,best_ns,score,evaluations\n", 0) == 0);
  CHECK(static_cast<std::size_t>(std::count(runs.begin(), runs.end(), '\n')) == 1 + r.runs.size());
  // Table: the headline threshold, the thresholds' columns and the decision times.
  const std::string table = compare::compare_table(r);
  CHECK_THAT(table, Catch::Contains("within 10% +- se") && Catch::Contains("<1%") && Catch::Contains("<2%") &&
                        Catch::Contains("decision time per step"));
  CHECK_THAT(compare::compare_table(r, true), Catch::Contains("decision mean / p99 / max") && Catch::Contains("±"));
  opt.within = -0.1;
  CHECK_THROWS_AS(compare::compare_strategies(*bowl.space, rec, opt), UsageError);
}

TEST_CASE("every strategy runs in simulation on the shipped H200 recordings", "[cpu][compare]") {
  auto db = db::Database::open(recorded_db(), db::Database::Mode::read_only);
  const std::size_t n_strategies = search::list_strategies().size();

  SECTION("transpose: 90 configurations") {
    TuningSpec spec = specs::builtin_spec("transpose");
    compare::Recording rec =
        compare::load_recording(*db, spec, Workload::parse("float32"), ProblemKey::parse("rows=8192,cols=8192"));
    REQUIRE(rec.space->size() == 90);
    CHECK(rec.device.info.name == "NVIDIA H200");
    compare::CompareOptions opt;
    opt.budgets = compare::parse_budgets("5%,10%,100%");
    opt.repeats = 10;
    compare::CompareResult r = compare::compare_strategies(*rec.space, rec.recorded, opt);
    REQUIRE(r.rows.size() == n_strategies * 3);
    std::set<std::string> names;
    for (const auto& row : r.rows) {
      names.insert(row.strategy);
      CHECK(row.median > 0);
      CHECK(row.median <= 1.0);
      if (row.budget == 90) CHECK(row.found == 1.0);
    }
    CHECK(names.size() == n_strategies);
  }

  SECTION("reduction: 2436 configurations") {
    TuningSpec spec = specs::builtin_spec("reduction");
    compare::Recording rec =
        compare::load_recording(*db, spec, Workload::parse("float32/sum"), ProblemKey::parse("n=67108864"));
    REQUIRE(rec.space->size() == 2436);
    CHECK(rec.recorded.failures == 0);
    compare::CompareOptions opt;
    opt.budgets = compare::parse_budgets("1%,5%");
    opt.repeats = 4;
    compare::CompareResult r = compare::compare_strategies(*rec.space, rec.recorded, opt);
    REQUIRE(r.rows.size() == n_strategies * 2);
    for (const auto& row : r.rows) {
      CHECK(row.median > 0);
      CHECK(row.median <= 1.0);
      CHECK(row.mean_evaluations == Approx(static_cast<double>(row.budget)));
    }
  }
}

TEST_CASE("autotune compare-strategies: table, CSV and errors", "[cpu][compare][cli]") {
  const std::string csv = "/tmp/autotune_compare_test_" + std::to_string(::getpid()) + ".csv";
  Run r = run_cli("compare-strategies transpose --from " + recorded_db() +
                  " --rows 8192 --cols 8192 --budgets 10%,45 --repeats 3 --strategies greedy_local_search,"
                  "genetic_algorithm --strategy-option genetic_algorithm.population=10 --csv " + csv);
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("90 valid configurations") && Catch::Contains("budget 9 evaluations") &&
                        Catch::Contains("budget 45 evaluations") && Catch::Contains("random_sample") &&
                        Catch::Contains("CSV written"));
  std::ifstream in(csv);
  std::string line;
  std::size_t lines = 0;
  while (std::getline(in, line)) ++lines;
  CHECK(lines == 1 + 3 * 2);
  std::remove(csv.c_str());

  const std::string transpose = "compare-strategies transpose --from " + recorded_db();
  check_usage_error(transpose + " --rows 8192 --cols 8192 --budgets 0", "bad budget");
  check_usage_error(transpose + " --rows 8192 --cols 8192 --strategies warp_drive", "warp_drive");
  check_usage_error(transpose + " --rows 4000 --cols 4000", "no recorded trials");
}

namespace {

std::unique_ptr<compare::Recording> reduction_recording() {
  auto db = db::Database::open(recorded_db(), db::Database::Mode::read_only);
  return std::make_unique<compare::Recording>(compare::load_recording(
      *db, specs::builtin_spec("reduction"), Workload::parse("float32/sum"), ProblemKey::parse("n=67108864")));
}

const compare::CompareRow& row_of(const compare::CompareResult& r, const std::string& strategy, std::size_t budget) {
  for (const auto& row : r.rows)
    if (row.strategy == strategy && row.budget == budget) return row;
  FAIL("no row for " << strategy << " at " << budget);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("limited runs on the H200 reduction recording: covering brute force, broad_then_local", "[cpu][compare]") {
  auto rec = reduction_recording();
  const ParameterSpace& space = *rec->space;
  REQUIRE(space.size() == 2436);
  std::size_t first_round = 0;  // sum of the value counts: 8 variants + 5 + 4 + 3 + 8 + 2 + 2 = 32
  for (const Param& p : space.params()) first_round += p.values.size();
  REQUIRE(first_round == 32);
  const std::size_t variant = 0;
  REQUIRE(space.params()[variant].name == "VARIANT");

  SECTION("the limited brute force has seen every variant (every value) within 32 configurations") {
    for (std::uint64_t seed = 1; seed <= 50; ++seed) {
      auto s = search::make_strategy("brute_force", space, seed, search::limited_options("brute_force", {}));
      const std::vector<std::size_t> first = s->propose(first_round);
      REQUIRE(first.size() == first_round);
      std::set<std::pair<std::size_t, std::size_t>> pairs;
      std::set<std::size_t> variants;
      for (std::size_t i : first) {
        variants.insert(space.indices(i)[variant]);
        for (std::size_t j = 0; j < space.params().size(); ++j) pairs.insert({j, space.indices(i)[j]});
      }
      CHECK(variants.size() == 8);
      CHECK(pairs.size() == first_round);
    }
    // The enumeration order, by contrast, is still in the lecture variants (0-5), far from the grid-stride ones.
    auto plain = search::make_strategy("brute_force", space, 1);
    std::set<std::size_t> variants;
    for (std::size_t i : plain->propose(first_round)) variants.insert(space.indices(i)[variant]);
    CHECK(*variants.rbegin() < 6);
  }

  SECTION("compare-strategies uses the covering brute force unless told otherwise") {
    compare::CompareOptions opt;
    opt.strategies = {"brute_force"};
    opt.budgets = {BudgetSpec{32, false}};
    opt.repeats = 20;
    const compare::CompareResult covering = compare::compare_strategies(space, rec->recorded, opt);
    opt.strategy_options["brute_force"] = {{"order", "enumeration"}};
    const compare::CompareResult enumeration = compare::compare_strategies(space, rec->recorded, opt);
    const auto& c = row_of(covering, "brute_force", 32);
    const auto& e = row_of(enumeration, "brute_force", 32);
    INFO("covering " << c.median << ", enumeration " << e.median);
    CHECK(e.p10 == e.p90);  // the same configs in every run
    CHECK(c.p10 < c.p90);   // seeded orders
    CHECK(c.median > 0.9);  // every variant seen, grid-stride ones included
    CHECK(e.median < 0.5);  // only the slowest lecture variant
  }

  SECTION("broad_then_local beats random sampling and the covering brute force at 5% and 10%") {
    compare::CompareOptions opt;
    opt.strategies = {"brute_force", "broad_then_local"};
    opt.budgets = compare::parse_budgets("5%,10%");
    opt.repeats = 200;
    const compare::CompareResult r = compare::compare_strategies(space, rec->recorded, opt);
    for (std::size_t budget : r.budgets) {
      const auto& btl = row_of(r, "broad_then_local", budget);
      const auto& random = row_of(r, "random_sample", budget);
      const auto& brute = row_of(r, "brute_force", budget);
      INFO("budget " << budget << ": mean score broad_then_local " << btl.mean << ", random_sample " << random.mean
                     << ", brute_force " << brute.mean << "; optimum found " << btl.found << " / " << random.found
                     << " / " << brute.found);
      CHECK(btl.mean > random.mean);
      CHECK(btl.mean > brute.mean);
      CHECK(btl.found > random.found + 0.2);
      CHECK(btl.found > brute.found + 0.2);
    }
  }
}

TEST_CASE("warm starts from another recorded problem", "[cpu][compare]") {
  Bowl bowl;
  // A second problem whose optimum moved to A=16 (the first problem's optimum A=8 is second best there).
  const ProblemKey other = ProblemKey::parse("n=8192");
  sim::SyntheticBackend be(sim::SyntheticBackend::fake_device(), [](const Config& c) {
    const double a = std::log2(static_cast<double>(c.at("A"))) - 3.9;
    const double b = std::log2(static_cast<double>(c.at("B"))) - 1, cc = static_cast<double>(c.at("C")) - 1;
    return 500.0 * (1 + 0.05 * a * a + 0.08 * b * b + 0.1 * cc * cc);
  });
  session::run(bowl.spec, be, *bowl.db, bowl.w, other, {});
  compare::Recording rec = compare::load_recording(*bowl.db, bowl.spec, bowl.w, bowl.p);
  CHECK(rec.problem == bowl.p.key());

  compare::RecordedWarmStart ws = compare::load_warm_start(*bowl.db, rec, bowl.spec, bowl.w, other);
  CHECK(ws.problem == "n=8192");
  REQUIRE(ws.indices.size() == 5);
  CHECK(ws.skipped == 0);
  CHECK(std::is_sorted(ws.source_ns.begin(), ws.source_ns.end()));
  CHECK(rec.space->config(ws.indices[0]) == Config({{"A", 16}, {"B", 2}, {"C", 1}}));
  CHECK(rec.space->config(ws.indices[1]) == Config({{"A", 8}, {"B", 2}, {"C", 1}}));  // the optimum here
  CHECK(compare::load_warm_start(*bowl.db, rec, bowl.spec, bowl.w, other, 2).indices.size() == 2);
  CHECK_THROWS_WITH(compare::load_warm_start(*bowl.db, rec, bowl.spec, bowl.w, bowl.p),
                    Catch::Contains("another problem"));
  CHECK_THROWS_WITH(compare::load_warm_start(*bowl.db, rec, bowl.spec, bowl.w, ProblemKey::parse("n=5")),
                    Catch::Contains("no successful recorded trials"));

  // The hint a session would get: the five as indices, the times of every configuration recorded at n=8192 (all
  // ran there and all are valid here), the distance |log2(4096 / 8192)|.
  CHECK(ws.hint.indices == ws.indices);
  CHECK(ws.hint.source_values.size() == rec.space->size());
  CHECK(ws.hint.distance == Approx(1.0));
  CHECK(ws.hint.source == "n=8192");
  // Every strategy evaluates the warm points first when they come without source values: the second evaluation is
  // the optimum.
  const auto& v = rec.recorded.values;
  for (const auto& info : search::list_strategies()) {
    INFO(info.name);
    auto trace = compare::simulate_run(*rec.space, rec.recorded, info.name, {}, 4, 6, 1, as_given(ws.indices));
    REQUIRE(trace.size() == 6);
    CHECK(trace[0] == v[ws.indices[0]]);
    CHECK(trace[1] == rec.recorded.optimum);
    auto batched = compare::simulate_run(*rec.space, rec.recorded, info.name, {}, 4, 2, 8, as_given(ws.indices));
    CHECK(batched.back() == rec.recorded.optimum);
  }
  compare::CompareOptions opt;
  opt.strategies = {"brute_force", "broad_then_local", "greedy_local_search"};
  opt.budgets = {BudgetSpec{1, false}, BudgetSpec{2, false}};
  opt.repeats = 5;
  opt.warm_start = as_given(ws.indices);
  const compare::CompareResult r = compare::compare_strategies(*rec.space, rec.recorded, opt);
  for (const auto& row : r.rows) {
    INFO(row.strategy << " at " << row.budget);
    CHECK(row.median == Approx(row.budget == 1 ? rec.recorded.optimum / v[ws.indices[0]] : 1.0));
    CHECK(row.p10 == row.p90);
  }
}

TEST_CASE("autotune compare-strategies --warm-from-problem", "[cpu][compare][cli]") {
  // A copy of the shipped recording plus a second problem, n=16777216, whose times are those of n=67108864
  // with the best variant-7 configurations made the fastest.
  const std::string path = "/tmp/autotune_warm_test_" + std::to_string(::getpid()) + ".db";
  {
    std::ifstream in(recorded_db(), std::ios::binary);
    std::ofstream out(path, std::ios::binary);
    out << in.rdbuf();
  }
  {
    auto db = db::Database::open(path);
    db::TrialFilter f;
    f.kernel = "reduction";
    for (db::TrialRow t : db->trials(f)) {
      t.problem = "n=16777216";
      t.problem_elements = 16777216;
      t.m.median_ns /= 4;
      if (Config::from_json(t.config_json).at("VARIANT") == 7) t.m.median_ns /= 2;
      t.created_at.clear();
      db->insert_trial(t);
    }
  }
  Run r = run_cli("compare-strategies reduction --n 67108864 --from " + path +
                  " --budgets 1,5 --repeats 2 --strategies broad_then_local --warm-from-problem n=16777216");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("warm start: the 5 fastest configurations recorded for n=16777216") &&
                        Catch::Contains("VARIANT=warp_shuffle") && Catch::Contains("there,") &&
                        Catch::Contains("broad_then_local"));
  check_usage_error("compare-strategies reduction --n 67108864 --from " + path +
                        " --budgets 1 --repeats 1 --warm-from-problem n=67108864",
                    "another problem");
  check_usage_error("compare-strategies reduction --n 67108864 --from " + recorded_db() +
                        " --budgets 1 --repeats 1 --warm-from-problem n=1048576",
                    "no successful recorded trials");
  autotune_test::remove_db(path);
}

TEST_CASE("the shipped H100 recordings: every family at two sizes, warm starts across sizes", "[cpu][compare]") {
  // tests/data/recorded_h100.db: brute forces of the full spaces on an H100 (bench/time_to_best.sh, phase brute).
  struct Case {
    const char* kernel;
    const char* workload;
    const char* small;
    const char* large;
  };
  const Case cases[] = {
      {"reduction", "float32/sum", "n=16777216", "n=268435456"},
      {"scan", "float32/inclusive_sum", "n=16777216", "n=268435456"},
      {"compaction", "int32/flagged", "n=16777216,select_pct=50", "n=268435456,select_pct=50"},
      {"transpose", "float32", "cols=4096,rows=4096", "cols=8192,rows=8192"},
  };
  auto db = db::Database::open(autotune_test::data_dir() + "/recorded_h100.db", db::Database::Mode::read_only);
  for (const Case& c : cases) {
    const TuningSpec spec = specs::builtin_spec(c.kernel);
    const Workload w = Workload::parse(c.workload);
    for (int direction = 0; direction < 2; ++direction) {
      const ProblemKey target = ProblemKey::parse(direction == 0 ? c.large : c.small);
      const ProblemKey source = ProblemKey::parse(direction == 0 ? c.small : c.large);
      const compare::Recording rec = compare::load_recording(*db, spec, w, target);
      INFO(c.kernel << " " << target.key() << ", warm start from " << source.key());
      CHECK(rec.recorded.failures == 0);
      const ParameterSpace& space = *rec.space;

      // The limited brute force sees every value of every parameter, every variant included, in its first round.
      std::size_t first_round = 0;
      for (const Param& p : space.params()) first_round += p.values.size();
      auto s = search::make_strategy("brute_force", space, 7, search::limited_options("brute_force", {}));
      std::set<std::pair<std::size_t, std::size_t>> pairs;
      for (std::size_t i : s->propose(first_round))
        for (std::size_t j = 0; j < space.params().size(); ++j) pairs.insert({j, space.indices(i)[j]});
      std::size_t present = 0;  // (parameter, value) pairs that occur in the valid space at all
      for (std::size_t j = 0; j < space.params().size(); ++j) {
        std::set<std::size_t> values;
        for (std::size_t i = 0; i < space.size(); ++i) values.insert(space.indices(i)[j]);
        present += values.size();
      }
      CHECK(pairs.size() == present);

      // The default under a limit, warm-started from the other size with a budget of 5% of the space (batches of
      // 32 as in `tune`): within 5% of the optimum in at least 99% of 1000 seeded runs.
      const compare::RecordedWarmStart ws = compare::load_warm_start(*db, rec, spec, w, source);
      compare::CompareOptions opt;
      opt.strategies = {search::kLimitedDefaultStrategy};
      opt.budgets = compare::parse_budgets("5%");
      opt.repeats = 1000;
      opt.batch = 32;
      opt.warm_start = ws.hint;
      const compare::CompareResult r = compare::compare_strategies(space, rec.recorded, opt);
      const auto& row = row_of(r, search::kLimitedDefaultStrategy, r.budgets.front());
      INFO("within 5%: " << row.within << ", optimum found: " << row.found << ", budget " << row.budget);
      CHECK(row.within >= 0.99);
    }
  }
}
