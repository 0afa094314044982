#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>

#include "tuner/core/error.hpp"
#include "tuner/core/space.hpp"
#include "tuner/core/spec.hpp"

using namespace autotune;

namespace {
Param P(std::string name, std::vector<Value> values) {
  Param p;
  p.name = std::move(name);
  p.values = std::move(values);
  p.default_value = p.values.front();
  return p;
}
std::vector<Expr> C(std::initializer_list<const char*> cs) {
  std::vector<Expr> out;
  for (auto c : cs) out.push_back(Expr::parse(c));
  return out;
}
}  // namespace

TEST_CASE("space enumerates exactly the valid configurations", "[cpu][space]") {
  ParameterSpace s({P("A", {1, 2, 4, 8}), P("B", {1, 2, 4, 8}), P("C", {0, 1})},
                   C({"A * B <= 16", "C == 0 || A == 1"}), {});
  // brute-force count for comparison
  std::size_t expected = 0;
  for (int a : {1, 2, 4, 8})
    for (int b : {1, 2, 4, 8})
      for (int c : {0, 1})
        if (a * b <= 16 && (c == 0 || a == 1)) ++expected;
  CHECK(s.size() == expected);
  CHECK(s.cartesian_size() == 32);
  for (std::size_t i = 0; i < s.size(); ++i) {
    Config c = s.config(i);
    CHECK(c.at("A") * c.at("B") <= 16);
    CHECK((c.at("C") == 0 || c.at("A") == 1));
    CHECK(s.find(c) == static_cast<std::ptrdiff_t>(i));
    CHECK(s.is_valid(c));
  }
  Config bad({{"A", 8}, {"B", 8}, {"C", 0}});
  CHECK(s.find(bad) == -1);
  CHECK_FALSE(s.is_valid(bad));
}

TEST_CASE("constraints see fixed variables (problem and device)", "[cpu][space]") {
  ParameterSpace s({P("BLOCK", {64, 128, 256, 512, 1024, 2048})}, C({"BLOCK <= max_threads_per_block", "BLOCK <= n"}),
                   {{"max_threads_per_block", 1024}, {"n", 300}});
  CHECK(s.size() == 3);
}

TEST_CASE("a constraint on fixed variables alone can empty the space", "[cpu][space]") {
  ParameterSpace s({P("A", {1, 2})}, C({"n > 1000"}), {{"n", 10}});
  CHECK(s.empty());
  CHECK(s.default_index() == -1);
}

TEST_CASE("unknown names in constraints are errors naming them", "[cpu][space]") {
  CHECK_THROWS_WITH(ParameterSpace({P("A", {1, 2})}, C({"A < BLOCK_SZ"}), {}), Catch::Contains("BLOCK_SZ"));
}

