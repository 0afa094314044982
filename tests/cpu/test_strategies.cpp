// Search strategies on synthetic functions: validity, determinism, failures, tiny spaces, exhaustion,
// and search quality against random sampling on a constrained separable bowl.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "search/base.hpp"
#include "search/marginal.hpp"
#include "search/strategy.hpp"
#include "strategy_support.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/expr/expr.hpp"

using namespace autotune;
using namespace autotune::search;
using namespace autotune_test::strategies;


TEST_CASE("list_strategies names every strategy with documented options", "[cpu][search]") {
  const std::vector<std::string> expected = {"brute_force",        "random_sample",          "simulated_annealing",
                                             "genetic_algorithm",  "particle_swarm",         "differential_evolution",
                                             "greedy_local_search", "iterated_local_search", "basin_hopping",
                                             "bayesian_optimization", "broad_then_local"};
  std::vector<std::string> names = all_names();
  CHECK(std::set<std::string>(names.begin(), names.end()) ==
        std::set<std::string>(expected.begin(), expected.end()));
  CHECK(names.size() == expected.size());
  const ParameterSpace space = make_space({make_param("X", range(4))}, {});
  for (const auto& info : list_strategies()) {
    CHECK_FALSE(info.description.empty());
    Options defaults;
    for (const auto& o : info.options) {
      CHECK_FALSE(o.description.empty());
      defaults[o.name] = o.default_value;
    }
    // Every default parses, given explicitly.
    auto s = make_strategy(info.name, space, 1, defaults);
    CHECK(s->name() == info.name);
  }
}

TEST_CASE("make_strategy rejects unknown names, options and bad values", "[cpu][search]") {
  const ParameterSpace space = make_space({make_param("X", range(4))}, {});
  try {
    make_strategy("hill_climbing", space, 1);
    FAIL("expected UsageError");
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("hill_climbing") != std::string::npos);
    CHECK(msg.find("greedy_local_search") != std::string::npos);  // lists valid names
  }
  try {
    make_strategy("genetic_algorithm", space, 1, {{"populaton", "10"}});
    FAIL("expected UsageError");
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("populaton") != std::string::npos);
    CHECK(msg.find("population") != std::string::npos);
  }
  CHECK_THROWS_AS(make_strategy("brute_force", space, 1, {{"x", "1"}}), UsageError);
  CHECK_THROWS_AS(make_strategy("genetic_algorithm", space, 1, {{"population", "ten"}}), UsageError);
  CHECK_THROWS_AS(make_strategy("genetic_algorithm", space, 1, {{"population", "1"}}), UsageError);
  CHECK_THROWS_AS(make_strategy("genetic_algorithm", space, 1, {{"population", "12x"}}), UsageError);
  CHECK_THROWS_AS(make_strategy("genetic_algorithm", space, 1, {{"mutation_rate", "1.5"}}), UsageError);
  CHECK_THROWS_AS(make_strategy("genetic_algorithm", space, 1, {{"crossover", "three_point"}}), UsageError);
  CHECK_THROWS_AS(make_strategy("simulated_annealing", space, 1, {{"cooling", "nan"}}), UsageError);
  CHECK_THROWS_AS(make_strategy("simulated_annealing", space, 1, {{"cooling", ""}}), UsageError);
  CHECK_NOTHROW(make_strategy("simulated_annealing", space, 1, {{"cooling", "0.9"}, {"neighbourhood", "adjacent"}}));
  CHECK_NOTHROW(make_strategy("genetic_algorithm", space, 1, {{"population", "8"}, {"crossover", "two_point"}}));
}

TEST_CASE("repair finds the nearest valid config", "[cpu][search]") {
  const ParameterSpace factorised = make_bowl_space(SpaceLayout::factorised);
  REQUIRE(factorised.factorised());
  const bool use_factorised = GENERATE(false, true);
  const ParameterSpace& space = use_factorised ? factorised : bowl_space();
  INFO("factorised: " << use_factorised);
  detail::NearestValid nearest(space);
  detail::Rng rng(5);
  const auto& params = space.params();
  auto dist = [&](std::size_t i, const std::vector<double>& t) {
    double s = 0;
    for (std::size_t j = 0; j < t.size(); ++j) {
      const double top = static_cast<double>(params[j].values.size() - 1);
      const double v = std::min(std::max(t[j], 0.0), top);
      s += (space.indices(i)[j] - v) * (space.indices(i)[j] - v) / (top * top);
    }
    return s;
  };
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<double> t;
    for (const Param& p : params) t.push_back(rng.uniform(-1.0, static_cast<double>(p.values.size())));
    const std::size_t got = nearest(t, rng);
    REQUIRE(got < space.size());
    double best = kInf;
    for (std::size_t i = 0; i < space.size(); ++i) best = std::min(best, dist(i, t));
    CHECK(dist(got, t) == Approx(best).margin(1e-12));
  }
  // A valid point maps to itself.
  for (std::size_t i = 0; i < space.size(); i += 97) {
    const auto& idx = space.indices(i);
    CHECK(nearest(std::vector<double>(idx.begin(), idx.end()), rng) == i);
  }
}

TEST_CASE("observations outside the space are rejected", "[cpu][search]") {
  const ParameterSpace space = make_space({make_param("X", range(4))}, {});
  auto s = make_strategy("random_sample", space, 1);
  CHECK_THROWS_AS(s->observe({{4, 1.0}}), UsageError);
}

TEST_CASE("every strategy proposes only valid, unseen configs and is deterministic", "[cpu][search]") {
  const ParameterSpace& space = bowl_space();
  REQUIRE(space.size() > 2000);
  REQUIRE(space.size() < 8000);
  const Objective f = [&](std::size_t i) { return bowl(space, i); };
  for (const std::string& name : all_names()) {
    for (std::size_t batch : {std::size_t{1}, std::size_t{5}}) {
      INFO(name << " batch " << batch);
      auto a = make_strategy(name, space, 42, test_options(name));
      auto b = make_strategy(name, space, 42, test_options(name));
      const RunResult ra = drive(*a, space, f, 120, batch);
      const RunResult rb = drive(*b, space, f, 120, batch);
      CHECK(ra.order.size() == 120);
      CHECK(ra.order == rb.order);
      CHECK(std::set<std::size_t>(ra.order.begin(), ra.order.end()).size() == ra.order.size());
      if (name != "brute_force") {
        auto c = make_strategy(name, space, 43, test_options(name));
        CHECK(drive(*c, space, f, 120, batch).order != ra.order);
      }
    }
  }
}

TEST_CASE("every strategy works on a factorised space", "[cpu][search]") {
  const ParameterSpace space = make_bowl_space(SpaceLayout::factorised);
  REQUIRE(space.factorised());
  REQUIRE(space.size() == bowl_space().size());
  const Objective f = [&](std::size_t i) { return bowl(space, i); };
  for (const std::string& name : all_names()) {
    INFO(name);
    auto s = make_strategy(name, space, 5, test_options(name));
    const RunResult r = drive(*s, space, f, 300, 4);
    CHECK(r.order.size() == 300);
    CHECK(std::set<std::size_t>(r.order.begin(), r.order.end()).size() == r.order.size());
    for (std::size_t i : r.order) CHECK(space.is_valid(space.config(i)));
  }
  // Every config exactly once, then nothing.
  for (const char* name : {"brute_force", "random_sample", "broad_then_local"}) {
    auto s = make_strategy(name, space, 9, limited_options(name, {}));
    const RunResult r = drive(*s, space, f, 100000, 32);
    CHECK(r.exhausted);
    CHECK(std::set<std::size_t>(r.order.begin(), r.order.end()).size() == space.size());
  }
}

TEST_CASE("brute_force follows the space order", "[cpu][search]") {
  const ParameterSpace space = make_space({make_param("X", range(5)), make_param("Y", range(4))}, {"X + Y < 6"});
  auto s = make_strategy("brute_force", space, 7);
  const RunResult r = drive(*s, space, [](std::size_t i) { return 1.0 + i; }, 1000, 3);
  REQUIRE(r.order.size() == space.size());
  for (std::size_t i = 0; i < r.order.size(); ++i) CHECK(r.order[i] == i);
  CHECK(r.exhausted);
}