TEST_CASE("pruning is done per depth, not on the Cartesian product", "[cpu][space]") {
  // 10 parameters of 10 values: 10^10 Cartesian; the first constraint leaves only A0 == 0, the rest is
  // constrained to a line. A filtered product would never finish.
  std::vector<Param> ps;
  std::vector<Value> vals{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<const char*> cons = {"A0 == 0", "A1 == A0", "A2 == A1", "A3 == A2", "A4 == A3",
                                   "A5 == A4", "A6 == A5", "A7 == A6", "A8 == A7", "A9 <= 9"};
  for (int i = 0; i < 10; ++i) ps.push_back(P("A" + std::to_string(i), vals));
  std::vector<Expr> es;
  for (auto c : cons) es.push_back(Expr::parse(c));
  ParameterSpace s(ps, es, {});
  CHECK(s.size() == 10);
  CHECK(s.cartesian_size() == Approx(1e10));
  CHECK(s.build_seconds() < 5.0);
}

TEST_CASE("neighbours and adjacent configurations are valid", "[cpu][space]") {
  ParameterSpace s({P("A", {1, 2, 4}), P("B", {1, 2, 4})}, C({"A * B <= 8"}), {});
  std::ptrdiff_t i = s.find(Config({{"A", 2}, {"B", 2}}));
  REQUIRE(i >= 0);
  auto nb = s.neighbours(static_cast<std::size_t>(i));
  CHECK(nb.size() == 4);  // A=1, A=4, B=1, B=4
  auto adj = s.adjacent(static_cast<std::size_t>(i));
  CHECK(adj.size() == 4);
  std::ptrdiff_t j = s.find(Config({{"A", 4}, {"B", 2}}));
  auto adj2 = s.adjacent(static_cast<std::size_t>(j));
  CHECK(adj2.size() == 2);  // A=2,B=2 and A=4,B=1 (A=4,B=4 invalid)
}

TEST_CASE("groups are the parameters connected by constraints", "[cpu][space]") {
  // A-B and B-C are tied (so A, B, C form one group), D-E another; F is free; n is a constant.
  ParameterSpace s({P("A", {1, 2, 4}), P("B", {1, 2, 4}), P("C", {0, 1}), P("D", {0, 1, 2}), P("E", {0, 1, 2}),
                    P("F", {7, 8})},
                   C({"A * B <= 4", "C == 0 || B == 1", "D + E <= 2", "n > 0", "D <= n"}), {{"n", 5}});
  REQUIRE(s.groups().size() == 3);
  CHECK(s.groups()[0].params == std::vector<std::size_t>{0, 1, 2});
  CHECK(s.groups()[1].params == std::vector<std::size_t>{3, 4});
  CHECK(s.groups()[2].params == std::vector<std::size_t>{5});
  CHECK(s.groups()[0].size == 9);  // (A,B) with A*B<=4: 6 pairs; C=1 only with B=1: +3
  CHECK(s.groups()[1].size == 6);
  CHECK(s.groups()[2].size == 2);
  CHECK(s.size() == 9 * 6 * 2);
  CHECK_FALSE(s.factorised());  // small: stored flat
}

namespace {
/// The same constraints stored flat and factorised.
std::pair<ParameterSpace, ParameterSpace> both_layouts() {
  std::vector<Param> ps{P("A", {1, 2, 4, 8}), P("B", {0, 1, 2}), P("C", {1, 2, 4, 8}), P("D", {0, 1}),
                        P("E", {3, 5, 7})};
  auto cs = C({"A * C <= 16", "B + D <= 2", "E != 5 || D == 0"});
  return {ParameterSpace(ps, cs, {}, SpaceLayout::flat), ParameterSpace(ps, cs, {}, SpaceLayout::factorised)};
}
}  // namespace

TEST_CASE("a factorised space holds the same configs, with exact index round trips", "[cpu][space]") {
  auto [flat, fact] = both_layouts();
  REQUIRE(fact.factorised());
  REQUIRE_FALSE(flat.factorised());
  REQUIRE(fact.groups().size() == 2);  // {A, C} and {B, D, E}
  CHECK(fact.size() == fact.groups()[0].size * fact.groups()[1].size);
  REQUIRE(flat.size() == fact.size());
  // Independent count over the Cartesian product.
  std::size_t expected = 0;
  for (int a : {1, 2, 4, 8})
    for (int b : {0, 1, 2})
      for (int c : {1, 2, 4, 8})
        for (int d : {0, 1})
          for (int e : {3, 5, 7}) expected += a * c <= 16 && b + d <= 2 && (e != 5 || d == 0);
  CHECK(fact.size() == expected);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < fact.size(); ++i) {
    const Config c = fact.config(i);
    CHECK(fact.is_valid(c));
    CHECK(fact.find(c) == static_cast<std::ptrdiff_t>(i));
    CHECK(fact.find_indices(fact.indices(i)) == static_cast<std::ptrdiff_t>(i));
    for (std::size_t p = 0; p < fact.params().size(); ++p) CHECK(fact.value_at(i, p) == fact.indices(i)[p]);
    CHECK(flat.find(c) >= 0);
    seen.insert(c.str());
  }
  CHECK(seen.size() == fact.size());
  CHECK(fact.find(Config({{"A", 8}, {"B", 0}, {"C", 4}, {"D", 0}, {"E", 3}})) == -1);
  CHECK(fact.default_index() == fact.find(Config({{"A", 1}, {"B", 0}, {"C", 1}, {"D", 0}, {"E", 3}})));
}