TEST_CASE("strategies exhaust small spaces and then propose nothing", "[cpu][search]") {
  const ParameterSpace space = make_space({make_param("X", range(4)), make_param("Y", {1, 2, 4, 8, 16}),
                                           make_param("Z", range(3))},
                                          {"X * Y <= 24", "Z != 1 || X < 3"});
  REQUIRE(space.size() > 20);
  const Objective f = [&](std::size_t i) { return 1.0 + static_cast<double>((i * 7) % 13); };
  for (const std::string& name : all_names()) {
    for (std::size_t batch : {std::size_t{1}, std::size_t{4}}) {
      INFO(name << " batch " << batch);
      auto s = make_strategy(name, space, 3, test_options(name));
      const RunResult r = drive(*s, space, f, 100000, batch);
      CHECK(r.exhausted);
      CHECK(r.order.size() == space.size());
      CHECK(std::set<std::size_t>(r.order.begin(), r.order.end()).size() == space.size());
      CHECK(r.calls < 4 * space.size() + 10);
      CHECK(s->propose(batch).empty());
      CHECK(r.best == optimum(space, f));
    }
  }
}

TEST_CASE("failures are worst, and an all-failing space is still exhausted", "[cpu][search]") {
  const ParameterSpace space = make_space({make_param("X", range(6)), make_param("Y", range(6)),
                                           make_param("Z", range(2))},
                                          {"X + Y <= 8"});
  const Objective all_fail = [](std::size_t) { return kInf; };
  const Objective some_fail = [&](std::size_t i) {
    const auto& idx = space.indices(i);
    if ((idx[0] + idx[1]) % 3 == 0) return kInf;
    return 1.0 + std::abs(static_cast<double>(idx[0]) - 4) + std::abs(static_cast<double>(idx[1]) - 2) + idx[2];
  };
  const Objective nan_fail = [&](std::size_t i) {
    return i % 2 ? std::numeric_limits<double>::quiet_NaN() : 1.0 + static_cast<double>(i % 5);
  };
  for (const std::string& name : all_names()) {
    INFO(name);
    auto a = make_strategy(name, space, 5, test_options(name));
    const RunResult ra = drive(*a, space, all_fail, 100000, 2);
    CHECK(ra.exhausted);
    CHECK(ra.order.size() == space.size());

    auto b = make_strategy(name, space, 5, test_options(name));
    const RunResult rb = drive(*b, space, some_fail, space.size() / 2);
    CHECK(std::isfinite(rb.best));

    auto c = make_strategy(name, space, 5, test_options(name));
    const RunResult rc = drive(*c, space, nan_fail, 100000);
    CHECK(rc.exhausted);
    CHECK(rc.best == 1.0);
  }
}

TEST_CASE("strategies handle tiny spaces", "[cpu][search]") {
  const ParameterSpace one = make_space({make_param("X", {32})}, {});
  const ParameterSpace empty = make_space({make_param("X", range(3))}, {"X > 5"});
  const ParameterSpace line = make_space({make_param("X", range(17))}, {"X % 4 != 3"});
  REQUIRE(one.size() == 1);
  REQUIRE(empty.size() == 0);
  const Objective line_f = [&](std::size_t i) {
    return 1.0 + std::abs(static_cast<double>(line.indices(i)[0]) - 9.0);
  };
  for (const std::string& name : all_names()) {
    INFO(name);
    auto s1 = make_strategy(name, one, 1, test_options(name));
    const std::vector<std::size_t> p = s1->propose(4);
    REQUIRE(p == std::vector<std::size_t>{0});
    s1->observe({{0, 2.0}});
    CHECK(s1->propose(1).empty());

    auto s0 = make_strategy(name, empty, 1, test_options(name));
    CHECK(s0->propose(3).empty());

    auto sl = make_strategy(name, line, 1, test_options(name));
    const RunResult r = drive(*sl, line, line_f, 1000);
    CHECK(r.exhausted);
    CHECK(r.order.size() == line.size());
    CHECK(r.best == 1.0);
  }
}

TEST_CASE("lost results do not stall a strategy", "[cpu][search]") {
  const ParameterSpace space = make_space({make_param("X", range(7)), make_param("Y", range(5))}, {"X != Y"});
  for (const std::string& name : all_names()) {
    INFO(name);
    auto s = make_strategy(name, space, 9, test_options(name));
    std::set<std::size_t> seen;
    for (int round = 0; round < 1000 && seen.size() < space.size(); ++round) {
      const std::vector<std::size_t> p = s->propose(3);
      REQUIRE_FALSE(p.empty());
      // Only the first proposal of every batch gets a result; the rest are lost.
      s->observe({{p[0], 1.0 + static_cast<double>(p[0] % 11)}});
      seen.insert(p[0]);
    }
    CHECK(seen.size() == space.size());
    CHECK(s->propose(3).empty());
  }
}

TEST_CASE("prior observations are reused without being proposed again", "[cpu][search]") {
  const ParameterSpace& space = bowl_space();
  const Objective f = [&](std::size_t i) { return bowl(space, i); };
  for (const std::string& name : all_names()) {
    INFO(name);
    auto s = make_strategy(name, space, 11, test_options(name));
    std::vector<Observation> prior;
    for (std::size_t i = 0; i < space.size(); i += 7) prior.push_back({i, f(i)});
    s->observe(prior);
    const RunResult r = drive(*s, space, f, 100);
    for (std::size_t i : r.order) CHECK(i % 7 != 0);
  }
}

TEST_CASE("search quality on a constrained rugged bowl", "[cpu][search]") {
  const ParameterSpace& space = bowl_space();
  // The bowl times a deterministic +-15% roughness per config, so there are many local minima.
  const Objective f = [&](std::size_t i) {
    return bowl(space, i) * (1.0 + 0.3 * static_cast<double>(mix(i + 99) % 1000) / 1000.0);
  };
  const double best = optimum(space, f);
  const std::size_t n = space.size();
  const std::size_t seeds = 5;

  // Within 5% of the optimum in the median over seeds, with 10% of the space as budget.
  for (const std::string& name : all_names()) {
    if (name == "brute_force" || name == "random_sample") continue;
    std::vector<double> ratios;
    for (std::size_t seed = 0; seed < seeds; ++seed) {
      auto s = make_strategy(name, space, 1000 + seed, test_options(name));
      ratios.push_back(drive(*s, space, f, n / 10).best / best);
    }
    INFO(name << " median best/optimum at 10% budget: " << median(ratios));
    CHECK(median(ratios) <= 1.05);
  }

  // At least one strategy beats random sampling on average with 5% and 10% budgets.
  auto mean_best = [&](const std::string& name, std::size_t budget) {
    double sum = 0;
    for (std::size_t seed = 0; seed < seeds; ++seed) {
      auto s = make_strategy(name, space, 2000 + seed, test_options(name));
      sum += drive(*s, space, f, budget).best / best;
    }
    return sum / seeds;
  };
  for (std::size_t percent : {std::size_t{5}, std::size_t{10}}) {
    const std::size_t budget = n * percent / 100;
    const double random = mean_best("random_sample", budget);
    double winner = kInf;
    std::string winner_name;
    for (const char* name : {"greedy_local_search", "iterated_local_search", "genetic_algorithm",
                             "differential_evolution", "particle_swarm"}) {
      const double m = mean_best(name, budget);
      if (m < winner) {
        winner = m;
        winner_name = name;
      }
    }
    INFO("budget " << percent << "%: random " << random << ", best " << winner_name << " " << winner);
    CHECK(winner < random);
  }
}

TEST_CASE("deceptive landscape with failures", "[cpu][search]") {
  const ParameterSpace space = make_space({make_param("A", range(6)), make_param("B", range(6)),
                                           make_param("C", range(5)), make_param("D", range(4))},
                                          {"A * B <= 20"});
  const Objective f = [&](std::size_t i) { return deceptive(space, i); };
  for (const std::string& name : all_names()) {
    INFO(name);
    auto s = make_strategy(name, space, 77, test_options(name));
    const RunResult r = drive(*s, space, f, space.size() / 5, 2);
    CHECK(r.order.size() == space.size() / 5);
    CHECK(std::isfinite(r.best));
  }
}