TEST_CASE("neighbours of a factorised space match the flat space's", "[cpu][space]") {
  auto [flat, fact] = both_layouts();
  auto as_configs = [](const ParameterSpace& s, const std::vector<std::size_t>& v) {
    std::set<std::string> out;
    for (std::size_t i : v) out.insert(s.config(i).str());
    return out;
  };
  for (std::size_t i = 0; i < fact.size(); ++i) {
    const auto j = static_cast<std::size_t>(flat.find(fact.config(i)));
    const auto nb = fact.neighbours(i);
    CHECK(as_configs(fact, nb) == as_configs(flat, flat.neighbours(j)));
    CHECK(nb.size() == flat.neighbours(j).size());
    CHECK(as_configs(fact, fact.adjacent(i)) == as_configs(flat, flat.adjacent(j)));
  }
}

TEST_CASE("a uniform index is a uniform configuration of a factorised space", "[cpu][space]") {
  auto [flat, fact] = both_layouts();
  (void)flat;
  // Index -> config is a bijection onto the valid configs (checked above), so uniform indices sample the
  // valid configs uniformly: count draws per config and compare with the expected count (5 sigma).
  std::mt19937_64 rng(3);
  const std::size_t draws = 200 * fact.size();
  std::map<std::string, std::size_t> counts;
  for (std::size_t k = 0; k < draws; ++k) ++counts[fact.config(rng() % fact.size()).str()];
  CHECK(counts.size() == fact.size());
  for (const auto& [cfg, n] : counts) CHECK(std::abs(static_cast<double>(n) - 200.0) < 5 * std::sqrt(200.0));
}

namespace {
/// Valid configs of tests/data/specs/gemm_like.tune.json for the device the spec is built for below, counted
/// natively over the 10^8 Cartesian product (independent of the expression evaluator and the enumeration).
std::size_t gemm_like_count(std::int64_t max_threads, std::int64_t max_shared) {
  const int wg[] = {16, 32, 48, 64, 80, 96, 112, 128, 192, 256};
  const int kwg[] = {8, 16, 24, 32, 40, 48, 56, 64, 96, 128};
  const int dim[] = {4, 8, 12, 16, 20, 24, 28, 32, 48, 64};
  const int vw[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16};
  std::size_t count = 0;
  for (int m : wg)
    for (int n : wg)
      for (int k : kwg)
        for (int md : dim)
          for (int nd : dim) {
            if (md * nd > max_threads || md * nd < 64 || (m * k) % (md * nd) != 0) continue;
            for (int vm : vw) {
              if (m % (md * vm) != 0) continue;
              for (int vn : vw) {
                if (n % (nd * vn) != 0) continue;
                for (int st = 1; st <= 10; ++st) count += (m + n) * k * st * 4 <= max_shared;
              }
            }
          }
  return count;
}

ParameterSpace spec_space(const std::string& file, SpaceLayout layout = SpaceLayout::automatic) {
  const TuningSpec s = TuningSpec::from_file(std::string(AUTOTUNE_TEST_DATA_DIR) + "/specs/" + file);
  Bindings fixed{{"max_threads_per_block", 1024}, {"max_shared_memory_per_block", 49152}, {"n", 512}};
  return ParameterSpace(s.params, s.constraints, fixed, layout);
}
}  // namespace

TEST_CASE("the GEMM-like specs: 10^8 and 10^10 Cartesian configurations", "[cpu][space]") {
  const std::size_t expected = gemm_like_count(1024, 49152);
  const ParameterSpace s8 = spec_space("gemm_like.tune.json");
  CHECK(s8.cartesian_size() == Approx(1e8));
  CHECK(s8.size() == expected);
  REQUIRE(s8.groups().size() == 1);
  CHECK_FALSE(s8.factorised());

  const ParameterSpace s10 = spec_space("gemm_like_wide.tune.json");
  CHECK(s10.cartesian_size() == Approx(1e10));
  REQUIRE(s10.groups().size() == 2);  // the GEMM parameters, and SA + SB <= 9
  CHECK(s10.groups()[0].size == expected);
  CHECK(s10.groups()[1].size == 55);
  CHECK(s10.size() == expected * 55);
  CHECK(s10.factorised());
  // Round trips at both ends and in between, without the product being stored.
  for (std::size_t i : {std::size_t{0}, s10.size() / 3, s10.size() / 2 + 17, s10.size() - 1}) {
    const Config c = s10.config(i);
    CHECK(s10.is_valid(c));
    CHECK(s10.find(c) == static_cast<std::ptrdiff_t>(i));
    for (std::size_t j : s10.neighbours(i)) CHECK(s10.is_valid(s10.config(j)));
  }
  CHECK(s10.default_index() >= 0);
}