TEST_CASE("covering order: a permutation whose first round holds every value of every parameter", "[cpu][search]") {
  // Z = 3 is never valid, so the valid space has 4 + 5 + 3 pairs.
  const ParameterSpace constrained = make_space(
      {make_param("X", range(4)), make_param("Y", {1, 2, 4, 8, 16}), make_param("Z", range(4))},
      {"X * Y <= 24", "Z != 1 || X < 3", "Z != 3"});
  for (const ParameterSpace* space : {&bowl_space(), &constrained}) {
    const auto all = pairs_of(*space, [&] {
      std::vector<std::size_t> v(space->size());
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = i;
      return v;
    }(), space->size());
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      detail::Rng rng(seed);
      const detail::CoveringOrder c = detail::covering_order(*space, rng);
      REQUIRE(c.order.size() == space->size());
      CHECK(std::set<std::size_t>(c.order.begin(), c.order.end()).size() == space->size());
      CHECK(*std::max_element(c.order.begin(), c.order.end()) == space->size() - 1);
      REQUIRE_FALSE(c.round_ends.empty());
      CHECK(c.round_ends.back() == space->size());
      CHECK(std::is_sorted(c.round_ends.begin(), c.round_ends.end()));
      CHECK(c.round_ends.front() <= value_count_sum(*space));
      CHECK(pairs_of(*space, c.order, c.round_ends.front()) == all);
      // The second round covers every pair that still has unvisited configs after the first.
      REQUIRE(c.round_ends.size() > 1);
      const std::vector<std::size_t> rest(c.order.begin() + c.round_ends[0], c.order.end());
      CHECK(pairs_of(*space, rest, c.round_ends[1] - c.round_ends[0]) == pairs_of(*space, rest, rest.size()));
    }
  }
  CHECK(constrained.size() > 20);
  detail::Rng a(7), b(7), c(8);
  CHECK(detail::covering_order(bowl_space(), a).order == detail::covering_order(bowl_space(), b).order);
  CHECK(detail::covering_order(bowl_space(), a).order != detail::covering_order(bowl_space(), c).order);
  const ParameterSpace empty = make_space({make_param("X", range(3))}, {"X > 5"});
  detail::Rng r(1);
  CHECK(detail::covering_order(empty, r).order.empty());
}

TEST_CASE("brute_force order=covering visits every config once, every value first", "[cpu][search]") {
  const ParameterSpace& space = bowl_space();
  const Objective f = [&](std::size_t i) { return bowl(space, i); };
  const std::size_t first_round = value_count_sum(space);
  std::vector<std::size_t> previous;
  for (std::uint64_t seed : {5u, 6u}) {
    for (std::size_t batch : {std::size_t{1}, std::size_t{32}}) {
      INFO("seed " << seed << " batch " << batch);
      auto s = make_strategy("brute_force", space, seed, {{"order", "covering"}});
      // upcoming() names what propose() hands out next.
      const std::vector<std::size_t> ahead = s->upcoming(batch);
      const std::vector<std::size_t> order = proposals(*s, space, f, batch);
      REQUIRE(order.size() == space.size());
      CHECK(std::vector<std::size_t>(order.begin(), order.begin() + ahead.size()) == ahead);
      CHECK(std::set<std::size_t>(order.begin(), order.end()).size() == space.size());
      CHECK(pairs_of(space, order, first_round).size() == first_round);  // every value of A..E, no value invalid
      auto again = make_strategy("brute_force", space, seed, {{"order", "covering"}});
      CHECK(proposals(*again, space, f, batch) == order);
      if (batch == 1) {
        CHECK(order != previous);  // another seed, another order
        previous = order;
      }
    }
  }
  auto plain = make_strategy("brute_force", space, 5, {{"order", "enumeration"}});
  CHECK(proposals(*plain, space, f, 8)[1] == 1);
  CHECK_THROWS_AS(make_strategy("brute_force", space, 1, {{"order", "random"}}), UsageError);
}

TEST_CASE("limited_options: covering brute force unless the order is given", "[cpu][search]") {
  CHECK(limited_options("brute_force", {}) == Options{{"order", "covering"}});
  CHECK(limited_options("brute_force", {{"order", "enumeration"}}) == Options{{"order", "enumeration"}});
  const Options ga{{"population", "8"}};
  CHECK(limited_options("genetic_algorithm", ga) == ga);
  CHECK(limited_options("broad_then_local", {}).empty());
  const ParameterSpace space = make_space({make_param("X", range(4))}, {});
  for (const auto& info : list_strategies()) CHECK_NOTHROW(make_strategy(info.name, space, 1, limited_options(info.name, {})));
  CHECK(std::string(kLimitedDefaultStrategy) == "broad_then_local");
}

TEST_CASE("warm-start points are proposed first, once, and local searches climb from the best", "[cpu][search]") {
  const ParameterSpace& space = bowl_space();
  const Objective f = [&](std::size_t i) { return bowl(space, i); };
  // Best first as given, but the third one is the best when measured here; 17 repeats, out of range ignored.
  const std::vector<std::size_t> given = {17, 400, 1234, 17, space.size(), 2500};
  const std::vector<std::size_t> warm = {17, 400, 1234, 2500};
  std::size_t best_warm = warm.front();
  for (std::size_t i : warm)
    if (f(i) < f(best_warm)) best_warm = i;
  for (const std::string& name : all_names()) {
    for (std::size_t batch : {std::size_t{1}, std::size_t{8}}) {
      INFO(name << " batch " << batch);
      auto s = make_strategy(name, space, 3, test_options(name));
      s->warm_start(given);
      const RunResult r = drive(*s, space, f, 60, batch);
      REQUIRE(r.order.size() == 60);
      CHECK(std::vector<std::size_t>(r.order.begin(), r.order.begin() + 4) == warm);
      CHECK(std::set<std::size_t>(r.order.begin(), r.order.end()).size() == r.order.size());
      if (batch == 1 && (name == "greedy_local_search" || name == "iterated_local_search")) {
        const std::vector<std::size_t> nb = space.neighbours(best_warm);
        CHECK(std::find(nb.begin(), nb.end(), r.order[4]) != nb.end());
      }
    }
  }
  // A config observed before is not proposed again; prior knowledge and warm starts mix.
  auto s = make_strategy("random_sample", space, 3);
  s->observe({{400, f(400)}});
  s->warm_start(warm);
  CHECK(s->propose(3) == std::vector<std::size_t>{17, 1234, 2500});
}

namespace {

/// Exposes StrategyBase's warm-start helpers.
class WarmProbe final : public detail::StrategyBase {
 public:
  explicit WarmProbe(const ParameterSpace& space) : StrategyBase("probe", space, 1) {}
  std::vector<std::size_t> population(std::size_t k) { return initial_population(k); }
  std::size_t best_warm() const { return best_warm_point(); }

 protected:
  std::vector<std::size_t> step(std::size_t) override { return {}; }
};

}  // namespace

TEST_CASE("a first population holds the warm-start points, best observed first", "[cpu][search]") {
  const ParameterSpace space = make_space({make_param("X", range(6)), make_param("Y", range(5))}, {});
  WarmProbe probe(space);
  CHECK(probe.best_warm() == detail::kNone);
  CHECK(probe.population(4).size() == 4);  // without a warm start: random configs
  probe.warm_start({3, 7, 11, 20});
  CHECK(probe.best_warm() == 3);  // nothing measured yet: the first given
  probe.observe({{3, 5.0}, {7, kInf}, {11, 2.0}});  // 20 never ran
  CHECK(probe.best_warm() == 11);
  CHECK(probe.population(2) == std::vector<std::size_t>{11, 3});
  const std::vector<std::size_t> pop = probe.population(10);
  REQUIRE(pop.size() == 10);
  CHECK(std::vector<std::size_t>(pop.begin(), pop.begin() + 4) == std::vector<std::size_t>{11, 3, 7, 20});
  CHECK(std::set<std::size_t>(pop.begin(), pop.end()).size() == 10);
}
